// Package all registers every gpuprice source by importing it.
package all

import (
	_ "github.com/gpuprice/gpuprice/scrapers/aws"
	_ "github.com/gpuprice/gpuprice/scrapers/azure"
	_ "github.com/gpuprice/gpuprice/scrapers/coreweave"
	_ "github.com/gpuprice/gpuprice/scrapers/crusoe"
	_ "github.com/gpuprice/gpuprice/scrapers/gcp"
	_ "github.com/gpuprice/gpuprice/scrapers/gmi"
	_ "github.com/gpuprice/gpuprice/scrapers/lambda"
	_ "github.com/gpuprice/gpuprice/scrapers/oci"
	_ "github.com/gpuprice/gpuprice/scrapers/ovhcloud"
	_ "github.com/gpuprice/gpuprice/scrapers/runpod"
	_ "github.com/gpuprice/gpuprice/scrapers/together"
	_ "github.com/gpuprice/gpuprice/scrapers/vast"
)
