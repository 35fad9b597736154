package azure

import (
	"strings"

	"github.com/gpuprice/gpuprice/schemas"
)

// noiseWords are words of Azure product and meter names that say nothing about the GPU.
var noiseWords = map[string]bool{
	"standard": true, "virtual": true, "machines": true, "machine": true, "series": true, "srs": true,
	"linux": true, "windows": true, "spot": true, "low": true, "priority": true, "promo": true,
}

// naming is what the canonicaliser applies to Azure rows: ARM SKU, meter and product
// names, lower-cased with the noise words and separators removed
// ("Standard_ND96isr_H100_v5" → "nd96isrh100v5"), map to their GPU (Azure's
// N-series documentation).
var naming = schemas.Naming{
	Normalize: func(s string) string {
		var b strings.Builder
		for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
			return !((r >= 'a' && r <= 'z') || (r >= '0' && r <= '9'))
		}) {
			if !noiseWords[w] {
				b.WriteString(w)
			}
		}
		return b.String()
	},
	Rules: []schemas.SKURule{
		schemas.Rule(`^nd[0-9]*[a-z]*gb200v6$`, "GB200-SUPERCHIP-186GB"),
		schemas.Rule(`^nd[0-9]*[a-z]*h200v5$`, "H200-SXM-141GB"),
		schemas.Rule(`^nd[0-9]*[a-z]*h100v5$`, "H100-SXM-80GB"),
		schemas.Rule(`^ncc?[0-9]*[a-z]*h100v5$`, "H100-NVL-94GB"),
		schemas.Rule(`^nd[0-9]*[a-z]*mi300xv5$`, "MI300X-OAM-192GB"),
		schemas.Rule(`^nd[0-9]*amsr(a100)?v4$`, "A100-SXM-80GB"),
		schemas.Rule(`^nd[0-9]*asr(a100)?v4$`, "A100-SXM-40GB"),
		schemas.Rule(`^nc[0-9]*adsa100v4$`, "A100-PCIE-80GB"),
		schemas.Rule(`^nc[0-9]*ast4v3$`, "T4-PCIE-16GB"),
		schemas.Rule(`^nv[0-9]*adm?sa10v5$`, "A10-PCIE-24GB"),
		schemas.Rule(`^nc[0-9]*r?s?v3$`, "V100-PCIE-16GB"),
		schemas.Rule(`^nd[0-9]*r?s?v2$`, "V100-SXM-32GB"),
	},
}
