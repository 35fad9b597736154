package query

import (
	"slices"
	"testing"

	"github.com/gpuprice/gpuprice/analytics"
)

// TestBreakEvensTableCancellation: the break-even table says the upfront and the
// cancellation terms each offer's provider publishes, missing where it publishes
// none, every row as wide as the header.
func TestBreakEvensTableCancellation(t *testing.T) {
	b := BreakEvens{Offers: []analytics.BreakEven{
		{Offer: analytics.Offer{Provider: "runpod", Pricing: "commitment_6m", SKU: "NVIDIA H100 80GB HBM3:secure",
			Price: 2.601}, UpfrontUSDPerGPU: analytics.Opt(11392.38), Cancellation: "non-refundable"},
		{Offer: analytics.Offer{Provider: "together", Pricing: "commitment_6m", SKU: "together:gpu-clusters:hgx-h100",
			Price: 2.99}},
	}}
	header, rows := b.Table()
	up, cancel := slices.Index(header, "upfront_usd_per_gpu"), slices.Index(header, "cancellation")
	if up < 0 || cancel < 0 || len(rows) != 2 {
		t.Fatalf("header %v, %d rows", header, len(rows))
	}
	for _, r := range rows {
		if len(r) != len(header) {
			t.Errorf("row %v: %d cells, header %d", r, len(r), len(header))
		}
	}
	if rows[0][up] != "11392.38" || rows[0][cancel] != "non-refundable" || rows[1][up] != Missing ||
		rows[1][cancel] != Missing {
		t.Errorf("upfront and cancellation cells: %q %q / %q %q", rows[0][up], rows[0][cancel], rows[1][up],
			rows[1][cancel])
	}
}
