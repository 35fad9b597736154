package main

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pdfcpu/pdfcpu/pkg/api"
	"github.com/pdfcpu/pdfcpu/pkg/pdfcpu"

	"github.com/gpuprice/gpuprice/analytics/publish"
	"github.com/gpuprice/gpuprice/analytics/report"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
	"github.com/gpuprice/gpuprice/store/storetest"
)

// reportStore fills a store through the real pipeline: a collection of the recorded
// Azure, Lambda and Vast.ai responses, then `import csv` of two years of daily
// history made by storetest.GenerateCSV (SYNTHETIC test data: 7 providers × 4 GPUs
// × on-demand, spot and reserved series, never presented as prices).
func reportStore(t *testing.T, dsn string) (cfg string, at time.Time) {
	t.Helper()
	srv := replay(t)
	cfg = writeConfig(t, srv.URL)
	if _, code := run(t, "--config", cfg, "--store", dsn, "collect"); !collected(code) {
		t.Fatal("collect failed")
	}
	at = time.Now().UTC().Truncate(time.Second)
	var buf bytes.Buffer
	n, err := storetest.GenerateCSV(&buf, storetest.GenSpec{Series: 112, Steps: 730, Start: at.Truncate(time.Hour).Add(-729 * 24 * time.Hour),
		Step: 24 * time.Hour, Seed: 14})
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "history.csv")
	if err := os.WriteFile(p, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if out, code := run(t, "--config", cfg, "--store", dsn, "import", "csv", p); code != 0 {
		t.Fatalf("import failed:\n%s", out)
	}
	t.Logf("imported %d rows of 2 years' history in %s", n, time.Since(start).Round(time.Millisecond))
	return cfg, at
}

var (
	tableRE = regexp.MustCompile(`(?s)<table id="([^"]+)">(.*?)</table>`)
	rowRE   = regexp.MustCompile(`(?s)<tr>(.*?)</tr>`)
	cellRE  = regexp.MustCompile(`(?s)<t[hd][^>]*>(.*?)</t[hd]>`)
	colRE   = regexp.MustCompile(`<th[^>]* data-col="([^"]*)"`)
	cmdRE   = regexp.MustCompile(`<p class="cmd">\$ (.*?)</p>`)
)

// htmlTables reads the report's tables by id: each row a map from the column
// name to the cell as the reader sees it ("missing" becomes "", as in CSV).
func htmlTables(t *testing.T, doc string) map[string][]map[string]string {
	t.Helper()
	out := map[string][]map[string]string{}
	for _, m := range tableRE.FindAllStringSubmatch(doc, -1) {
		var header []string
		rows := []map[string]string{}
		for i, r := range rowRE.FindAllStringSubmatch(m[2], -1) {
			var cells []string
			for _, c := range cellRE.FindAllStringSubmatch(r[1], -1) {
				cells = append(cells, html.UnescapeString(c[1]))
			}
			if i == 0 {
				// The command's column names (data-col), under the reader's.
				header = cells
				if cols := colRE.FindAllStringSubmatch(r[1], -1); len(cols) == len(cells) {
					for j, c := range cols {
						header[j] = html.UnescapeString(c[1])
					}
				}
				continue
			}
			if len(cells) == 1 && cells[0] == "none" {
				continue
			}
			row := map[string]string{}
			for j, h := range header {
				v := cells[j]
				if v == "missing" {
					v = ""
				}
				row[h] = v
			}
			rows = append(rows, row)
		}
		out[m[1]] = rows
	}
	return out
}

// csvRows reads CSV output as maps from column name to cell.
func csvRows(t *testing.T, s string) []map[string]string {
	t.Helper()
	recs := parseCSV(t, s)
	var out []map[string]string
	for _, r := range recs[1:] {
		m := map[string]string{}
		for i, h := range recs[0] {
			m[h] = r[i]
		}
		out = append(out, m)
	}
	return out
}

// sameRows checks that the report's table shows the command's rows: the same
// rows in the same order, every column the table has equal.
func sameRows(t *testing.T, what string, got, want []map[string]string) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: the report has %d rows, the command %d", what, len(got), len(want))
		return
	}
	if len(got) == 0 {
		t.Errorf("%s: no rows to compare (the test store should give some)", what)
	}
	for i := range got {
		for k, v := range got[i] {
			if w, ok := want[i][k]; !ok || w != v {
				t.Errorf("%s row %d column %s: report %q, command %q", what, i, k, v, w)
			}
		}
	}
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	out, code := run(t, args...)
	if code != 0 {
		t.Fatalf("gpuprice %s: exit %d", strings.Join(args, " "), code)
	}
	return out
}

func TestReportDuckDB(t *testing.T) {
	testReport(t, "duckdb://"+filepath.Join(t.TempDir(), "report.duckdb"), true)
}

func TestIntegrationClickHouseReport(t *testing.T) {
	testReport(t, chtest.FreshDSN(t, "report"), false)
}

// testReport: `gpuprice report` over two years of history shows exactly the numbers
// the commands it names give for the same filters (and says which), missing values
// as missing; the API serves the same report; with browser, the HTML renders in
// headless Chromium with no console error and its charts drawn, and the PDF has
// every section in its outline (screenshot and PDF kept as artefacts).
func testReport(t *testing.T, dsn string, browse bool) {
	cfg, at := reportStore(t, dsn)
	dir := t.TempDir()
	g := []string{"--config", cfg, "--store", dsn}
	atS := at.Format(time.RFC3339)
	page := filepath.Join(dir, "report.html")
	start := time.Now()
	mustRun(t, append(g, "report", "--gpu", "h100 sxm", "--since", "730d", "--at", atS, "--quote", "3.00", "--term", "1y", "--gpus", "8", "--out", page)...)
	t.Logf("report over 2 years built in %s", time.Since(start).Round(time.Millisecond))
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	tables := htmlTables(t, doc)
	win := []string{"--gpu", "H100-SXM-80GB", "--since", "730d", "--at", atS}

	// Each table is the rows of the command it names.
	hist := csvRows(t, mustRun(t, append(append(g, "history", "--cheapest", "10", "--format", "csv"), win...)...))
	var stats, cheap []map[string]string
	for _, r := range hist {
		if r["row"] == "stats" {
			stats = append(stats, r)
		} else {
			cheap = append(cheap, r)
		}
	}
	sameRows(t, "history", tables["history-table"], stats)
	sameRows(t, "cheapest", tables["cheapest-table"], cheap)
	if len(stats) < 8 {
		t.Errorf("history: %d rows, want the market and at least 7 providers", len(stats))
	}
	// The report's token costs are of the quote's job (8 GPUs), as tokens --gpus 8 computes them.
	tok := csvRows(t, mustRun(t, append(g, "tokens", "--gpu", "H100-SXM-80GB", "--pricing", "on_demand", "--params", "7e+10",
		"--precision", "bf16", "--limit", "10", "--gpus", "8", "--format", "csv")...))
	sameRows(t, "tokens", tables["tokens-table"], tok)
	sp := csvRows(t, mustRun(t, append(append(g, "spreads", "--pricing", "on_demand", "--format", "csv"), win...)...))
	sameRows(t, "spreads", tables["spreads-days"], sp[max(0, len(sp)-7):])
	vol := csvRows(t, mustRun(t, append(g, "volatility", "--gpu", "H100-SXM-80GB", "--pricing", "spot", "--window", "730d", "--bar", "1d",
		"--at", atS, "--format", "csv")...))
	sameRows(t, "volatility", tables["volatility-table"], vol[:min(10, len(vol))])
	idx := csvRows(t, mustRun(t, append(append(g, "index", "--pricing", "on_demand", "--format", "csv"), win...)...))
	lastOf := map[string]map[string]string{}
	var groups []string
	for _, r := range idx {
		if lastOf[r["group"]] == nil {
			groups = append(groups, r["group"])
		}
		lastOf[r["group"]] = r
	}
	var idxLast []map[string]string
	for _, gname := range groups {
		idxLast = append(idxLast, lastOf[gname])
	}
	sameRows(t, "index", tables["index-table"], idxLast)

	// The discounts, recomputed here from the commands' offers: every reserved_1y
	// offer against the on-demand offer of the same SKU (its purchase option aside),
	// region and zone.
	offers := func(pricing string) []map[string]string {
		var out []map[string]string
		for _, r := range csvRows(t, mustRun(t, append(append(g, "history", "--pricing", pricing, "--cheapest", "1000", "--format", "csv"), win...)...)) {
			if r["row"] == "cheapest" {
				out = append(out, r)
			}
		}
		return out
	}
	key := func(r map[string]string) string {
		sku := r["sku"]
		for _, opt := range []string{":all-upfront", ":partial-upfront", ":no-upfront"} {
			sku = strings.TrimSuffix(sku, opt)
		}
		return r["provider"] + "|" + sku + "|" + r["region"] + "|" + r["zone"]
	}
	od := map[string]float64{}
	for _, r := range offers("on_demand") {
		od[key(r)], _ = strconv.ParseFloat(r["price_usd_gpu_hour"], 64)
	}
	perProvider := map[string][]float64{}
	for _, r := range offers("reserved_1y") {
		p, _ := strconv.ParseFloat(r["price_usd_gpu_hour"], 64)
		if base, ok := od[key(r)]; ok {
			perProvider[r["provider"]] = append(perProvider[r["provider"]], (1-p/base)*100)
		} else if _, ok := perProvider[r["provider"]]; !ok {
			perProvider[r["provider"]] = nil
		}
	}
	checked := 0
	for _, r := range tables["discounts-table"] {
		if r["pricing"] != "reserved_1y" {
			continue
		}
		v, ok := perProvider[r["provider"]]
		if !ok {
			t.Errorf("discounts: %s has no reserved_1y offer in the command's answer", r["provider"])
			continue
		}
		want := ""
		if len(v) > 0 {
			sort.Float64s(v)
			m := v[len(v)/2]
			if len(v)%2 == 0 {
				m = (v[len(v)/2-1] + v[len(v)/2]) / 2
			}
			want = strconv.FormatFloat(m, 'f', 2, 64)
		}
		if r["median_discount_pct"] != want || r["pairs"] != strconv.Itoa(len(v)) {
			t.Errorf("discounts %s reserved_1y: report %s over %s pairs, command's offers %q over %d", r["provider"], r["median_discount_pct"], r["pairs"], want, len(v))
		}
		checked++
	}
	// One definition: the market table's reserved discount of each provider is the
	// discount table's reserved_1y median.
	for _, st := range stats[1:] {
		for _, r := range tables["discounts-table"] {
			if r["provider"] == st["provider"] && r["pricing"] == "reserved_1y" && r["median_discount_pct"] != st["reserved_discount_pct"] &&
				!(r["median_discount_pct"] == "missing" && st["reserved_discount_pct"] == "missing") {
				t.Errorf("%s: market table's reserved discount %s, discount table's %s", st["provider"], st["reserved_discount_pct"], r["median_discount_pct"])
			}
		}
	}
	if checked != len(perProvider) {
		t.Errorf("discounts: %d providers with reserved_1y in the report, %d in the command's answer", checked, len(perProvider))
	}
	if !strings.Contains(doc, `<td class="missing">missing</td>`) {
		t.Error("no missing cell: the store has providers without an on-demand twin for their reserved offers (a missing discount)")
	}

	// The target price, like for like: the cheapest one-year offer of the report's
	// own term table, and the saving at it over a year for 8 GPUs.
	var cheapRow map[string]string
	for _, r := range tables["target-table"] {
		if r["reference"] == "cheapest one-year offer" {
			cheapRow = r
		}
	}
	if cheapRow == nil || len(tables["term-offers"]) == 0 || cheapRow["$/GPU-hour"] != tables["term-offers"][0]["price_usd_gpu_hour"] {
		t.Errorf("target: cheapest one-year row %v, term offers %v", cheapRow, tables["term-offers"])
	} else if c, _ := strconv.ParseFloat(cheapRow["$/GPU-hour"], 64); 3.00-c > 0 {
		saving := strconv.FormatFloat((3.00-c)*8760*8, 'f', 2, 64)
		if !strings.Contains(strings.ReplaceAll(doc, ",", ""), "$"+saving+" over the 1y term for 8 GPU(s)") {
			t.Errorf("target: no saving of $%s over the term in the report", saving)
		}
	}
	if !strings.Contains(doc, "cheapest of") || strings.Contains(doc, "of the market&#39;s series-days") {
		t.Error("target: the verdict does not rank the quote among its term's offers")
	}

	// Every command the report names runs as written.
	cmds := cmdRE.FindAllStringSubmatch(doc, -1)
	if len(cmds) < 6 {
		t.Errorf("the report names %d commands, want one per section", len(cmds))
	}
	for _, c := range cmds {
		line := html.UnescapeString(c[1])
		if strings.Contains(line, "KIND") {
			line = strings.Replace(strings.SplitN(line, " (KIND", 2)[0], "KIND", "reserved_1y", 1)
		}
		args := strings.Fields(strings.TrimPrefix(line, "gpuprice "))
		mustRun(t, append(g, args...)...)
	}

	// Every section, in order; the method cites the data.
	for _, id := range []string{"summary", "market", "cheapest", "discounts", "spreads", "volatility", "tokens", "index", "risk", "target", "method"} {
		if !strings.Contains(doc, `<section id="`+id+`"`) {
			t.Errorf("section %s missing", id)
		}
	}
	sha := regexp.MustCompile(`<meta name="gpuprice-data-sha256" content="([0-9a-f]{64})">`).FindStringSubmatch(doc)
	if sha == nil || !strings.Contains(doc, "Data SHA-256 "+sha[1]) {
		t.Fatal("the report does not cite its data's SHA-256")
	}
	for _, bad := range []string{"<script", "http://", "https://", "src="} {
		if strings.Contains(doc, bad) {
			t.Errorf("the report is not self-contained: it has %q", bad)
		}
	}

	// Markdown: the same sections and numbers.
	md := mustRun(t, append(g, "report", "--gpu", "H100-SXM-80GB", "--since", "730d", "--at", atS, "--quote", "3", "--gpus", "8", "--format", "markdown")...)
	for _, title := range report.Titles {
		if !strings.Contains(md, "\n## "+title+"\n") {
			t.Errorf("markdown: no section %q", title)
		}
	}
	if !strings.Contains(md, "| * | "+stats[0]["series"]+" | "+stats[0]["days"]+" | "+stats[0]["samples"]+" | "+stats[0]["p10"]+" | ") {
		t.Errorf("markdown: the market's row differs from history's %v", stats[0])
	}
	// --provider (repeatable) and --region narrow the report as they narrow history.
	narrow := filepath.Join(dir, "narrow.html")
	mustRun(t, append(g, "report", "--gpu", "H100-SXM-80GB", "--since", "730d", "--at", atS, "--provider", "aws", "--provider", "lambda", "--out", narrow)...)
	nb, err := os.ReadFile(narrow)
	if err != nil {
		t.Fatal(err)
	}
	var nstats []map[string]string
	for _, r := range csvRows(t, mustRun(t, append(append(g, "history", "--provider", "aws,lambda", "--format", "csv"), win...)...)) {
		if r["row"] == "stats" {
			nstats = append(nstats, r)
		}
	}
	sameRows(t, "history --provider aws,lambda", htmlTables(t, string(nb))["history-table"], nstats)
	if len(nstats) != 3 || nstats[1]["provider"] != "aws" || nstats[2]["provider"] != "lambda" {
		t.Errorf("history --provider aws,lambda: %v", nstats)
	}

	// A published snapshot of the window's last days is cited (publish.Cite).
	snap := filepath.Join(dir, "snapshots")
	func() {
		st, err := store.Open(context.Background(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		src, ok := st.(publish.Source)
		if !ok {
			t.Fatalf("store %T cannot be published", st)
		}
		if _, err := publish.Publish(context.Background(), src, snap, publish.Days(at.Add(-48*time.Hour), at), publish.Options{}); err != nil {
			t.Fatal(err)
		}
	}()
	cited := mustRun(t, append(g, "report", "--gpu", "H100-SXM-80GB", "--since", "730d", "--at", atS, "--snapshot", snap, "--format", "markdown")...)
	if !regexp.MustCompile("Published snapshot: gpuprice snapshot sha256:[0-9a-f]{64} \\(" + regexp.QuoteMeta(snap) + "\\), days [0-9-]+ to [0-9-]+: 3 of 730 days published").MatchString(cited) {
		t.Errorf("the report does not cite the snapshot:\n%s", cited[strings.Index(cited, "## Method"):])
	}
	// Bad input is a usage error naming the flag.
	if _, code := run(t, append(g, "report", "--gpu", "H100-SXM-80GB", "--term", "2y")...); code != 2 {
		t.Errorf("--term 2y: exit %d, want 2", code)
	}

	if browse {
		ctx := browser(t)
		do(t, ctx, "open the report", chromedp.Navigate(report.FileURL(page)))
		type chart struct {
			ID      string `json:"id"`
			Lines   int    `json:"lines"`
			Drawn   int    `json:"drawn"`
			Band    bool   `json:"band"`
			Missing bool   `json:"missing"`
		}
		charts := eval[[]chart](t, ctx, `[...document.querySelectorAll('svg.chart')].map(s => ({id: s.id,
			lines: s.querySelectorAll('path.line').length,
			drawn: [...s.querySelectorAll('path.line')].filter(p => p.getTotalLength() > 0 && p.getBoundingClientRect().width > 0).length,
			band: !!s.querySelector('rect.band'), missing: !!s.querySelector('text.missing')}))`)
		want := map[string]int{"chart-market": 10, "chart-spreads": 3, "chart-index": 4}
		for _, c := range charts {
			if c.Missing || c.Drawn < want[c.ID] || c.Drawn != c.Lines {
				t.Errorf("chart %s: %d of %d lines drawn (want at least %d), missing %v", c.ID, c.Drawn, c.Lines, want[c.ID], c.Missing)
			}
			delete(want, c.ID)
			if c.ID == "chart-market" && !c.Band {
				t.Error("the market chart has no p10–p90 band")
			}
		}
		if len(want) > 0 {
			t.Errorf("charts not in the page: %v", want)
		}
		// Every table fits the page at a desktop's width: no table scrolls in its box
		// (the percentile table did at 1,300 px).
		for _, w := range []int64{1300, 1024} {
			do(t, ctx, "a desktop's width", chromedp.EmulateViewport(w, 900))
			if clipped := eval[[]string](t, ctx, `[...document.querySelectorAll('.tablewrap')]
				.filter(w => w.scrollWidth > w.clientWidth + 1).map(w => w.firstElementChild.id + ' ' + w.scrollWidth + '>' + w.clientWidth)`); len(clipped) > 0 {
				t.Errorf("at %d px these tables are wider than the page: %v", w, clipped)
			}
		}
		shotOf(t, ctx, "report", chromedp.FullScreenshot(100))
		if p := filepath.Join(artifacts(t), "webapp-report.png"); fileSize(p) == 0 {
			t.Errorf("no screenshot at %s", p)
		}

		// The PDF, printed by the command with its own headless Chromium.
		pdf := filepath.Join(artifacts(t), "report.pdf")
		mustRun(t, append(g, "report", "--gpu", "H100-SXM-80GB", "--since", "730d", "--at", atS, "--quote", "3", "--gpus", "8", "--out", pdf)...)
		t.Logf("PDF: %s", pdf)
		checkPDF(t, pdf)
	}

	// The API serves the same report (and the CLI, with serve holding an embedded
	// store, asks it).
	base := serveStore(t, cfg, dsn)
	q := "gpu=H100-SXM-80GB&since=730d&at=" + atS + "&quote=3.00&term=1y&gpus=8"
	code, hdr, body := doReq(t, "GET", base+"/api/v1/report?"+q, nil)
	if code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") || !strings.Contains(hdr.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Fatalf("/api/v1/report: %d %q %q", code, hdr.Get("Content-Type"), hdr.Get("Content-Security-Policy"))
	}
	if !strings.Contains(body, sha[1]) {
		t.Error("/api/v1/report: another data SHA-256 than the CLI's for the same query")
	}
	// The report's tag revalidates: the same query with it is 304 Not Modified.
	if etag := hdr.Get("ETag"); etag == "" {
		t.Error("/api/v1/report: no ETag")
	} else if code, _, _ := doReq(t, "GET", base+"/api/v1/report?"+q, map[string]string{"If-None-Match": etag}); code != http.StatusNotModified {
		t.Errorf("/api/v1/report with If-None-Match %s: %d, want 304", etag, code)
	}
	apiTables := htmlTables(t, body)
	for id, rows := range tables {
		if id == "sources-table" {
			continue // the CLI's collect and serve's start differ in last runs
		}
		sameRows(t, "API "+id, apiTables[id], rows)
	}
	// The command, the embedded store held by serve, asks serve's API: the same data.
	viaAPI := mustRun(t, append(g, "report", "--gpu", "H100-SXM-80GB", "--since", "730d", "--at", atS, "--quote", "3.00", "--gpus", "8", "--format", "markdown")...)
	if !strings.Contains(viaAPI, "Data SHA-256 "+sha[1]) {
		t.Error("report while serve runs: another data SHA-256 than before")
	}
	if code, _, body := doReq(t, "GET", base+"/api/v1/report?gpu=H100-SXM-80GB&quote=-1", nil); code != 400 || !strings.Contains(body, `"parameter":"quote"`) {
		t.Errorf("/api/v1/report?quote=-1: %d %s", code, body)
	}
	if code, hdr, body := doReq(t, "GET", base+"/api/v1/report?"+q+"&format=markdown", nil); code != 200 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/markdown") ||
		!strings.Contains(body, "## Target price") {
		t.Errorf("/api/v1/report markdown: %d %q", code, hdr.Get("Content-Type"))
	}
}

func fileSize(p string) int64 {
	fi, err := os.Stat(p)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// checkPDF: a PDF of more than one page whose outline lists every section.
func checkPDF(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if head := make([]byte, 5); func() bool { _, err := f.Read(head); return err != nil || string(head) != "%PDF-" }() {
		t.Fatalf("%s is not a PDF", path)
	}
	_, _ = f.Seek(0, 0)
	pages, err := api.PageCount(f, nil)
	if err != nil || pages < 2 {
		t.Errorf("PDF: %d pages (%v), want several", pages, err)
	}
	_, _ = f.Seek(0, 0)
	bms, err := api.Bookmarks(f, nil)
	if err != nil {
		t.Fatalf("PDF outline: %v", err)
	}
	var titles []string
	var walk func([]pdfcpu.Bookmark)
	walk = func(bs []pdfcpu.Bookmark) {
		for _, b := range bs {
			titles = append(titles, strings.TrimSpace(b.Title))
			walk(b.Kids)
		}
	}
	walk(bms)
	for _, id := range []string{"summary", "market", "cheapest", "discounts", "spreads", "volatility", "tokens", "index", "risk", "target", "method"} {
		if !slices.Contains(titles, report.Titles[id]) {
			t.Errorf("PDF outline has no section %q: %s", report.Titles[id], fmt.Sprint(titles))
		}
	}
	checkPDFText(t, path, pages)
}

// checkPDFText reads the text of each page of the PDF (pdftotext, poppler-utils) as a
// reader would: the verdict on the first page, no page that is a section's heading
// over empty space, human column headers (vs reference, not quote_vs_reference_pct).
func checkPDFText(t *testing.T, path string, pages int) {
	t.Helper()
	out, err := exec.Command("pdftotext", "-layout", path, "-").Output()
	if err != nil {
		t.Fatalf("pdftotext %s (poppler-utils): %v", path, err)
	}
	text := strings.Split(strings.TrimRight(string(out), "\f"), "\f")
	if len(text) != pages {
		t.Errorf("pdftotext read %d pages, the PDF has %d", len(text), pages)
	}
	if len(text) == 0 || !strings.Contains(text[0], report.Titles["summary"]) || !strings.Contains(text[0], "Verdict") {
		t.Errorf("PDF page 1 does not open with the verdict:\n%s", text[0])
	}
	for i, page := range text {
		var lines []string
		for _, l := range strings.Split(page, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				lines = append(lines, l)
			}
		}
		if len(lines) > 0 && len(lines) <= 3 {
			for _, title := range report.Titles {
				if strings.HasSuffix(lines[len(lines)-1], title) || lines[0] == title {
					t.Errorf("PDF page %d is the heading %q over empty space:\n%s", i+1, title, page)
				}
			}
		}
		for _, title := range report.Titles {
			if len(lines) > 3 && lines[len(lines)-1] == title {
				t.Errorf("PDF page %d ends with the heading %q, its section on the next page", i+1, title)
			}
		}
		for _, machine := range []string{"quote_vs_reference_pct", "_pct", "median_discount", "latest_median"} {
			if strings.Contains(page, machine) {
				t.Errorf("PDF page %d has the column name %q, not the reader's", i+1, machine)
			}
		}
	}
}
