package schemas

import (
	"time"

	"github.com/gpuprice/gpuprice/schemas/textsafe"
)

// HostileObservations are the rows issue 29's sink tests feed a sink: Vast.ai
// on-demand H100 prices at `at`, one per string of textsafe.Hostile, each of the
// fields a host writes (SKU, region, zone, GPU name, the geolocation attribute)
// that string, the i-th priced 1 + i $/GPU-hour, and a source URL whose
// credentials a zero-width space hides from a naive redactor.
func HostileObservations(at time.Time) []Observation {
	rows := make([]Observation, 0, len(textsafe.Hostile))
	for i, h := range textsafe.Hostile {
		rows = append(rows, Observation{
			ObservedAt: at, EffectiveAt: at, Provider: "vast", Tier: "marketplace", SKU: h, Region: h, Zone: h,
			GPU: "H100-SXM-80GB", GPUName: h, GPUCount: 1, Pricing: OnDemand, PriceUSDHour: 1 + float64(i),
			PriceUSDGPUHour: 1 + float64(i), Currency: "USD", Unit: UnitHour, FXRate: 1, SourceKind: "api",
			SourceURL: "https://user:pa\u200bss@evil.example/api?api_key=SEC\u200bRET",
			Attrs:     map[string]string{"geolocation": h},
		})
	}
	return rows
}
