package opencost

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// readAsOpenCost decodes a pricing CSV as OpenCost's CSV provider does
// (csvprovider.go: a csv.Reader of eight fields per record, fields by header name).
func readAsOpenCost(t *testing.T, b []byte) (header []string, rows []map[string]string) {
	t.Helper()
	r := csv.NewReader(bytes.NewReader(b))
	r.FieldsPerRecord = len(Header)
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = rec[i]
		}
		rows = append(rows, m)
	}
	return recs[0], rows
}

// TestFormatIsOpenCosts: the columns are those of OpenCost's documented example
// (configs/pricing_schema.csv), in its order; a row has its example's shape: a
// time in the example's layout, AssetClass node, a node label as InstanceIDField
// (metadata.labels.<label>, which OpenCost reads from the node), a number as
// MarketPriceHourly; and with regions, as configs/pricing_schema_region.csv, a
// row per region plus one without a region for the same InstanceID.
func TestFormatIsOpenCosts(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("testdata", "pricing_schema.csv"))
	if err != nil {
		t.Fatal(err)
	}
	docHeader, docRows := readAsOpenCost(t, doc)
	if !slices.Equal(docHeader, Header) {
		t.Fatalf("header %v, OpenCost's %v", Header, docHeader)
	}
	if _, err := time.Parse(TimeLayout, docRows[0]["EndTimestamp"]); err != nil || docRows[0]["AssetClass"] != "node" {
		t.Fatalf("the documented node row %v: %v", docRows[0], err)
	}

	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	obs := []schemas.Observation{
		{Provider: "aws", SKU: "p5.48xlarge", Region: "us-east-1", Zone: "us-east-1a", GPUCount: 8, PriceUSDHour: 30, ObservedAt: at},
		{Provider: "aws", SKU: "p5.48xlarge", Region: "us-east-1", Zone: "us-east-1b", GPUCount: 8, PriceUSDHour: 34,
			ObservedAt: at.Add(time.Hour)},
		{Provider: "aws", SKU: "p5.48xlarge", Region: "us-west-2", GPUCount: 8, PriceUSDHour: 40.1234567, ObservedAt: at},
		// Neither a GPU-only price nor a derived one is a node's price.
		{Provider: "gcp", SKU: "nvidia-h100-80gb", Region: "us-east-1", GPUCount: 1, PriceUSDHour: 9,
			PriceScope: schemas.ScopeGPUOnly, ObservedAt: at},
		{Provider: "aws", SKU: "p4d.24xlarge", Region: "us-east-1", GPUCount: 8, PriceUSDHour: 20,
			PriceBasis: schemas.BasisDerived, ObservedAt: at},
	}
	var out bytes.Buffer
	if err := Write(&out, Rows(obs)); err != nil {
		t.Fatal(err)
	}
	want := `EndTimestamp,InstanceID,Region,AssetClass,InstanceIDField,InstanceType,MarketPriceHourly,Version
2026-11-01 13:00:00 UTC,p5.48xlarge,,node,metadata.labels.node.kubernetes.io/instance-type,p5.48xlarge,34,
2026-11-01 13:00:00 UTC,p5.48xlarge,us-east-1,node,metadata.labels.node.kubernetes.io/instance-type,p5.48xlarge,32,
2026-11-01 12:00:00 UTC,p5.48xlarge,us-west-2,node,metadata.labels.node.kubernetes.io/instance-type,p5.48xlarge,40.123457,
`
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
	header, rows := readAsOpenCost(t, out.Bytes())
	if !slices.Equal(header, docHeader) || len(rows) != 3 {
		t.Fatalf("header %v, %d rows", header, len(rows))
	}
	for _, r := range rows {
		if _, err := time.Parse(TimeLayout, r["EndTimestamp"]); err != nil || r["AssetClass"] != "node" ||
			!strings.HasPrefix(r["InstanceIDField"], "metadata.labels.") {
			t.Errorf("row %v: %v", r, err)
		}
		if p, err := strconv.ParseFloat(r["MarketPriceHourly"], 64); err != nil || p <= 0 {
			t.Errorf("row %v: price %v", r, err)
		}
	}
	regional, err := os.ReadFile(filepath.Join("testdata", "pricing_schema_region.csv"))
	if err != nil {
		t.Fatal(err)
	}
	_, docRegional := readAsOpenCost(t, regional)
	ids := map[string][]string{}
	for _, r := range docRegional {
		ids[r["InstanceID"]] = append(ids[r["InstanceID"]], r["Region"])
	}
	for id, regions := range ids {
		if !slices.Contains(regions, "") || len(regions) < 2 {
			t.Fatalf("the documented regional example changed: %s in %v", id, regions)
		}
	}
}

// TestHostileSKU: a SKU that a spreadsheet would run as a formula is written as
// text.
func TestHostileSKU(t *testing.T) {
	var out bytes.Buffer
	obs := []schemas.Observation{{SKU: "=HYPERLINK(\"x\")", Region: "r", GPUCount: 1, PriceUSDHour: 1}}
	if err := Write(&out, Rows(obs)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), ",=HYPERLINK") || !strings.Contains(out.String(), `'=HYPERLINK`) {
		t.Errorf("%s", out.String())
	}
}
