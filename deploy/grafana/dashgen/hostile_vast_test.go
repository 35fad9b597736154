package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/ClickHouse/clickhouse-go/v2/lib/driver"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/schemas/textsafe"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"

	_ "github.com/gpuprice/gpuprice/scrapers/vast" // the source collected
)

// TestIntegrationClickHouseHostileVastPanels is the Grafana part of issue 29's
// end-to-end test (cmd/gpuprice's TestHostileVastEndToEnd* does the rest): the
// hostile Vast answer of scrapers/vast/testdata/hostile is collected through the
// pipeline, and every panel that filters by region runs
// with all regions, with the region options the data gives, and with the raw
// strings of the corpus selected. Every query runs; no selection returns more rows
// than all regions, the corpus strings match nothing, and no cell shown holds an
// unprintable character.
func TestIntegrationClickHouseHostileVastPanels(t *testing.T) {
	dsn, _ := testDB(t)
	ctx := t.Context()
	st, err := clickhouse.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	collectHostileVast(t, st)

	plain, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := plain.Query()
	q.Del(clickhouse.ClusterParam)
	plain.RawQuery = q.Encode()
	conn := chtest.Conn(t, plain.String(), provisionedSettings(t))
	defer conn.Close()

	gen := map[string]Dashboard{}
	for _, d := range dashboards() {
		gen[d.UID] = d
	}
	panels, queries := 0, 0
	for _, d := range loadDashboards(t) {
		g := gen[d.UID]
		vars := map[string]selection{}
		for _, v := range g.Variables {
			s := selection{multi: v.Multi, all: v.Multi}
			if v.Query != "" {
				s.options = column(t, conn, v.Query)
			} else {
				s.options = v.Values
			}
			if !v.Multi {
				s.values = s.options[:1]
			}
			vars[v.Name] = s
		}
		region, ok := vars["region"]
		if !ok {
			continue
		}
		for _, o := range region.options {
			printable(t, d.UID+" region option", o)
		}
		to := time.Now().UTC()
		from := to.Add(-30 * 24 * time.Hour)
		for _, p := range d.Panels {
			sql := p.Targets[0].RawSQL
			if sql == "" || !strings.Contains(sql, "region") {
				continue
			}
			panels++
			with := func(r selection) (int, string) {
				t.Helper()
				cur := map[string]selection{}
				for k, v := range vars {
					cur[k] = v
				}
				cur["region"] = r
				q, err := interpolate(sql, cur, from, to)
				if err != nil {
					t.Fatalf("%s / %s: %v", d.UID, p.Title, err)
				}
				queries++
				cells, err := rowsOf(ctx, conn, q)
				if err != nil {
					t.Errorf("%s / %s: %v\n%.1500s", d.UID, p.Title, err, q)
					return 0, q
				}
				for _, row := range cells {
					for _, c := range row {
						printable(t, d.UID+" / "+p.Title, c)
					}
				}
				return len(cells), q
			}
			all, _ := with(region)
			if all == 0 && !strings.Contains(sql, "v_index") {
				t.Errorf("%s / %s: no rows with every region: the test proves nothing", d.UID, p.Title)
			}
			none, _ := with(selection{multi: true, values: []string{"zz-no-such-region"}, options: region.options})
			// The options the hostile answer added, all at once: no more than all.
			if n, q := with(selection{multi: true, values: region.options[1:], options: region.options}); n > all {
				t.Errorf("%s / %s: %d region options give %d rows, all regions %d\n%.1500s", d.UID, p.Title,
					len(region.options)-1, n, all, q)
			}
			// Every raw corpus string at once (and each injection alone): nothing
			// matches, nothing breaks out of the filter.
			for _, vals := range [][]string{textsafe.Hostile, {`Texas, US\') OR 1=1 --`}, {`US\') OR 1=1 --`}} {
				if n, q := with(selection{multi: true, values: vals, options: region.options}); n != none {
					t.Errorf("%s / %s: regions %.60q give %d rows, an unknown region %d\n%.1500s", d.UID, p.Title, vals, n, none, q)
				}
			}
		}
	}
	if panels == 0 {
		t.Fatal("no panel filters by region")
	}
	t.Logf("%d panels, %d queries", panels, queries)
}

// collectHostileVast collects scrapers/vast/testdata/hostile through the pipeline.
func collectHostileVast(t *testing.T, st store.Store) {
	t.Helper()
	body, err := os.ReadFile(filepath.Join("..", "..", "..", "scrapers", "vast", "testdata", "hostile", "input.json"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	defer srv.Close()
	job, err := ingest.NewJob("vast", ingest.SourceSpec{Endpoint: srv.URL + "/api/v0/bundles/", Client: fetch.New(fetch.Options{})})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := schemas.LoadCatalog()
	if err != nil {
		t.Fatal(err)
	}
	runner := &ingest.Runner{Store: st, GPUs: cat, Providers: schemas.DefaultProviders(), Bounds: ingest.DefaultBounds()}
	res := runner.Collect(t.Context(), []ingest.Job{job}, ingest.Options{})
	if res[0].RowsAccepted < 20 {
		t.Fatalf("hostile vast: %+v", res[0].Run)
	}
}

// rowsOf runs q and returns its cells as text.
func rowsOf(ctx context.Context, conn driver.Conn, q string) ([][]string, error) {
	rows, err := conn.Query(ctx, q)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	types := rows.ColumnTypes()
	var out [][]string
	for rows.Next() {
		ptrs := make([]any, len(types))
		for i, c := range types {
			ptrs[i] = reflect.New(c.ScanType()).Interface()
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]string, len(ptrs))
		for i, p := range ptrs {
			row[i] = fmt.Sprint(reflect.ValueOf(p).Elem().Interface())
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// printable fails the test when s holds a control character or an invisible format
// character (a terminal escape, a bidi override, a line break).
func printable(t *testing.T, where, s string) {
	t.Helper()
	for _, r := range s {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			t.Errorf("%s: %s holds %U", where, strconv.QuoteToASCII(s), r)
			return
		}
	}
}
