package aws

import (
	"sort"
	"strings"

	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/gpuprice/gpuprice/schemas"
)

// family is what AWS documents about the GPUs of one EC2 instance family (the
// accelerated-computing instance type pages): the GPU, the memory of one GPU, the GPU
// count of each size, and the interconnect of its cluster sizes. Rows of the Price List
// take the count and memory from the product's own gpu and gpuMemory attributes; the
// table fills them for spot rows, whose records name only the instance type.
type family struct {
	gpu   string
	memGB float64 // of one GPU; 0 when AWS does not state it per GPU
	sizes map[string]float64
	efa   map[string]bool // sizes built for EFA clusters
}

// families are the GPU instance families. The GPU names carry the form factor AWS
// documents (SXM for the HGX boards of the P family) so the canonicaliser can place them.
var families = map[string]family{
	"p2":   {"NVIDIA K80", 12, map[string]float64{"xlarge": 1, "8xlarge": 8, "16xlarge": 16}, nil},
	"p3":   {"NVIDIA V100 SXM2", 16, map[string]float64{"2xlarge": 1, "8xlarge": 4, "16xlarge": 8}, nil},
	"p3dn": {"NVIDIA V100 SXM2", 32, map[string]float64{"24xlarge": 8}, map[string]bool{"24xlarge": true}},
	"p4d":  {"NVIDIA A100 SXM", 40, map[string]float64{"24xlarge": 8}, map[string]bool{"24xlarge": true}},
	"p4de": {"NVIDIA A100 SXM", 80, map[string]float64{"24xlarge": 8}, map[string]bool{"24xlarge": true}},
	"p5": {
		"NVIDIA H100 SXM",
		80,
		map[string]float64{"4xlarge": 1, "48xlarge": 8},
		map[string]bool{"48xlarge": true},
	},
	"p5e":       {"NVIDIA H200 SXM", 141, map[string]float64{"48xlarge": 8}, map[string]bool{"48xlarge": true}},
	"p5en":      {"NVIDIA H200 SXM", 141, map[string]float64{"48xlarge": 8}, map[string]bool{"48xlarge": true}},
	"p6-b200":   {"NVIDIA B200", 180, map[string]float64{"48xlarge": 8}, map[string]bool{"48xlarge": true}},
	"p6-b300":   {"NVIDIA B300", 0, map[string]float64{"48xlarge": 8}, map[string]bool{"48xlarge": true}},
	"p6e-gb200": {"NVIDIA GB200", 0, map[string]float64{"36xlarge": 4}, map[string]bool{"36xlarge": true}},
	"g3":        {"NVIDIA M60", 8, map[string]float64{"4xlarge": 1, "8xlarge": 2, "16xlarge": 4}, nil},
	"g3s":       {"NVIDIA M60", 8, map[string]float64{"xlarge": 1}, nil},
	"g4dn": {"NVIDIA T4", 16, map[string]float64{"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1,
		"12xlarge": 4, "16xlarge": 1, "metal": 8}, nil},
	"g4ad": {"AMD Radeon Pro V520", 8, map[string]float64{"xlarge": 1, "2xlarge": 1, "4xlarge": 1,
		"8xlarge": 2, "16xlarge": 4}, nil},
	"g5": {"NVIDIA A10G", 24, map[string]float64{"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1,
		"12xlarge": 4, "16xlarge": 1, "24xlarge": 4, "48xlarge": 8}, nil},
	"g5g": {"NVIDIA T4G", 16, map[string]float64{"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1,
		"16xlarge": 2, "metal": 2}, nil},
	"g6": {"NVIDIA L4", 24, map[string]float64{"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1,
		"12xlarge": 4, "16xlarge": 1, "24xlarge": 4, "48xlarge": 8}, nil},
	"gr6": {"NVIDIA L4", 24, map[string]float64{"4xlarge": 1, "8xlarge": 1}, nil},
	"g6e": {"NVIDIA L40S", 48, map[string]float64{"xlarge": 1, "2xlarge": 1, "4xlarge": 1, "8xlarge": 1,
		"12xlarge": 4, "16xlarge": 1, "24xlarge": 4, "48xlarge": 8}, nil},
}

// gpuSpec is what the table tells about an instance type.
type gpuSpec struct {
	Known        bool // the family is a GPU family of the table
	GPUName      string
	GPUCount     float64 // 0 when the size is not in the table
	MemoryGB     float64 // of one GPU
	Interconnect string
}

// splitType splits "p5.48xlarge" into family "p5" and size "48xlarge".
func splitType(instanceType string) (fam, size string) {
	fam, size, ok := strings.Cut(instanceType, ".")
	if !ok {
		return "", ""
	}
	return fam, size
}

// specOf looks an instance type up in the family table.
func specOf(instanceType string) gpuSpec {
	fam, size := splitType(instanceType)
	f, ok := families[fam]
	if !ok {
		return gpuSpec{}
	}
	s := gpuSpec{Known: true, GPUName: f.gpu, MemoryGB: f.memGB, GPUCount: f.sizes[size]}
	if f.efa[size] {
		s.Interconnect = schemas.InterconnectEFA
	}
	return s
}

// gpuInstanceTypes lists every size of the table that the EC2 API knows (the SDK's
// InstanceType enum, generated from the service model), sorted. DescribeSpotPriceHistory
// is asked for exactly these, so a size EC2 would reject is never sent.
func gpuInstanceTypes() []string {
	known := map[string]bool{}
	for _, v := range ec2types.InstanceType("").Values() {
		known[string(v)] = true
	}
	var out []string
	for fam, f := range families {
		for size := range f.sizes {
			if t := fam + "." + size; known[t] {
				out = append(out, t)
			}
		}
	}
	sort.Strings(out)
	return out
}
