package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"

	"github.com/gpuprice/gpuprice/analytics/report"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// chromium returns the Chromium the report prints PDFs with (report.ExecPath:
// $GPUPRICE_CHROMIUM, else chromium on the PATH, Debian's, which deploy/test.sh
// installs). Without it the browser tests skip, loudly, and fail under CI.
func chromium(t *testing.T) string {
	t.Helper()
	p, err := report.ExecPath()
	if err == nil {
		return p
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%v: deploy/test.sh installs Debian's chromium (apt-get install -y chromium)", err)
	}
	t.Skipf("SKIPPED: %v", err)
	return ""
}

// artifacts is where the browser tests write their screenshots: $GPUPRICE_ARTIFACTS,
// else testdata/artifacts (git-ignored).
func artifacts(t *testing.T) string {
	dir := os.Getenv("GPUPRICE_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join("testdata", "artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// browser starts a headless chromium with a fresh profile and returns a tab whose
// console is watched: every console error, uncaught exception and browser log
// error (a failed request, a CSP violation) is collected, and fails the test at
// its end.
func browser(t *testing.T) context.Context {
	t.Helper()
	exe := chromium(t)
	ctx, cancel, err := report.Browser(context.Background(), exe, t.TempDir(), 1280, 900)
	if err != nil {
		t.Fatalf("chromium did not start: %v", err)
	}
	var mu sync.Mutex
	var problems []string
	msgs := chromedp.Console(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range msgs {
			if err != nil {
				return
			}
			if m.Type == chromedp.ConsoleError || m.IsException() {
				mu.Lock()
				problems = append(problems, fmt.Sprintf("%s (%s:%d)", m.String(), m.URL, m.Line))
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() {
		time.Sleep(100 * time.Millisecond) // let the last messages arrive
		cancel()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, p := range problems {
			t.Errorf("browser console: %s", p)
		}
	})
	return ctx
}

// do runs browser steps, bounded so that a broken page fails instead of hanging.
func do(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Do(c, steps...); err != nil {
		shot(t, ctx, "failed-"+regexp.MustCompile(`\W+`).ReplaceAllString(what, "-"))
		t.Fatalf("%s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression (awaiting a promise) and decodes its value.
func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(c, chromedp.Evaluate[T](js, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// shot writes a full-page PNG screenshot to the artifacts directory.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	shotOf(t, ctx, name, chromedp.FullScreenshot(100))
}

// shotOf writes the screenshot that capture takes.
func shotOf(t *testing.T, ctx context.Context, name string, capture chromedp.Action[[]byte]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(c, capture)
	if err != nil {
		t.Logf("screenshot %s: %v", name, err)
		return
	}
	p := filepath.Join(artifacts(t), "webapp-"+name+".png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
}

// media emulates a colour scheme ("dark", "light") for prefers-color-scheme.
func media(scheme string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
		return err
	})
}

// webStore fills the store dsn through the pipeline: a collection of the recorded
// Azure, Vast and Lambda responses (with a source that fails with a long error),
// then an import of 14 days of history made from those prices, each day's a few
// percent apart (a test fixture, not market data), so series have bars to draw;
// then two alert evaluations in which one rule fires and resolves, so that the
// store's alert history has a resolved alert.
func webStore(t *testing.T, dsn string) (cfg string) {
	t.Helper()
	srv := replay(t)
	cfg = writeConfig(t, srv.URL)
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	// Crusoe's page at a long missing address: its run fails with an error that
	// the sources view must wrap.
	broken := srv.URL + "/missing/" + strings.Repeat("a-very-long-path-segment-", 12) + "end"
	conf := strings.Replace(string(b), "  crusoe: {enabled: false}\n", "  crusoe: {endpoint: "+broken+", schedule: '"+neverSchedule+"'}\n", 1)
	if conf == string(b) {
		t.Fatal("crusoe is not among the disabled sources")
	}
	// Two rules that fire on this store: an H100 under $100/GPU-h, and crusoe down;
	// a third, under-1k, fires at the first evaluation and resolves at the second
	// (its threshold lowered).
	alertsConf := func(under float64) string {
		return conf + fmt.Sprintf(`serve: {public_url: "https://gpuprice.example.com/"}
alerts:
  rules:
    - {name: cheap-h100, kind: price_below, gpu: H100-SXM-80GB, pricing: on_demand, below_usd_gpu_hour: 100}
    - {name: source-down, kind: source_failed, runs: 1}
    - {name: under-1k, kind: price_below, gpu: A100-SXM-80GB, pricing: on_demand, below_usd_gpu_hour: %g}
  notifiers:
    - {name: log, kind: log}
`, under)
	}
	if err := os.WriteFile(cfg, []byte(alertsConf(1000)), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, _ := run(t, "--config", cfg, "--store", dsn, "collect"); !regexp.MustCompile(`(?m)^crusoe\s+failed`).MatchString(out) {
		t.Fatalf("collect should report crusoe failed:\n%s", out)
	}
	now, code := run(t, "--config", cfg, "--store", dsn, "prices", "--format", "csv")
	if code != 0 {
		t.Fatal("prices failed")
	}
	recs := parseCSV(t, now)
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	var hist strings.Builder
	w := csv.NewWriter(&hist)
	_ = w.Write(recs[0])
	start := time.Now().UTC().Truncate(time.Hour)
	for d := 14; d >= 1; d-- {
		at := start.Add(-time.Duration(d) * 24 * time.Hour).Format(time.RFC3339)
		factor := 1 + 0.04*math.Sin(float64(d))
		for _, r := range recs[1:] {
			row := append([]string(nil), r...)
			row[col["observed_at"]], row[col["effective_at"]] = at, at
			for _, c := range []string{"price_usd_hour", "price_usd_gpu_hour", "price_native"} {
				if i, ok := col[c]; ok && row[i] != "" {
					v, err := strconv.ParseFloat(row[i], 64)
					if err != nil {
						t.Fatalf("%s %q: %v", c, row[i], err)
					}
					row[i] = strconv.FormatFloat(v*factor, 'f', 6, 64)
				}
			}
			_ = w.Write(row)
		}
	}
	w.Flush()
	p := filepath.Join(t.TempDir(), "history.csv")
	if err := os.WriteFile(p, []byte(hist.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := run(t, "--config", cfg, "--store", dsn, "import", "csv", p); code != 0 {
		t.Fatalf("import failed:\n%s", out)
	}
	if out, code := run(t, "--config", cfg, "--store", dsn, "alerts"); code != 0 || !regexp.MustCompile(`(?m)^under-1k\s.*started`).MatchString(out) {
		t.Fatalf("alerts: exit %d\n%s", code, out)
	}
	if err := os.WriteFile(cfg, []byte(alertsConf(0.01)), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := run(t, "--config", cfg, "--store", dsn, "alerts"); code != 0 || !regexp.MustCompile(`(?m)^under-1k\s.*resolved`).MatchString(out) {
		t.Fatalf("alerts: exit %d\n%s", code, out)
	}
	return cfg
}

// serveStore runs `gpuprice serve` on the store (startServe) and returns its base URL;
// serve is stopped when the test ends.
func serveStore(t *testing.T, cfg, dsn string) string {
	t.Helper()
	base, stop := startServe(t, "--config", cfg, "--store", dsn)
	t.Cleanup(stop)
	return base
}

// canvasPixels counts the pixels of the chart's canvas near the colour r, g, b.
func canvasPixels(chart string, r, g, b int) string {
	return fmt.Sprintf(`(() => {
	  const c = document.querySelector('%s canvas');
	  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
	  let n = 0;
	  for (let i = 0; i < d.length; i += 4)
	    if (d[i+3] > 200 && Math.abs(d[i]-%d) < 40 && Math.abs(d[i+1]-%d) < 40 && Math.abs(d[i+2]-%d) < 40) n++;
	  return n })()`, chart, r, g, b)
}

type offerRow struct {
	GPU, Provider, Tier, Pricing, Region, Scope, Price string
}

const readOffers = `[...document.querySelectorAll('#offers tbody tr')].map(tr => {
  const c = [...tr.cells].map(td => td.textContent.trim());
  return {GPU: c[0], Provider: c[1], Tier: c[2], Pricing: c[3], Region: c[4], Scope: c[5], Price: c[7]};
})`

// downloadCSV clicks the board's "Download CSV" and returns the file's path and
// records.
func downloadCSV(t *testing.T, ctx context.Context) (string, [][]string) {
	t.Helper()
	dir := t.TempDir()
	do(t, ctx, "allow downloads", chromedp.Func(func(c context.Context, _ *chromedp.Target) error {
		_, err := cdp.Call(c, chromedp.FromContext(ctx).Browser, cdpbrowser.SetDownloadBehavior,
			cdpbrowser.SetDownloadBehaviorParams{Behavior: cdpbrowser.SetDownloadBehaviorBehaviorAllow, DownloadPath: dir})
		return err
	}), chromedp.Click(chromedp.CSS(`#csv`)))
	var file string
	waitFor(t, "the CSV download", func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, "*.csv"))
		if len(m) == 1 {
			file = m[0]
		}
		return file != ""
	})
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return file, parseCSV(t, string(b))
}

func TestWebApp(t *testing.T) {
	chromium(t)
	testWebApp(t, "duckdb://"+filepath.Join(t.TempDir(), "web.duckdb"))
}

// TestIntegrationClickHouseWebApp: the same views, the same checks, on ClickHouse.
func TestIntegrationClickHouseWebApp(t *testing.T) {
	chromium(t)
	testWebApp(t, chtest.FreshDSN(t, "web"))
}

func testWebApp(t *testing.T, dsn string) {
	cfg := webStore(t, dsn)
	// The CLI's answers, read before serve holds the DuckDB file.
	tokOut, code := run(t, "--config", cfg, "--store", dsn, "tokens", "--params", "7e9", "--gpu", "H100-SXM-80GB", "--format", "json")
	if code != 0 {
		t.Fatal("tokens failed")
	}
	var tok []struct {
		Provider string `json:"provider"`
		Cost     struct {
			USDPer1BTokens float64 `json:"usd_per_1b_tokens"`
		} `json:"cost"`
	}
	if err := json.Unmarshal([]byte(tokOut), &tok); err != nil || len(tok) == 0 {
		t.Fatalf("tokens --format json: %v\n%s", err, tokOut)
	}
	// A job across two nodes: the band follows each offer's interconnect.
	jobOut, code := run(t, "--config", cfg, "--store", dsn, "tokens", "--params", "7e9", "--gpu", "H100-SXM-80GB", "--gpus", "16",
		"--nodes", "2", "--format", "json")
	var job []struct {
		MFUSource string `json:"mfu_source"`
		Cost      struct {
			USDPer1BTokens float64 `json:"usd_per_1b_tokens"`
		} `json:"cost"`
	}
	if err := json.Unmarshal([]byte(jobOut), &job); code != 0 || err != nil || len(job) == 0 || !strings.Contains(job[0].MFUSource, "crosses") {
		t.Fatalf("tokens --gpus 16 --nodes 2: exit %d, %v\n%s", code, err, jobOut)
	}
	tok70Out, code := run(t, "--config", cfg, "--store", dsn, "tokens", "--params", "70e9", "--mfu", "0.4", "--tokens", "1.4e12", "--gpu", "H100-SXM-80GB", "--format", "json")
	if code != 0 {
		t.Fatal("tokens failed")
	}
	var tok70 []struct {
		Cost struct {
			USDPer1BTokens float64 `json:"usd_per_1b_tokens"`
			RunUSD         float64 `json:"run_usd"`
		} `json:"cost"`
	}
	if err := json.Unmarshal([]byte(tok70Out), &tok70); err != nil || len(tok70) == 0 {
		t.Fatalf("tokens --format json: %v\n%s", err, tok70Out)
	}
	base := serveStore(t, cfg, dsn)
	ctx := browser(t)

	t.Run("board", func(t *testing.T) {
		do(t, ctx, "open the board", chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`#offers tbody tr`)), chromedp.WaitVisible(chromedp.CSS(`#matrix td.best`)))
		all := eval[[]offerRow](t, ctx, readOffers)
		providers := map[string]bool{}
		for _, r := range all {
			providers[r.Provider] = true
		}
		if len(all) < 20 || !providers["lambda"] || !providers["azure"] || !providers["vast"] {
			t.Fatalf("board shows %d rows from %v", len(all), providers)
		}
		shot(t, ctx, "board")
		// Like with like: the matrix compares instance prices; GPU-only offers are
		// listed with their scope and compared among themselves; an unknown row has no
		// cheapest.
		if c := eval[string](t, ctx, `document.querySelector('#matrix caption').textContent`); !strings.Contains(c, "instance prices") {
			t.Errorf("matrix caption %q does not name its scope", c)
		}
		if n := eval[int](t, ctx, `[...document.querySelectorAll('#matrix tbody tr')].filter(tr => tr.cells[0].textContent === 'unknown' && tr.querySelector('td.best')).length`); n != 0 {
			t.Error("the unknown row has a cheapest cell")
		}
		gpuOnly := 0
		for _, r := range all {
			if r.Scope == "GPU only (no VM)" {
				gpuOnly++
			} else if r.Scope != "instance" {
				t.Fatalf("offer %+v: scope %q", r, r.Scope)
			}
		}
		if gpuOnly > 0 {
			// Every cheapest cell of the instance matrix is an instance price: the
			// GPU-only offers' prices are not in the matrix's cells' offers.
			bestGPUOnly := eval[int](t, ctx, `(() => { const rows = [...document.querySelectorAll('#offers tbody tr')].map(tr => [...tr.cells].map(td => td.textContent.trim()));
			  const gpuOnly = new Set(rows.filter(c => c[5] === 'GPU only (no VM)').map(c => c[0] + '|' + c[1] + '|' + c[7]));
			  const provs = [...document.querySelectorAll('#matrix thead th')].map(th => th.textContent);
			  let n = 0;
			  for (const tr of document.querySelectorAll('#matrix tbody tr')) {
			    const g = tr.cells[0].textContent;
			    [...tr.cells].forEach((td, i) => { if (td.classList.contains('best') && gpuOnly.has(g + '|' + provs[i] + '|' + td.textContent.trim())) {
			      const inst = rows.some(c => c[0] === g && c[1] === provs[i] && c[5] === 'instance' && c[7] === td.textContent.trim()); if (!inst) n++; } });
			  }
			  return n })()`)
			if bestGPUOnly != 0 {
				t.Errorf("%d cheapest cells of the instance matrix are GPU-only prices", bestGPUOnly)
			}
		}
		// How long the board took (logged, not asserted: timings belong to benchmarks).
		t.Logf("board: %v", eval[map[string]float64](t, ctx, `(() => { const n = performance.getEntriesByType('navigation')[0];
		  const api = performance.getEntriesByType('resource').filter(r => r.name.includes('/api/v1/prices'))[0];
		  return {domContentLoadedMs: n.domContentLoadedEventEnd, loadMs: n.loadEventEnd, pricesApiMs: api ? api.duration : -1, pricesApiBytes: api ? api.transferSize : -1} })()`))

		// A filter narrows the table and is written into the URL.
		eval[bool](t, ctx, `(() => { const s = document.querySelector('#f-provider'); s.value = 'lambda'; s.dispatchEvent(new Event('change')); return true })()`)
		lambda := eval[[]offerRow](t, ctx, readOffers)
		if len(lambda) == 0 || len(lambda) >= len(all) {
			t.Fatalf("provider=lambda shows %d of %d rows", len(lambda), len(all))
		}
		for _, r := range lambda {
			if r.Provider != "lambda" {
				t.Fatalf("provider filter let through %+v", r)
			}
		}
		if loc := eval[string](t, ctx, `location.search`); !strings.Contains(loc, "provider=lambda") {
			t.Errorf("URL after the filter: %q", loc)
		}
		// Sorting by price, descending, is in the URL too.
		do(t, ctx, "sort by price", chromedp.Click(chromedp.CSS(`button.sort[data-key="price"]`)))
		sorted := eval[[]offerRow](t, ctx, readOffers)
		first, _ := strconv.ParseFloat(sorted[0].Price, 64)
		last, _ := strconv.ParseFloat(sorted[len(sorted)-1].Price, 64)
		if first < last || !strings.Contains(eval[string](t, ctx, `location.search`), "dir=desc") {
			t.Errorf("descending sort: first %v, last %v, URL %q", first, last, eval[string](t, ctx, `location.search`))
		}
		// The shared URL opens the same view.
		do(t, ctx, "reload the filtered view", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`#offers tbody tr`)))
		if again := eval[[]offerRow](t, ctx, readOffers); len(again) != len(lambda) || again[0] != sorted[0] {
			t.Errorf("reloaded view differs: %d rows, first %+v (want %d, %+v)", len(again), again[0], len(lambda), sorted[0])
		}
		shot(t, ctx, "board-lambda")

		// The CSV download holds the rows of the filtered table.
		file, recs := downloadCSV(t, ctx)
		if len(recs)-1 != len(lambda) || recs[0][1] != "provider" || filepath.Base(file) != "gpuprice-lambda.csv" {
			t.Fatalf("%s: %d rows (table: %d), header %v", filepath.Base(file), len(recs)-1, len(lambda), recs[0])
		}
		for _, r := range recs[1:] {
			if r[1] != "lambda" {
				t.Fatalf("CSV row of another provider: %v", r)
			}
		}

		// Typing in the search box narrows further, as each key is pressed.
		do(t, ctx, "search for h100", chromedp.SendKeys(chromedp.CSS(`#f-q`), "h100"))
		h100 := eval[[]offerRow](t, ctx, readOffers)
		if len(h100) == 0 || len(h100) >= len(lambda) {
			t.Fatalf("search h100 among lambda's offers shows %d of %d rows", len(h100), len(lambda))
		}
		for _, r := range h100 {
			if !strings.HasPrefix(r.GPU, "H100") || r.Provider != "lambda" {
				t.Fatalf("search h100 let through %+v", r)
			}
		}
		if loc := eval[string](t, ctx, `location.search`); !strings.Contains(loc, "q=h100") || !strings.Contains(loc, "provider=lambda") {
			t.Errorf("URL after the search: %q", loc)
		}
	})

	t.Run("series", func(t *testing.T) {
		do(t, ctx, "open a series", chromedp.Navigate(base+"/series?gpu=H100-SXM-80GB&provider=lambda&pricing=on_demand"),
			chromedp.WaitVisible(chromedp.CSS(`#series-chart[data-series-drawn]`)), chromedp.WaitVisible(chromedp.CSS(`#volatility tbody tr`)))
		if n := eval[string](t, ctx, `document.querySelector('#series-chart').dataset.seriesDrawn`); n != "1" {
			t.Errorf("series chart drew %s lines, want 1 (lambda H100 on-demand)", n)
		}
		// The on-demand line's colour is on the canvas, not just the axes.
		if px := eval[int](t, ctx, canvasPixels("#series-chart", 47, 111, 222)); px < 100 {
			t.Errorf("%d pixels of the on-demand line on the canvas", px)
		}
		if bars := eval[int](t, ctx, `document.querySelectorAll('#series-chart details tbody tr').length`); bars < 10 {
			t.Errorf("series chart has %d bars, want the 14 imported days and today", bars)
		}
		// The market's p10–p90 band moves day by day with the imported prices: the
		// chart's numbers hold a low and a high per bar, and they differ between days,
		// as /api/v1/series' band says.
		band := eval[[][]string](t, ctx, `[...document.querySelectorAll('#series-chart details tbody tr')].map(tr => [...tr.cells].slice(-2).map(c => c.textContent))`)
		los := map[string]bool{}
		for _, b := range band {
			if b[0] != "–" {
				los[b[0]] = true
			}
			if lo, err1 := strconv.ParseFloat(b[0], 64); err1 == nil {
				if hi, err2 := strconv.ParseFloat(b[1], 64); err2 != nil || hi < lo {
					t.Errorf("band %v: high below low", b)
				}
			}
		}
		if len(los) < 5 {
			t.Errorf("band lows %v over %d bars: a flat band", los, len(band))
		}
		if h := eval[string](t, ctx, `[...document.querySelectorAll('#series-chart details thead th')].slice(-2).map(th => th.textContent).join(' | ')`); !strings.Contains(h, "p10–p90 low") {
			t.Errorf("band columns: %q", h)
		}
		shot(t, ctx, "series")
		// Volatility figures the window has too few bars for are shown missing, not 0.
		do(t, ctx, "open a day of hours", chromedp.Navigate(base+"/series?gpu=H100-SXM-80GB&provider=lambda&pricing=on_demand&since=1h&bar=1h"),
			chromedp.WaitVisible(chromedp.CSS(`#volatility tbody tr`)))
		if cells := eval[[]string](t, ctx, `[...document.querySelectorAll('#volatility tbody tr:first-child td')].slice(2, 4).map(td => td.textContent + '|' + td.title)`); len(cells) != 2 ||
			cells[0] != "–|too few bars in the window" || cells[1] != "–|too few bars in the window" {
			t.Errorf("volatility of one bar: %q", cells)
		}
		shot(t, ctx, "series-one-bar")
		// Azure sells the H100 on demand and reserved: a line per pricing kind, and the
		// bars of each as CSV.
		do(t, ctx, "open azure's H100", chromedp.Navigate(base+"/series?gpu=H100-SXM-80GB&provider=azure&pricing=on_demand"),
			chromedp.WaitVisible(chromedp.CSS(`#series-chart[data-series-drawn]`)))
		legend := eval[string](t, ctx, `document.querySelector('#series-chart .u-legend').textContent`)
		if n := eval[int](t, ctx, `Number(document.querySelector('#series-chart').dataset.seriesDrawn)`); n < 3 || !strings.Contains(legend, "on-demand") || !strings.Contains(legend, "reserved 1y") || !strings.Contains(legend, "reserved 3y") {
			t.Errorf("azure H100: %d lines drawn, legend %q", n, legend)
		}
		if csv := eval[string](t, ctx, `fetch(document.querySelector('.legend-notes a').href).then(r => r.ok ? r.text() : 'HTTP ' + r.status)`); !strings.HasPrefix(csv, "start,open,high,low,close") || strings.Count(csv, "\n") < 10 {
			t.Errorf("bars as CSV: %.200q", csv)
		}
		shot(t, ctx, "series-azure")
		// A week is drawn from hourly bars.
		do(t, ctx, "open a week of hours", chromedp.Navigate(base+"/series?gpu=H100-SXM-80GB&provider=lambda&pricing=on_demand&since=7d"),
			chromedp.WaitVisible(chromedp.CSS(`#series-chart[data-series-drawn]`)))
		if v := eval[[]string](t, ctx, `[document.querySelector('#s-bar').value, document.querySelector('#series-chart').dataset.seriesDrawn]`); v[0] != "1h" || v[1] != "1" {
			t.Errorf("7d series: bar %s, %s lines drawn", v[0], v[1])
		}
		// A hash link to the series opens the same view at its path.
		do(t, ctx, "open a hash link", chromedp.Navigate(base+"/#/series?gpu=H100-SXM-80GB&provider=lambda&pricing=on_demand"),
			chromedp.WaitVisible(chromedp.CSS(`#series-chart[data-series-drawn]`)))
		if p := eval[string](t, ctx, `location.pathname + location.search`); p != "/series?gpu=H100-SXM-80GB&provider=lambda&pricing=on_demand" {
			t.Errorf("hash link became %q", p)
		}
	})

	t.Run("tokens", func(t *testing.T) {
		do(t, ctx, "open the calculator", chromedp.Navigate(base+"/tokens?params=7e9&gpu=H100-SXM-80GB"), chromedp.WaitVisible(chromedp.CSS(`#tokens-answer`)))
		want := tok[0].Cost.USDPer1BTokens
		if got := eval[float64](t, ctx, `Number(document.querySelector('#tokens-answer').dataset.value)`); got != want {
			t.Errorf("calculator: $%v per 1B tokens, CLI: $%v", got, want)
		}
		if txt := eval[string](t, ctx, `document.querySelector('#tokens-answer').textContent`); txt != fmt.Sprintf("$%.4f", want) {
			t.Errorf("calculator shows %q, CLI %.4f", txt, want)
		}
		if ar := eval[string](t, ctx, `document.querySelector('#tokens-arithmetic').textContent`); !strings.Contains(ar, fmt.Sprintf("= $%.4f", want)) || !strings.Contains(ar, "6 × 7e9") {
			t.Errorf("arithmetic:\n%s", ar)
		}
		shot(t, ctx, "tokens")
		// The job's shape: the calculator's fields, the CLI's band and figure.
		do(t, ctx, "open the calculator for 16 GPUs on 2 nodes", chromedp.Navigate(base+"/tokens?params=7e9&gpu=H100-SXM-80GB&gpus=16&nodes=2"),
			chromedp.WaitVisible(chromedp.CSS(`#tokens-answer`)))
		if got := eval[float64](t, ctx, `Number(document.querySelector('#tokens-answer').dataset.value)`); got != job[0].Cost.USDPer1BTokens {
			t.Errorf("calculator, 16 GPUs on 2 nodes: $%v per 1B tokens, CLI: $%v", got, job[0].Cost.USDPer1BTokens)
		}
		if txt := eval[string](t, ctx, `document.getElementById('tokens-out').textContent`); !strings.Contains(txt, "crosses") {
			t.Errorf("calculator, 16 GPUs on 2 nodes: the band's reason is not shown:\n%.600s", txt)
		}
		do(t, ctx, "back to one node", chromedp.Navigate(base+"/tokens?params=7e9&gpu=H100-SXM-80GB"), chromedp.WaitVisible(chromedp.CSS(`#tokens-answer`)))
		// The form: another model and an MFU, submitted as a person would.
		do(t, ctx, "ask for 70B at MFU 0.4 over 1.4e12 tokens",
			chromedp.Clear(chromedp.CSS(`#t-params`)), chromedp.SendKeys(chromedp.CSS(`#t-params`), "70e9"),
			chromedp.Clear(chromedp.CSS(`#t-mfu`)), chromedp.SendKeys(chromedp.CSS(`#t-mfu`), "0.4"),
			chromedp.Clear(chromedp.CSS(`#t-tokens`)), chromedp.SendKeys(chromedp.CSS(`#t-tokens`), "1.4e12"),
			chromedp.Click(chromedp.CSS(`#t-go`)))
		waitFor(t, "the 70B answer", func() bool {
			return eval[bool](t, ctx, `!!document.querySelector('#tokens-answer') && document.querySelector('#tokens-answer').dataset.value !== '`+strconv.FormatFloat(want, 'g', -1, 64)+`'`)
		})
		if got := eval[float64](t, ctx, `Number(document.querySelector('#tokens-answer').dataset.value)`); got != tok70[0].Cost.USDPer1BTokens {
			t.Errorf("calculator at 70B, MFU 0.4: $%v per 1B tokens, CLI: $%v", got, tok70[0].Cost.USDPer1BTokens)
		}
		if run := eval[string](t, ctx, `document.querySelector('#tokens-run').textContent`); run != fmt.Sprintf("$%.2f", tok70[0].Cost.RunUSD) {
			t.Errorf("the 1.4e12-token run costs %s here, $%.2f in the CLI", run, tok70[0].Cost.RunUSD)
		}
		if loc := eval[string](t, ctx, `location.search`); !strings.Contains(loc, "params=70e9") || !strings.Contains(loc, "mfu=0.4") {
			t.Errorf("URL after the form: %q", loc)
		}
		// A GPU name as people type it: the family, and the answer says what it matched.
		do(t, ctx, "ask for any H100", chromedp.Clear(chromedp.CSS(`#t-gpu`)), chromedp.SendKeys(chromedp.CSS(`#t-gpu`), "h100"),
			chromedp.Click(chromedp.CSS(`#t-go`)), chromedp.WaitVisible(chromedp.CSS(`#tokens-out p.matched`)))
		if m := eval[string](t, ctx, `document.querySelector('#tokens-out p.matched').textContent`); !strings.Contains(m, "h100") || !strings.Contains(m, "H100-SXM-80GB") || !strings.Contains(m, "H100-PCIE-80GB") {
			t.Errorf("match note: %q", m)
		}
	})

	t.Run("spreads and index", func(t *testing.T) {
		do(t, ctx, "open the spreads", chromedp.Navigate(base+"/spreads?gpu=H100-SXM-80GB&pricing=on_demand"),
			chromedp.WaitVisible(chromedp.CSS(`#spreads-chart[data-series-drawn]`)))
		// Azure (hyperscaler), Lambda (specialist) and Vast (marketplace) all sell H100 SXM on demand.
		if n := eval[string](t, ctx, `document.querySelector('#spreads-chart').dataset.seriesDrawn`); n != "3" {
			t.Errorf("spreads chart drew %s tier lines, want 3", n)
		}
		// The ratio line is drawn.
		if px := eval[int](t, ctx, canvasPixels("#ratio-chart", 192, 57, 43)); px < 100 {
			t.Errorf("%d pixels of the ratio line on the canvas", px)
		}
		shot(t, ctx, "spreads")
		do(t, ctx, "open the index", chromedp.Navigate(base+"/index?gpu=H100-SXM-80GB&pricing=on_demand"),
			chromedp.WaitVisible(chromedp.CSS(`#index-chart[data-series-drawn]`)), chromedp.WaitVisible(chromedp.CSS(`#index-latest tbody tr`)))
		if n := eval[string](t, ctx, `document.querySelector('#index-chart').dataset.seriesDrawn`); n != "2" {
			t.Errorf("index chart drew %s lines, want hyperscaler and others", n)
		}
		shot(t, ctx, "index")
	})

	t.Run("sources", func(t *testing.T) {
		do(t, ctx, "open the sources", chromedp.Navigate(base+"/sources"), chromedp.WaitVisible(chromedp.CSS(`#sources tbody tr.st-failed td.error-text`)))
		// Crusoe's long error wraps inside its cell: the table stays within the page.
		w := eval[[]float64](t, ctx, `(() => { const td = document.querySelector('#sources tr.st-failed td.error-text');
		  const table = document.querySelector('#sources');
		  return [td.scrollWidth, td.clientWidth, table.getBoundingClientRect().right, document.documentElement.clientWidth, td.textContent.length] })()`)
		if w[0] > w[1] || w[2] > w[3] || w[4] < 200 {
			t.Errorf("error cell %v wide of %v, table ends at %v of %v, error %v characters", w[0], w[1], w[2], w[3], w[4])
		}
		shot(t, ctx, "sources")
	})

	t.Run("alerts", func(t *testing.T) {
		do(t, ctx, "open the alerts", chromedp.Navigate(base+"/alerts"), chromedp.WaitVisible(chromedp.CSS(`#alerts-firing tbody tr`)))
		rules := eval[[]string](t, ctx, `[...document.querySelectorAll('#alerts-firing tbody th')].map(th => th.firstChild.textContent)`)
		if strings.Join(rules, ",") != "cheap-h100,source-down" {
			t.Errorf("firing: %v, want cheap-h100 and source-down", rules)
		}
		// Each says what it compared: the cheapest price and when it held.
		if txt := eval[string](t, ctx, `document.querySelector('#alerts-firing tbody tr').textContent`); !strings.Contains(txt, "cheapest $") || !strings.Contains(txt, "$100.0000/GPU-h") {
			t.Errorf("cheap-h100 row: %q", txt)
		}
		// under-1k fired and resolved: listed as resolved, with what it fired and
		// resolved on and when.
		resolved := eval[[]string](t, ctx, `[...document.querySelectorAll('#alerts-resolved tbody tr')].map(tr => tr.textContent)`)
		if len(resolved) != 1 || !strings.HasPrefix(resolved[0], "under-1k") || !strings.Contains(resolved[0], "Resolved on $") ||
			!strings.Contains(resolved[0], "cheapest $") {
			t.Errorf("resolved alerts: %q", resolved)
		}
		// The navigation counts what fires, on every view.
		if n := eval[string](t, ctx, `document.querySelector('#nav-alerts .count-badge').textContent`); n != "2 firing" {
			t.Errorf("alert badge %q", n)
		}
		shot(t, ctx, "alerts")
		// The alert's link opens its series here (the public URL's host is not followed).
		do(t, ctx, "follow the price alert", chromedp.Click(chromedp.CSS(`#alerts-firing tbody tr:first-child td a`)),
			chromedp.WaitVisible(chromedp.CSS(`#series-chart[data-series-drawn]`)))
		if loc := eval[string](t, ctx, `location.origin + location.pathname`); loc != base+"/series" || !strings.Contains(eval[string](t, ctx, `location.search`), "gpu=H100-SXM-80GB") {
			t.Errorf("price alert link opened %s%s", loc, eval[string](t, ctx, `location.search`))
		}
		do(t, ctx, "back to the alerts", chromedp.Navigate(base+"/alerts"), chromedp.WaitVisible(chromedp.CSS(`#alerts-firing tbody tr`)),
			chromedp.Click(chromedp.CSS(`#alerts-firing tbody tr:nth-child(2) td a`)), chromedp.WaitVisible(chromedp.CSS(`#sources tr.current`)))
		if id := eval[string](t, ctx, `document.querySelector('#sources tr.current').id`); id != "source-crusoe" {
			t.Errorf("source alert link highlights %q", id)
		}
	})

	views := []struct{ name, path string }{
		{"board", "/?provider=lambda"}, // every element is checked: a shorter table, the same structure
		{"series", "/series?gpu=H100-SXM-80GB&provider=lambda&pricing=on_demand"},
		{"tokens", "/tokens?params=7e9&gpu=H100-SXM-80GB"},
		{"spreads", "/spreads?gpu=H100-SXM-80GB"},
		{"index", "/index?gpu=H100-SXM-80GB"},
		{"sources", "/sources"},
		{"alerts", "/alerts"},
	}
	t.Run("accessible", func(t *testing.T) {
		for _, v := range views {
			do(t, ctx, "open "+v.name, chromedp.Navigate(base+v.path), chromedp.WaitVisible(chromedp.CSS(`body[data-ready]`)))
			accessible(t, ctx, v.name)
		}
	})

	t.Run("narrow and dark", func(t *testing.T) {
		do(t, ctx, "a phone-sized dark screen", chromedp.EmulateViewport(390, 844), media("dark"))
		for _, v := range views {
			do(t, ctx, "open "+v.name+" narrow", chromedp.Navigate(base+v.path), chromedp.WaitVisible(chromedp.CSS(`body[data-ready]`)))
			if bg := eval[string](t, ctx, `getComputedStyle(document.body).backgroundColor`); bg != "rgb(20, 23, 29)" {
				t.Errorf("%s: dark mode background %q", v.name, bg)
			}
			// Wide tables and charts stay in their own boxes: the page never scrolls sideways.
			if w := eval[[]int](t, ctx, `[document.documentElement.scrollWidth, window.innerWidth]`); w[0] > w[1] {
				t.Errorf("%s: the page is %dpx wide on a %dpx screen", v.name, w[0], w[1])
			}
			if e := eval[string](t, ctx, `(document.querySelector('.error') || {}).textContent || ''`); e != "" {
				t.Errorf("%s: %s", v.name, e)
			}
			// Everything the page loaded came from this server: no CDN, no other host.
			loaded := eval[[]string](t, ctx, `performance.getEntriesByType('resource').map(r => r.name)`)
			api := 0
			for _, u := range loaded {
				if !strings.HasPrefix(u, base+"/") {
					t.Errorf("%s loaded %s from elsewhere", v.name, u)
				}
				if strings.HasPrefix(u, base+"/api/v1/") {
					api++
				}
			}
			if len(loaded) < 3 || api == 0 {
				t.Errorf("%s loaded only %v", v.name, loaded)
			}
			// What a dark, narrow screen changes: colours, and boxes that scroll.
			accessible(t, ctx, v.name+" (dark)", "color-contrast", "scrollable-region-focusable")
			shotOf(t, ctx, v.name+"-narrow-dark", chromedp.CaptureScreenshot())
		}
		do(t, ctx, "back to a light desktop", chromedp.EmulateViewport(1280, 900), media("light"))
	})
}

// axeSource is axe-core (npm, copied by web/build.sh), the accessibility checker the
// browser tests run in each view.
var axeSource = sync.OnceValues(func() (string, error) {
	b, err := os.ReadFile(filepath.Join("..", "..", "analytics", "api", "web", "testdata", "axe.min.js"))
	return string(b), err
})

// accessible runs axe-core's WCAG 2.1 A and AA rules (or only the given rules) on
// the page and reports each violation (contrast, names, labels, landmarks, table
// headers, …).
func accessible(t *testing.T, ctx context.Context, view string, rules ...string) {
	t.Helper()
	src, err := axeSource()
	if err != nil {
		t.Fatal(err)
	}
	eval[bool](t, ctx, src+"\n;true")
	type violation struct {
		ID, Impact, Help string
		Targets          []string
	}
	only := `{type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa']}`
	if len(rules) > 0 {
		b, _ := json.Marshal(rules)
		only = `{type: 'rule', values: ` + string(b) + `}`
	}
	vs := eval[[]violation](t, ctx, `axe.run(document, {runOnly: `+only+`})
	  .then(r => r.violations.map(v => ({ID: v.id, Impact: v.impact || '', Help: v.help, Targets: v.nodes.slice(0, 3).map(n => n.target.join(' '))})))`)
	for _, v := range vs {
		t.Errorf("%s: accessibility: %s (%s): %s, e.g. %v", view, v.ID, v.Impact, v.Help, v.Targets)
	}
}
