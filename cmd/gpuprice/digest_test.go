package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/analytics/digest"
	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/cli"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
	"mvdan.cc/sh/v3/shell"
)

// TestDigestRecordedDuckDB: the digest of the recorded example (2026-11-01) with
// the same two Lambda H100 on-demand offers imported a week earlier at 4.20 and 4.30
// (now 3.99 and 4.09) and one Vast.ai spot offer at 0.50 (now 0.40), in the three
// forms, with figures checked by hand.
func TestDigestRecordedDuckDB(t *testing.T) {
	testDigestRecorded(t, "duckdb://"+filepath.Join(t.TempDir(), "digest.duckdb"))
}

// TestIntegrationClickHouseDigestRecorded is the same on ClickHouse.
func TestIntegrationClickHouseDigestRecorded(t *testing.T) {
	testDigestRecorded(t, chtest.FreshDSN(t, "digest"))
}

// weekEarlier writes the rows of sku → price a week before the recorded example,
// from the store's own CSV (the header `import csv` reads).
func weekEarlier(t *testing.T, dsn string, prices map[string]float64) string {
	t.Helper()
	var rows [][]string
	kinds := [][]string{{"--provider", "lambda", "--pricing", "on_demand"}, {"--provider", "vast", "--pricing", "spot"}}
	for _, args := range kinds {
		base := []string{"--store", dsn, "--raw-csv", "prices", "--gpu", "H100-SXM-80GB", "--format", "csv"}
		out, code := run(t, append(base, args...)...)
		if code != 0 {
			t.Fatal("prices failed")
		}
		recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		if rows == nil {
			rows = [][]string{recs[0]}
		}
		rows = append(rows, recs[1:]...)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	out := [][]string{rows[0]}
	for _, r := range rows[1:] {
		p, ok := prices[r[col["sku"]]]
		if !ok {
			continue
		}
		n, _ := strconv.Atoi(r[col["gpu_count"]])
		r[col["observed_at"]], r[col["effective_at"]] = "2026-10-25T12:00:00Z", "2026-10-25T12:00:00Z"
		r[col["origin"]] = ""
		r[col["price_usd_gpu_hour"]] = strconv.FormatFloat(p, 'f', -1, 64)
		r[col["price_usd_hour"]] = strconv.FormatFloat(p*float64(n), 'f', -1, 64)
		if r[col["unit"]] == "gpu_hour" {
			r[col["price_native"]] = strconv.FormatFloat(p, 'f', -1, 64)
		} else {
			r[col["price_native"]] = strconv.FormatFloat(p*float64(n), 'f', -1, 64)
		}
		out = append(out, r)
	}
	if len(out) != 1+len(prices) {
		t.Fatalf("week-earlier rows: %d of %d", len(out)-1, len(prices))
	}
	path := filepath.Join(t.TempDir(), "week.csv")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	_ = w.WriteAll(out)
	f.Close()
	return path
}

func testDigestRecorded(t *testing.T, dsn string) {
	recorded := filepath.Join("..", "..", "examples", "recorded")
	if _, code := run(t, "--store", dsn, "reparse", recorded); !collected(code) {
		t.Fatalf("reparse %s failed", recorded)
	}
	week := weekEarlier(t, dsn, map[string]float64{"gpu_8x_h100_sxm_80gb": 4.20, "gpu_4x_h100_sxm_80gb": 4.30,
		"vast:148199:1x": 0.50})
	if _, code := run(t, "--store", dsn, "import", "csv", week); code != 0 {
		t.Fatal("import csv failed")
	}
	bandsBesideExample(t, dsn)
	args := []string{"--store", dsn, "digest", "--gpu", "H100-SXM-80GB", "--at", "2026-11-02"}
	var d digest.Digest
	runJSON(t, &d, append(args, "--format", "json")...)
	if len(d.GPUs) != 1 || len(d.GPUs[0].Lines) != 2 {
		t.Fatalf("digest: %+v", d)
	}
	od := d.GPUs[0].Lines[0]
	if od.Pricing != "on_demand" || len(od.Tiers) != 3 {
		t.Fatalf("on-demand line: %+v", od)
	}
	// The specialist median on 2026-11-02 is history's (4.04, 12 series); the
	// cheapest hyperscaler offer AWS's 6.88 in us-east-2.
	if s := od.Tiers[2]; s.Tier != "specialist" || s.Series != 12 || s.Median != 4.04 {
		t.Errorf("specialist tier: %+v", s)
	}
	if h := od.Tiers[0]; h.Tier != "hyperscaler" || h.Cheapest != 6.88 || h.Provider != "aws" || h.Region != "us-east-2" {
		t.Errorf("hyperscaler tier: %+v", h)
	}
	// Others' chained index: day one is the median of the two imported offers,
	// (4.20 + 4.30) / 2 = 4.25; on 2026-11-01 only they are matched, so the change is
	// their geometric mean relative √(3.99/4.20 × 4.09/4.30) − 1 = −4.9419 %, never
	// the unmatched medians' 4.25 → 3.90 (−8.2 %). The hyperscalers did not move.
	var others, hyper *digest.Change
	for i, c := range od.Changes {
		switch c.Group {
		case "others":
			others = &od.Changes[i]
		case "hyperscaler":
			hyper = &od.Changes[i]
		}
	}
	if others == nil || others.From != 4.25 || others.Pct == nil || *others.Pct != -4.9419 ||
		others.FromDay.Format("2006-01-02") != "2026-10-26" {
		t.Errorf("others' change: %+v", others)
	}
	if hyper == nil || hyper.Pct == nil || *hyper.Pct != 0 {
		t.Errorf("hyperscalers' change: %+v", hyper)
	}
	// Spot: the one imported Vast.ai offer, 0.50 → 0.40: −20 %.
	sp := d.GPUs[0].Lines[1]
	if sp.Pricing != "spot" || len(sp.Changes) != 1 || sp.Changes[0].Pct == nil || *sp.Changes[0].Pct != -20 {
		t.Errorf("spot line: %+v", sp)
	}
	// The largest spot move crosses the week's start: from the 0.50 in force when it
	// began (imported 2026-10-25 12:00, carried in) to 0.40: 0.40 ÷ 0.50 − 1 = −20 %.
	// The week's own bars alone (one, at 0.40) would tell no move.
	mv := d.GPUs[0].SpotMoves
	if len(mv) != 1 || mv[0].SKU != "vast:148199:1x" || !mv[0].CarriedIn || mv[0].From != 0.5 || mv[0].To != 0.4 ||
		mv[0].MovePct != -20 || mv[0].Low != 0.4 || mv[0].High != 0.5 || mv[0].Changes != 1 ||
		mv[0].FromAt.Format(time.RFC3339) != "2026-10-25T12:00:00Z" {
		t.Errorf("spot moves: %+v", mv)
	}
	// The week's 131 band moves are of other GPUs than an H100: none is the team's.
	if len(d.Recorded) == 0 || len(d.Failed) != 0 || !d.RiskCollected || len(d.Risk) != 0 {
		t.Errorf("recorded %v, failed %v, risk %v %+v", d.Recorded, d.Failed, d.RiskCollected, d.Risk)
	}
	var a100 digest.Digest
	runJSON(t, &a100, "--store", dsn, "digest", "--gpu", "a100 40gb", "--at", "2026-11-02", "--format", "json")
	if len(a100.Risk) != 3 || a100.Risk[0].SKU != "p4d.24xlarge" || a100.Risk[0].GPU != "A100-SXM-40GB" ||
		a100.Risk[1].Region != "us-east-1" || a100.Risk[1].FromLabel != "<5%" || a100.Risk[1].ToLabel != "10-15%" ||
		a100.RiskCommand != "gpuprice risk --changes --gpu A100-SXM-40GB,A100-PCIE-40GB --since 2026-10-26T00:00:00Z"+
			" --until 2026-11-02T00:00:00Z" {
		t.Errorf("the A100 digest's band moves: %+v\n%s", a100.Risk, a100.RiskCommand)
	}
	var risk struct{ Changes []map[string]any }
	runJSON(t, &risk, append([]string{"--store", dsn, "--format", "json"}, strings.Fields(a100.RiskCommand)[1:]...)...)
	if len(risk.Changes) != 3 {
		t.Errorf("%s: %d moves, want the digest's 3", a100.RiskCommand, len(risk.Changes))
	}
	// Every command the digest names runs.
	for _, c := range []string{od.Command, od.IndexCommand, d.GPUs[0].SpreadsCommand, d.GPUs[0].SpotCommand,
		d.RunsCommand, d.RiskCommand, mv[0].Command} {
		f, err := shell.Fields(c, func(string) string { return "" })
		if err != nil || f[0] != "gpuprice" {
			t.Fatalf("command %q", c)
		}
		if _, code := run(t, append([]string{"--store", dsn}, f[1:]...)...); code != 0 {
			t.Errorf("%s: exit %d", c, code)
		}
	}
	md, code := run(t, append(args, "--format", "markdown")...)
	for _, w := range []string{"# gpuprice weekly digest: 2026-10-26 to 2026-11-02", "| specialist | 12 | $4.0400 |",
		"- others: -4.94 % ($4.2500 → $4.0400", "`gpuprice index --gpu H100-SXM-80GB --pricing on_demand --since 8d",
		"Built from a recorded example", "- no run failed"} {
		if code != 0 || !strings.Contains(md, w) {
			t.Errorf("markdown lacks %q:\n%s", w, md)
		}
	}
	html, code := run(t, append(args, "--format", "html")...)
	if code != 0 || !strings.Contains(html, "<td>specialist</td><td class=\"n\">12</td><td class=\"n\">$4.0400</td>") ||
		!strings.Contains(html, "others: -4.94 %") {
		t.Errorf("html:\n%s", html)
	}
	var sl digest.SlackMessage
	runJSON(t, &sl, append(args, "--format", "slack")...)
	var all strings.Builder
	for _, b := range sl.Blocks {
		if b.Text != nil {
			all.WriteString(b.Text.Text + "\n")
		}
		for _, e := range b.Elements {
			all.WriteString(e.Text + "\n")
		}
	}
	if sl.Blocks[0].Type != "header" || !strings.Contains(all.String(), "• others: -4.94 %") ||
		!strings.Contains(all.String(), "`gpuprice history --gpu H100-SXM-80GB --pricing on_demand --since 7d") {
		t.Errorf("slack blocks:\n%s", all.String())
	}
}

// TestServeSendsDigest: serve with digest.schedule "@every 1s" posts the digest to
// a Slack endpoint (Block Kit) and a webhook (gpuprice-digest/1), with the failed
// run of a source whose endpoint does not answer.
func TestServeSendsDigest(t *testing.T) {
	srv := replay(t)
	cfg := writeConfig(t, srv.URL)
	hook, slack := newReceiver(t), newReceiver(t)
	t.Setenv("GPUPRICE_ALERT_WEBHOOK_URL", hook.srv.URL+"/hook")
	t.Setenv("GPUPRICE_SLACK_WEBHOOK_URL", slack.srv.URL+"/slack")
	f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString(`alerts:
  notifiers:
    - {name: hook, kind: webhook, url_env: GPUPRICE_ALERT_WEBHOOK_URL}
    - {name: team, kind: slack, url_env: GPUPRICE_SLACK_WEBHOOK_URL}
digest:
  gpus: [H100-SXM-80GB]
  schedule: "@every 1s"
`)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "serve.duckdb")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		args := []string{"--config", cfg, "--store", dsn, "serve", "--listen", "127.0.0.1:0", "--run-now"}
		done <- cli.Main(ctx, args, &out, &errb)
	}()
	var p digest.Payload
	var sl digest.SlackMessage
	var b []byte
	// Both notifiers' last messages with the prices: a digest sent before the first
	// collection ended has none, and the Slack message of a turn may come after its
	// webhook payload.
	waitFor(t, "a digest with H100 prices on both notifiers", func() bool {
		select {
		case code := <-done:
			t.Fatalf("serve exited %d early:\n%s", code, errb.String())
		default:
		}
		if hook.count() == 0 || slack.count() == 0 {
			return false
		}
		hook.last(t, &p)
		slack.last(t, &sl)
		b, _ = json.Marshal(sl)
		return len(p.Digest.GPUs) == 1 && len(p.Digest.GPUs[0].Lines) > 0 &&
			strings.Contains(string(b), "H100-SXM-80GB on_demand")
	})
	if p.Version != digest.PayloadVersion || p.Digest.GPUs[0].GPU != "H100-SXM-80GB" ||
		!strings.Contains(p.Markdown, "## H100-SXM-80GB") || len(p.Digest.GPUs[0].Lines[0].Tiers) == 0 {
		t.Errorf("webhook payload: %+v", p)
	}
	if sl.Blocks[0].Type != "header" || !strings.Contains(string(b), "H100-SXM-80GB on_demand") ||
		!strings.Contains(sl.Text, "gpuprice weekly digest") {
		t.Errorf("slack message: %s", b)
	}
	cancel()
	<-done
	if strings.Contains(out.String()+errb.String(), hook.srv.URL+"/hook") {
		t.Error("serve printed the webhook URL")
	}
}

// TestDigestNamesFailedSources: a week with real failed runs (every source's
// endpoint closed, so `collect` fails each one) puts each source under "Sources that
// failed" with its runs counted and its newest failure's error, in JSON, Markdown
// and Slack; a week before those runs has none.
func TestDigestNamesFailedSources(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	base := closed.URL
	closed.Close() // nothing answers there now
	cfg := writeConfig(t, base)
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "failed.duckdb")
	g := []string{"--config", cfg, "--store", dsn}
	for i := 0; i < 2; i++ {
		if _, code := run(t, append(g, "collect")...); code == 0 {
			t.Fatalf("collect %d against a closed endpoint exited 0", i+1)
		}
	}
	args := append(g, "digest", "--gpu", "H100-SXM-80GB", "--since", "7d")
	var d digest.Digest
	runJSON(t, &d, append(args, "--format", "json")...)
	bySource := map[string]digest.FailedSource{}
	for _, f := range d.Failed {
		bySource[f.Source] = f
	}
	for _, src := range []string{"azure", "lambda", "vast"} {
		f, ok := bySource[src]
		if !ok {
			t.Errorf("%s is not among the failed sources: %+v", src, d.Failed)
			continue
		}
		if f.Runs != 2 || f.Failed != 2 || f.Last.Status != schemas.RunFailed || f.Last.Error == "" {
			t.Errorf("%s: %+v", src, f)
		}
	}
	md, code := run(t, append(args, "--format", "markdown")...)
	if code != 0 || !strings.Contains(md, "## Sources that failed") ||
		!strings.Contains(md, "azure: 2 of 2 runs did not end ok; the last failed at ") || strings.Contains(md, "no run failed") {
		t.Errorf("markdown's failed sources:\n%s", md)
	}
	sl, code := run(t, append(args, "--format", "slack")...)
	if code != 0 || !strings.Contains(sl, "Sources that failed") || !strings.Contains(sl, "vast: 2 of 2 runs did not end ok") {
		t.Errorf("slack's failed sources:\n%s", sl)
	}
	// A week that ended before these runs began has no failed source.
	var before digest.Digest
	runJSON(t, &before, append(args, "--at", "2026-11-02", "--format", "json")...)
	if len(before.Failed) != 0 {
		t.Errorf("a week before the runs: failed %+v", before.Failed)
	}
}
