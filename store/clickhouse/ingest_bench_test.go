package clickhouse_test

import (
	"context"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/store/clickhouse"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// rowsSource emits generated rows, as a source does.
type rowsSource []schemas.Observation

func (r rowsSource) Collect(ctx context.Context, e scrapers.Emitter) error {
	for _, o := range r {
		e.Emit(o)
	}
	return nil
}

// BenchmarkIngestPath times the path collect writes through (a source's rows
// normalised, gated and batched by ingest.Collector into the ClickHouse store)
// against clickhouse-go's own batch insert of the same rows (PrepareBatch, Append per
// row, Send per 50,000 rows) into the same table, side by side in each iteration,
// each into a fresh database. It reports the best time of each and ingest_rate,
// clickhouse-go's time / the ingest path's (target ≥ 0.9). GPUPRICE_BENCH_ROWS sets
// the rows (default 20,000).
func BenchmarkIngestPath(b *testing.B) {
	chtest.ServerDSN(b)
	n := 20_000
	if s := os.Getenv("GPUPRICE_BENCH_ROWS"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1000 {
			b.Fatalf("GPUPRICE_BENCH_ROWS=%q: a row count of at least 1000", s)
		}
	}
	var rows []schemas.Observation
	err := storetest.Generate(storetest.GenSpec{Series: 1000, Steps: n / 1000, Start: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC),
		Step: 5 * time.Minute, Seed: 1}, 10_000, func(obs []schemas.Observation) error {
		rows = append(rows, obs...)
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	cat, err := schemas.LoadCatalog()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	best := map[string]time.Duration{}
	timeIt := func(name string, fn func()) {
		t0 := time.Now()
		fn()
		if d := time.Since(t0); best[name] == 0 || d < best[name] {
			best[name] = d
		}
	}
	for b.Loop() {
		st, err := clickhouse.Open(ctx, chtest.FreshDSN(b, "bench_ingest"))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := st.Migrate(ctx); err != nil {
			b.Fatal(err)
		}
		timeIt("ingest", func() {
			c := &ingest.Collector{Sink: st, Normalizer: &ingest.Normalizer{GPUs: cat, Providers: schemas.DefaultProviders()}}
			res := c.Collect(ctx, "bench", []ingest.Job{{Name: "bench", Source: rowsSource(rows)}})
			if res[0].RowsAccepted != len(rows) || res[0].Status != schemas.RunOK {
				b.Fatalf("ingest: %+v", res[0].Run)
			}
		})
		st.Close()

		native := chtest.FreshDSN(b, "bench_native")
		st2, err := clickhouse.Open(ctx, native)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := st2.Migrate(ctx); err != nil {
			b.Fatal(err)
		}
		st2.Close()
		u := chtest.ServerDSN(b)
		conn := chtest.Admin(b, u)
		nu, err := url.Parse(native)
		if err != nil {
			b.Fatal(err)
		}
		db := strings.TrimPrefix(nu.Path, "/")
		timeIt("clickhouse-go", func() {
			const cols = `observed_at, effective_at, provider, tier, sku, region, zone, gpu, gpu_name,
				gpu_count, gpu_memory_gb, pricing, price_usd_hour, price_usd_gpu_hour, currency, price_native,
				unit, fx_rate, interconnect, source_kind, source_url, run_id, attrs, price_scope, price_basis, version`
			for i := 0; i < len(rows); i += 50_000 {
				batch, err := conn.PrepareBatch(ctx, "INSERT INTO "+db+".observations ("+cols+")")
				if err != nil {
					b.Fatal(err)
				}
				for j, o := range rows[i:min(i+50_000, len(rows))] {
					if err := batch.Append(o.ObservedAt, o.EffectiveAt, o.Provider, o.Tier, o.SKU, o.Region, o.Zone,
						o.GPU, o.GPUName, o.GPUCount, o.GPUMemoryGB, o.Pricing, o.PriceUSDHour, o.PriceUSDGPUHour,
						o.Currency, o.PriceNative, o.Unit, o.FXRate, o.Interconnect, o.SourceKind, o.SourceURL,
						o.RunID, "{}", o.PriceScope, o.PriceBasis, uint64(i+j)); err != nil {
						b.Fatal(err)
					}
				}
				if err := batch.Send(); err != nil {
					b.Fatal(err)
				}
			}
		})
		conn.Close()
	}
	b.ReportMetric(float64(len(rows)), "rows")
	b.ReportMetric(best["ingest"].Seconds(), "ingest_s")
	b.ReportMetric(best["clickhouse-go"].Seconds(), "clickhouse_go_s")
	b.ReportMetric(best["clickhouse-go"].Seconds()/best["ingest"].Seconds(), "ingest_rate")
}
