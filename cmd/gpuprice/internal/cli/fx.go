package cli

import (
	"time"
)

// fxSourceName is the config key (sources.fx) of the ECB reference rates: its
// endpoint and enabled flag work like a price source's.
const fxSourceName = "fx"

// fxLookback is how far back stored rates are read for converting prices.
const fxLookback = 120 * 24 * time.Hour
