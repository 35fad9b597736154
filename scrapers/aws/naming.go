package aws

import (
	"regexp"
	"sort"
	"strings"

	"github.com/gpuprice/gpuprice/schemas"
)

// familyGPUs maps EC2 instance families to their catalog GPU (AWS accelerated-computing
// documentation), for the canonicaliser. UnknownGPU marks GPU families whose GPU the
// catalog lacks.
var familyGPUs = map[string]string{
	"p5":        "H100-SXM-80GB",
	"p5e":       "H200-SXM-141GB",
	"p5en":      "H200-SXM-141GB",
	"p4d":       "A100-SXM-40GB",
	"p4de":      "A100-SXM-80GB",
	"p6-b200":   "B200-SXM-180GB",
	"p6e-gb200": "GB200-SUPERCHIP-186GB",
	"g4dn":      "T4-PCIE-16GB",
	"g5":        "A10G-PCIE-24GB",
	"g6":        "L4-PCIE-24GB",
	"g6f":       "L4-PCIE-24GB",
	"gr6":       "L4-PCIE-24GB",
	"gr6f":      "L4-PCIE-24GB",
	"g6e":       "L40S-PCIE-48GB",
	"p3":        "V100-SXM-16GB",
	"p3dn":      "V100-SXM-32GB",
	"p2":        "K80-PCIE-12GB",
	"g3":        "M60-PCIE-8GB",
	"g3s":       "M60-PCIE-8GB",
	"g4ad":      schemas.UnknownGPU, // Radeon Pro V520
	"g5g":       "T4G-PCIE-16GB",
	"p6-b300":   "B300-SXM-288GB",
	"p6e-gb300": "GB300-SUPERCHIP-288GB",
	"g7e":       "RTXPRO6000SERVER-PCIE-96GB", // RTX PRO 6000 Blackwell Server Edition
}

var instanceTypeRE = regexp.MustCompile(
	`^([a-z][a-z0-9-]*)\.(?:[0-9]*x?large|metal(?:-[0-9]+xl)?|[0-9]+xlarge|medium|small|micro|nano)$`,
)

// naming is what the canonicaliser applies to AWS rows: an instance type ("p5.48xlarge",
// or "p5.48xlarge:all-upfront", as this source marks purchase options after a colon)
// names its family, and the family its GPU.
var naming = schemas.Naming{
	Interconnect: interconnect,
	Normalize: func(s string) string {
		s, _, _ = strings.Cut(s, ":")
		if m := instanceTypeRE.FindStringSubmatch(strings.ToLower(strings.TrimSpace(s))); m != nil {
			return m[1]
		}
		return ""
	},
	Rules: familyRules(),
}

func familyRules() []schemas.SKURule {
	fams := make([]string, 0, len(familyGPUs))
	for f := range familyGPUs {
		fams = append(fams, f)
	}
	sort.Strings(fams)
	out := make([]schemas.SKURule, 0, len(fams))
	for _, f := range fams {
		out = append(out, schemas.SKURule{
			Pattern: regexp.MustCompile("^" + regexp.QuoteMeta(f) + "$"),
			ID:      familyGPUs[f],
			Why:     "aws instance family " + f,
		})
	}
	return out
}
