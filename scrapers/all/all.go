// Package all registers every gpuprice source by importing it.
package all

import (
	_ "github.com/gpuprice/gpuprice/scrapers/azure"
	_ "github.com/gpuprice/gpuprice/scrapers/gcp"
	_ "github.com/gpuprice/gpuprice/scrapers/lambda"
	_ "github.com/gpuprice/gpuprice/scrapers/oci"
	_ "github.com/gpuprice/gpuprice/scrapers/vast"
)
