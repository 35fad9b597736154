package analytics

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/schemas"
)

// TestMFUForJob: lambda's 8×H100 node over InfiniBand at $3.99 and its 1×H100 at
// $4.29, a 7B model. For a job that fits one node both are single-node NVLink
// (44–72 %, mid 0.58), so the cheaper GPU-hour is the cheaper token:
// $/1B = price × 1e9 × 6 × 7e9 / (989.4e12 × 0.58 × 3600): 3.99 → $81.11, 4.29 →
// $87.21. Only a job that crosses nodes takes the fabric's band (mid 0.466), and
// across nodes with no RDMA fabric there is no published band.
func TestMFUForJob(t *testing.T) {
	cat, err := schemas.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	h100, _ := cat.Lookup("H100-SXM-80GB")
	ib := schemas.InterconnectInfiniband
	b8, why8, err := MFUForJob(h100, ib, 8, Job{})
	if err != nil || b8.Class != MFUSingleNodeNVLink || b8.Mid() != 0.58 || !strings.Contains(why8, "fits one 8-GPU node") {
		t.Fatalf("8×H100, one-node job: %s %v (%s)", b8.Class, err, why8)
	}
	b1, _, err := MFUForJob(h100, schemas.InterconnectEthernet, 1, Job{})
	if err != nil || b1.Class != MFUSingleNodeNVLink {
		t.Fatalf("1×H100, one-node job: %s %v", b1.Class, err)
	}
	peak, _ := PeakTFLOPS(h100, BF16)
	c8, _ := Tokens(3.99, 7e9, peak, b8.Mid(), 0)
	c1, _ := Tokens(4.29, 7e9, peak, b1.Mid(), 0)
	want := func(p float64) float64 { return p * 1e9 * 6 * 7e9 / (peak * 1e12 * 0.58 * 3600) }
	if math.Abs(c8.USDPer1BTokens-want(3.99)) > 0.01 || math.Abs(c1.USDPer1BTokens-want(4.29)) > 0.01 ||
		c8.USDPer1BTokens >= c1.USDPer1BTokens {
		t.Errorf("$/1B: 8× %.2f (want %.2f), 1× %.2f (want %.2f)", c8.USDPer1BTokens, want(3.99), c1.USDPer1BTokens, want(4.29))
	}
	// Crossing nodes: 2 nodes, or 16 GPUs on 8-GPU instances.
	for _, j := range []Job{{Nodes: 2}, {GPUs: 16}} {
		b, why, err := MFUForJob(h100, ib, 8, j)
		if err != nil || b.Class != MFUMultiNodeRDMA || b.Mid() != 0.466 || !strings.Contains(why, "crosses 8-GPU nodes over infiniband") {
			t.Errorf("%v: %s %v (%s)", j, b.Class, err, why)
		}
	}
	if b, _, err := MFUForJob(h100, schemas.InterconnectEthernet, 1, Job{GPUs: 8}); !errors.Is(err, ErrNoMFUBand) ||
		b.Class != MFUMultiNodeNoRDMA {
		t.Errorf("8 GPUs on 1-GPU instances over ethernet: %s %v, want no band", b.Class, err)
	}
	// A PCIe card does not depend on the job.
	l4, ok := cat.Lookup("L4-PCIE-24GB")
	if !ok {
		t.Fatal("L4-PCIE-24GB not in the catalog")
	}
	if b, _, _ := MFUForJob(l4, ib, 1, Job{Nodes: 4}); b.Class != MFUPCIe {
		t.Errorf("L4: %s", b.Class)
	}
}
