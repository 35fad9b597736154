package ingest

import (
	"context"
	"errors"
	"io"
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
