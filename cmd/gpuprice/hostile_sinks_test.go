package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/chromedp/chromedp"

	"github.com/gpuprice/gpuprice/analytics/publish"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/schemas/textsafe"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// Issue 29's sinks that the end-to-end test (hostile_e2e_test.go) does not reach
// with a Vast answer, each fed the hostile corpus where a stranger's string can
// really arrive.

// formulas are the strings of the hostile corpus a spreadsheet would run (OWASP's
// leading = + - @ tab CR).
func formulas() []string {
	var out []string
	for _, h := range textsafe.Hostile {
		if h != "" && strings.ContainsRune("=+-@\t\r", rune(h[0])) {
			out = append(out, h)
		}
	}
	return out
}

// formulaCells fails the test for every cell of recs (the header excepted) that a
// spreadsheet would run as a formula, and returns how many cells hold one of the
// corpus's formulas guarded (prefixed with ').
func formulaCells(t *testing.T, what string, recs [][]string) (guarded int) {
	t.Helper()
	want := map[string]bool{}
	for _, f := range formulas() {
		want["'"+f] = true
	}
	for _, rec := range recs[1:] {
		for _, cell := range rec {
			if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
				if _, err := strconv.ParseFloat(cell, 64); err != nil || cell[0] == '=' || cell[0] == '@' {
					t.Errorf("%s: a cell a spreadsheet would run: %.80q", what, cell)
				}
			}
			if want[cell] {
				guarded++
			}
		}
	}
	return guarded
}

// rawRow is an H100 on-demand offer of provider at price, observed at. The tests
// below change its strings and write it with loadRealistic, straight into the
// store, bypassing ingest: what a store written by another program (a shared
// ClickHouse) or by a gpuprice before ingest.Clean holds. The sinks' escaping is
// what stands between such rows and a spreadsheet, a terminal or a renderer.
func rawRow(provider, tier string, at time.Time, price float64) schemas.Observation {
	return schemas.Observation{ObservedAt: at, EffectiveAt: at, Provider: provider, Tier: tier, SKU: "sku-1", Region: "US",
		GPU: "H100-SXM-80GB", GPUName: "H100 SXM", GPUCount: 1, GPUMemoryGB: 80, Pricing: schemas.OnDemand,
		PriceUSDHour: price, PriceUSDGPUHour: price, Currency: "USD", PriceNative: price, Unit: schemas.UnitHour, FXRate: 1,
		Interconnect: schemas.InterconnectUnknown, SourceKind: schemas.SourceAPI, SourceURL: "https://example.test/", RunID: "raw"}
}

// TestPublishCSVHostileGPU: `publish`'s index and spreads CSVs, opened in a
// spreadsheet like every CSV gpuprice writes, show a GPU named by a formula as
// text ('=…), keep numbers numbers, and verify accepts the snapshot. (Ingest
// places every GPU on the catalog, so the GPUs come from a store written by
// another program.)
func TestPublishCSVHostileGPU(t *testing.T) {
	cfg, dir := backfillConfig(t, "http://127.0.0.1:1")
	t.Setenv("GPUPRICE_DATA_DIR", dir)
	dsn := "duckdb://" + filepath.Join(dir, "a.duckdb")
	importFile(t, cfg, filepath.Join(dir, "input.csv"), dsn, publishInput)
	at := time.Date(2026, 10, 1, 6, 0, 0, 0, time.UTC)
	var obs []schemas.Observation
	for i, f := range formulas() {
		for _, o := range []schemas.Observation{rawRow("aws", schemas.TierHyperscaler, at, 12), rawRow("lambda", schemas.TierSpecialist, at, 3)} {
			o.GPU, o.SKU = f, fmt.Sprint("sku-", i)
			obs = append(obs, o)
		}
	}
	loadRealistic(t, dsn, obs)
	snap := filepath.Join(t.TempDir(), "snap")
	if code, res := publishJSON(t, cfg, dsn, snap, "--day", "2026-10-01"); code != 0 || res["2026-10-01"].Status != publish.StatusPublished {
		t.Fatalf("publish: exit %d: %+v", code, res)
	}
	cat, err := publish.ReadCatalog(snap)
	if err != nil {
		t.Fatal(err)
	}
	m, err := publish.ReadManifest(snap, cat.Days[0].Manifest)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, f := range m.Files {
		if f.Format != "csv" {
			continue
		}
		recs := readCSVFile(t, filepath.Join(snap, filepath.FromSlash(f.Path)))
		// One line per GPU and group (index) or per GPU (spreads) and pricing kind: each
		// of the corpus's formula GPUs is there, guarded.
		seen[f.Kind] = formulaCells(t, f.Path, recs)
		if seen[f.Kind] < len(formulas()) {
			t.Errorf("%s: %d guarded formula cells, want one per hostile GPU at least (%d)\n%v", f.Path, seen[f.Kind], len(formulas()), recs)
		}
	}
	if len(seen) != 2 {
		t.Fatalf("the day's CSV files: %v, want index and spreads", seen)
	}
	if code, out := verifyOut(t, snap); code != 0 {
		t.Fatalf("verify of a snapshot with guarded cells: exit %d\n%s", code, out)
	}
}

// storedHostile writes rows whose SKU, region, zone and GPU name are each a string
// of the corpus (rawRow: as a store another program writes holds them). The
// cheapest row carries HTML, a Slack mention and a terminal escape in its SKU and
// a forged Slack line and table row in its region. It returns a configuration with
// an alert rule that fires on it, notifying Slack at slackURL.
func storedHostile(t *testing.T, dsn, slackURL string) (cfg string) {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("GPUPRICE_DATA_DIR", dir)
	t.Setenv("GPUPRICE_SLACK_WEBHOOK_URL", slackURL)
	cfg = filepath.Join(dir, "gpuprice.yaml")
	conf := fmt.Sprintf(`data_dir: %s
sources:
  fx: {enabled: false}
serve: {public_url: "https://gpuprice.example.com/"}
alerts:
  rules:
    - {name: cheap-h100, kind: price_below, gpu: H100-SXM-80GB, pricing: on_demand, below_usd_gpu_hour: 100}
  notifiers:
    - {name: slack, kind: slack, url_env: GPUPRICE_SLACK_WEBHOOK_URL}
`, dir)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	at := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
	var obs []schemas.Observation
	for i, h := range textsafe.Hostile {
		if !utf8.ValidString(h) || len(h) > 1024 {
			continue // no store holds these: the storable gate quarantines them
		}
		o := rawRow("vast", schemas.TierMarketplace, at, 2+float64(i)/100)
		o.SKU, o.Region, o.Zone, o.GPUName = h, h, h, h
		obs = append(obs, o)
	}
	o := rawRow("vast", schemas.TierMarketplace, at, 0.5)
	o.SKU = "<img src=x onerror=alert(1)><!channel>\x1b[2J\x1b[H"
	o.Region = "US\n:white_check_mark: RESOLVED *all* all clear\nvast  H100  0.01  FORGED"
	obs = append(obs, o)
	loadRealistic(t, dsn, obs)
	return cfg
}

func TestHostileStoredRowsDuckDB(t *testing.T) {
	hostileStoredRows(t, "duckdb://"+filepath.Join(t.TempDir(), "store.duckdb"))
}

func TestIntegrationClickHouseHostileStoredRows(t *testing.T) {
	hostileStoredRows(t, chtest.FreshDSN(t, "hostile_stored"))
}

// hostileStoredRows: the terminal (finding 5: `prices`, `alerts`, `tokens
// --explain`) and Markdown (finding 6: `prices` and `report --format markdown`)
// sinks render the stored hostile rows inert: no escape or other unprintable
// character reaches the terminal and no row is forged; no HTML, link or split
// table row reaches a Markdown renderer.
func hostileStoredRows(t *testing.T, dsn string) {
	slack := newReceiver(t)
	cfg := storedHostile(t, dsn, slack.srv.URL+"/services/T0/B0/x")
	gp := func(args ...string) string {
		t.Helper()
		out, code := run(t, append([]string{"--config", cfg, "--store", dsn}, args...)...)
		if code != 0 {
			t.Fatalf("gpuprice %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
		return out
	}

	// Terminals: one line per row, every escape shown as text.
	rows := len(parseCSV(t, gp("prices", "--format", "csv"))) - 1
	table := gp("prices", "--wide")
	unprintable(t, "prices table", table)
	if lines := strings.Split(strings.TrimRight(table, "\n"), "\n"); len(lines) != rows+1 {
		t.Errorf("prices table: %d lines for %d rows (a newline forged a row?)\n%s", len(lines), rows, table)
	}
	alerts := gp("alerts", "--dry-run")
	unprintable(t, "alerts table", alerts)
	if strings.Contains(alerts, "\nvast  H100  0.01  FORGED") {
		t.Errorf("alerts table: a region forged a row:\n%s", alerts)
	}

	// Slack (finding 1): no mention, no foreign link, no forged line.
	gp("alerts")
	var sl struct {
		Text string `json:"text"`
	}
	if slack.count() != 1 {
		t.Fatalf("alerts sent %d Slack posts, want 1", slack.count())
	}
	slack.last(t, &sl)
	inertSlack(t, sl.Text, "cheap-h100")
	if !strings.Contains(sl.Text, "&lt;img") || !strings.Contains(sl.Text, "&lt;!channel&gt;") {
		t.Errorf("Slack text does not show the cheapest row's SKU escaped: the test did not reach the sink\n%s", sl.Text)
	}
	tokens := gp("tokens", "--params", "7e9", "--gpu", "H100-SXM-80GB", "--explain")
	unprintable(t, "tokens --explain", tokens)
	var cheapest string
	for _, line := range strings.Split(tokens, "\n") {
		if strings.HasPrefix(line, "vast  H100") {
			t.Errorf("tokens --explain: a region forged a line: %q", line)
		}
		if strings.HasPrefix(line, "cheapest: ") {
			cheapest = line
		}
	}
	if !strings.Contains(cheapest, `\x1b[2J`) || !strings.Contains(cheapest, `US\n:white_check_mark:`) {
		t.Errorf("tokens --explain: the cheapest line does not show the SKU and region escaped: %q\n%s", cheapest, tokens)
	}

	// Markdown: no HTML, no link, every table line a row of its table's width.
	for _, args := range [][]string{{"prices", "--format", "markdown"}, {"report", "--gpu", "H100-SXM-80GB", "--format", "markdown"}} {
		md := gp(args...)
		what := strings.Join(args, " ")
		inertMarkdown(t, what, md)
		if !strings.Contains(md, "&lt;img") {
			t.Errorf("%s: the corpus's <img> is not there escaped: the test did not reach the sink\n%.2000s", what, md)
		}
	}
}

// inertMarkdown fails the test when md holds HTML, a link, an unprintable
// character, or a table row whose cell count differs from its header's.
func inertMarkdown(t *testing.T, what, md string) {
	t.Helper()
	unprintable(t, what, md)
	lower := strings.ToLower(md)
	for _, html := range []string{"<img", "<svg", "<script"} {
		if strings.Contains(lower, html) {
			t.Errorf("%s holds %q", what, html)
		}
	}
	if regexp.MustCompile(`(^|[^\\])\]\(`).MatchString(md) {
		t.Errorf("%s holds a link", what)
	}
	cells := func(line string) int { return strings.Count(line, "|") - strings.Count(line, `\|`) }
	width := 0
	for i, line := range strings.Split(md, "\n") {
		switch {
		case !strings.HasPrefix(line, "|"):
			width = 0
		case width == 0:
			width = cells(line)
		case cells(line) != width || !strings.HasSuffix(line, "|"):
			t.Errorf("%s line %d: %d cell borders, the header has %d: %.200q", what, i+1, cells(line), width, line)
		}
	}
}

// TestWebAppCSVHostile: the web app's "Download CSV" (built in the browser by
// util.js csv()) guards every cell a spreadsheet would run exactly as the
// server's CSV writers do (textsafe.CSVRecord): each cell is textsafe.CSV of the
// value it holds, and each of the corpus's formulas came out guarded.
func TestWebAppCSVHostile(t *testing.T) {
	chromium(t)
	cfg, dir := backfillConfig(t, "http://127.0.0.1:1")
	t.Setenv("GPUPRICE_DATA_DIR", dir)
	dsn := "duckdb://" + filepath.Join(dir, "web.duckdb")
	at := time.Now().UTC().Truncate(time.Hour).Add(-time.Hour)
	var obs []schemas.Observation
	for i, f := range formulas() {
		o := rawRow("vast", schemas.TierMarketplace, at, 2+float64(i)/10)
		o.SKU, o.Region, o.Zone = f, f, f
		g := rawRow("lambda", schemas.TierSpecialist, at, 3+float64(i)/10)
		g.GPU, g.SKU = f, fmt.Sprint("sku-", i)
		obs = append(obs, o, g)
	}
	loadRealistic(t, dsn, obs)
	base := serveStore(t, cfg, dsn)
	ctx := browser(t)
	do(t, ctx, "open the board", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`#offers tbody tr`)))
	_, recs := downloadCSV(t, ctx)
	if len(recs)-1 != len(obs) {
		t.Errorf("the download holds %d rows, the store %d", len(recs)-1, len(obs))
	}
	if n := formulaCells(t, "the web app's CSV", recs); n < 4*len(formulas()) {
		t.Errorf("%d guarded formula cells, want each formula as SKU, region, zone and GPU (%d)", n, 4*len(formulas()))
	}
	for _, rec := range recs[1:] {
		for _, cell := range rec {
			if want := textsafe.CSV(textsafe.UnCSV(cell)); cell != want {
				t.Errorf("the web app writes %.80q, the server's CSV %.80q", cell, want)
			}
		}
	}
}
