package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/gpuprice/gpuprice/schemas"
)

const csvHead = "observed_at,provider,tier,sku,gpu,gpu_count,region,zone,pricing,price_usd_hour,price_usd_gpu_hour,source_kind\n"

func csvSrc(body string) *CSVSource {
	return &CSVSource{
		Open:   func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil },
		Origin: "file:///tmp/x.csv",
		Known:  func(g string) bool { return g == "H100-SXM-80GB" },
	}
}

func TestCSVSourceRows(t *testing.T) {
	body := csvHead +
		"2026-11-01T12:00:00Z,lambda,specialist,gpu_8x_h100_sxm5,H100-SXM-80GB,8,,,on_demand,23.92,2.99,scrape\n" +
		"2026-11-01T12:00:00Z,vast,marketplace,vast:123,H100 SXM,1,US,,spot,\"1,85\",1.85,api\n" +
		"yesterday,vast,marketplace,vast:9,,1,US,,spot,1,1,api\n" +
		"2026-11-01T12:00:00Z,vast,marketplace,vast:10,,x,US,,spot,1,1,api\n"
	sink := newMemSink()
	c := newCollector(sink)
	c.SourceKind = schemas.SourceImport
	res := c.Collect(context.Background(), "r", []Job{{Name: "import:csv", Source: csvSrc(body)}})
	r := res[0]
	if r.RowsAccepted != 2 || r.RowsQuarantine != 2 || r.Status != schemas.RunDegraded {
		t.Fatalf("%+v", r)
	}
	var lam, vast schemas.Observation
	for _, o := range sink.rows {
		switch o.Provider {
		case "lambda":
			lam = o
		case "vast":
			vast = o
		}
	}
	if lam.GPU != "H100-SXM-80GB" || lam.PriceUSDHour != 23.92 || lam.PriceUSDGPUHour != 2.99 || lam.SourceKind != schemas.SourceImport ||
		lam.SourceURL != "file:///tmp/x.csv" || lam.Attrs["original_source_kind"] != "scrape" {
		t.Errorf("lambda row %+v", lam)
	}
	if vast.PriceUSDHour != 1.85 || vast.GPUName != "H100 SXM" || vast.GPU != "H100-SXM-80GB" {
		t.Errorf("vast row %+v", vast)
	}
	reasons := sink.quarantine[0].Reason + " | " + sink.quarantine[1].Reason
	if !strings.Contains(reasons, "csv line 4: observed_at") || !strings.Contains(reasons, "csv line 5: gpu_count") {
		t.Errorf("reasons %q", reasons)
	}
}

func TestCSVSourceHeader(t *testing.T) {
	err := csvSrc("provider,sku\naws,p5\n").Collect(context.Background(), nil)
	if !errors.Is(err, ErrCSVHeader) {
		t.Errorf("err = %v, want ErrCSVHeader", err)
	}
}

func FuzzCSVSource(f *testing.F) {
	f.Add(csvHead + "2026-11-01T12:00:00Z,lambda,specialist,gpu_8x_h100_sxm5,H100-SXM-80GB,8,,,on_demand,23.92,2.99,scrape\n")
	f.Add("observed_at,provider,sku,pricing,gpu_count,price_usd_gpu_hour\n\"2026-11-01\",x,\"a\"\"b\",spot,1,\"1,5\"\n")
	f.Add("\ufeffobserved_at\n")
	f.Fuzz(func(t *testing.T, body string) {
		n := 0
		e := emitterFunc(func(schemas.Observation) { n++ })
		_ = csvSrc(body).Collect(context.Background(), e)
		if n > strings.Count(body, "\n")+1 {
			t.Errorf("%d rows from %d lines", n, strings.Count(body, "\n")+1)
		}
	})
}

type emitterFunc func(schemas.Observation)

func (f emitterFunc) Emit(o schemas.Observation) { f(o) }

// An exported EUR row carries the rate it was converted at; importing it into a
// store that has no rate for that day (here: no EUR rate at all) keeps the row and
// its USD price, with scope and basis as exported.
func TestCSVSourceImportUsesCarriedFXRate(t *testing.T) {
	head := "observed_at,provider,tier,sku,gpu,gpu_count,region,zone,pricing,price_usd_hour,price_usd_gpu_hour,source_kind," +
		"effective_at,gpu_name,gpu_memory_gb,currency,price_native,unit,fx_rate,interconnect,source_url,price_scope,price_basis\n"
	body := head +
		"2026-11-01T12:00:00Z,ovhcloud,specialist,l40s-90,L40S-PCIE-48GB,1,GRA11,,on_demand,1.9062,1.9062,scrape," +
		"2026-11-01T12:00:00Z,L40S,48,EUR,1.65,hour,1.1553,unknown,https://www.ovhcloud.com/en/public-cloud/prices/,instance,listed\n" +
		"2026-11-01T12:00:00Z,oci,hyperscaler,BM.GPU.H100.8,H100-SXM-80GB,8,,,spot,40,5,derived," +
		"2026-11-01T12:00:00Z,H100,80,USD,40,hour,1,infiniband,https://apexapps.oracle.com/pls/apex/cetools/api/v1/products/,instance,derived\n" +
		"2026-11-01T12:00:00Z,ovhcloud,specialist,l4-90,,1,GRA11,,on_demand,1,1,scrape," +
		"2026-11-01T12:00:00Z,L4,24,EUR,0.9,hour,-3,unknown,https://www.ovhcloud.com/,instance,listed\n" +
		"2026-11-01T12:00:00Z,ovhcloud,specialist,l4-90b,,1,GRA11,,on_demand,1,1,scrape," +
		"2026-11-01T12:00:00Z,L4,24,USD,0.9,hour,1,unknown,https://www.ovhcloud.com/,machine,listed\n"
	sink := newMemSink()
	c := newCollector(sink)
	c.Normalizer.FX = StaticFX{} // no rate for EUR anywhere
	c.SourceKind = schemas.SourceImport
	res := c.Collect(context.Background(), "r", []Job{{Name: "import:csv", Source: csvSrc(body)}})
	if r := res[0]; r.RowsAccepted != 2 || r.RowsQuarantine != 2 {
		t.Fatalf("want 2 accepted (carried rate), 2 quarantined (negative rate, unknown scope): %+v", r)
	}
	got := map[string]schemas.Observation{}
	for _, o := range sink.rows {
		got[o.Provider] = o
	}
	ovh := got["ovhcloud"]
	if ovh.FXRate != 1.1553 || ovh.PriceUSDHour != 1.906245 || ovh.PriceScope != schemas.ScopeInstance || ovh.PriceBasis != schemas.BasisListed {
		t.Errorf("ovhcloud row: fx %v usd/h %v scope %q basis %q", ovh.FXRate, ovh.PriceUSDHour, ovh.PriceScope, ovh.PriceBasis)
	}
	if oci := got["oci"]; oci.PriceBasis != schemas.BasisDerived {
		t.Errorf("derived row imported as %q", oci.PriceBasis)
	}
}

func TestCSVUnbalancedQuoteRecoversAtTheNextLine(t *testing.T) {
	var b strings.Builder
	b.WriteString(csvHead)
	for i := 0; i < 100; i++ {
		sku := fmt.Sprintf("gpu_8x_h100_sxm5_%d", i)
		if i == 9 { // line 11
			sku = `"broken` + sku
		}
		if i == 20 { // a quoted field may span lines
			sku = "\"two\nlines\""
		}
		fmt.Fprintf(&b, "2026-11-01T12:00:00Z,lambda,specialist,%s,H100-SXM-80GB,8,,,on_demand,23.92,2.99,scrape\n", sku)
	}
	sink := newMemSink()
	c := newCollector(sink)
	c.Batch.Size = 1000
	r := c.Collect(context.Background(), "r", []Job{{Name: "import:csv", Source: csvSrc(b.String())}})[0]
	if r.RowsAccepted != 99 || r.RowsQuarantine != 1 || len(sink.rows) != 99 {
		t.Fatalf("%+v", r.Run)
	}
	q := sink.quarantine[0]
	if !strings.Contains(q.Reason, "csv line 11: unbalanced quote") || !strings.Contains(q.Raw, `"brokengpu_8x_h100_sxm5_9`) {
		t.Errorf("quarantined %+v", q)
	}
	found := false
	for _, o := range sink.rows {
		// The line break is whitespace to ingest's Clean: one line per value.
		found = found || o.SKU == "two lines"
	}
	if !found {
		t.Error("a quoted field spanning two lines was not read")
	}
}

// endless is a reader of n bytes of 'x' (one line with no end), made as read.
type endless struct{ n int }

func (e *endless) Read(p []byte) (int, error) {
	if e.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), e.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	e.n -= k
	return k, nil
}

func TestCSVHugeLineIsQuarantinedInBoundedMemory(t *testing.T) {
	good := "2026-11-01T12:00:00Z,lambda,specialist,gpu_8x_h100_sxm5,H100-SXM-80GB,8,,,on_demand,23.92,2.99,scrape\n"
	wide := "2026-11-01T12:00:00Z,lambda,specialist," + strings.Repeat("s", MaxCSVFieldBytes+1) + ",H100-SXM-80GB,8,,,on_demand,23.92,2.99,scrape\n"
	const huge = 256 << 20
	src := &CSVSource{Open: func() (io.ReadCloser, error) {
		return io.NopCloser(io.MultiReader(strings.NewReader(csvHead+wide), &endless{huge}, strings.NewReader("\n"+good))), nil
	}}
	sink := newMemSink()
	c := newCollector(sink)
	c.SourceTimeout = 0
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r := c.Collect(context.Background(), "r", []Job{{Name: "import:csv", Source: src}})[0]
	runtime.ReadMemStats(&after)
	if r.RowsAccepted != 1 || r.RowsQuarantine != 2 {
		t.Fatalf("%+v", r.Run)
	}
	reasons := sink.quarantine[0].Reason + " | " + sink.quarantine[1].Reason
	if !strings.Contains(reasons, "csv line 2: field 4 is") || !strings.Contains(reasons, fmt.Sprintf("csv line 3: line is %d bytes long", huge)) {
		t.Errorf("reasons %q", reasons)
	}
	// Reading a 256 MB line allocates a bounded buffer, not the line.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("reading a %d-byte line allocated %d bytes", huge, alloc)
	}
}
