// Package all registers every gpuprice source by importing it. Adding a provider is a
// new package under scrapers/ (its facts, parser, tests and recorded responses), one
// import line here, and `go generate ./scrapers/all` for the README source table and
// the sample configuration.
package all

//go:generate go run ./gendocs ../../README.md ../../deploy/gpuprice.example.yaml

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
