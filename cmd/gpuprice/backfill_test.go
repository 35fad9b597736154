package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/cli"
)

// fakeEC2 serves DescribeRegions and DescribeSpotPriceHistory in EC2's query protocol
// (the XML shapes of scrapers/aws/testdata): two regions, three pages of spot
// records each, linked by NextToken.
type fakeEC2 struct {
	*httptest.Server
	mu       sync.Mutex
	spotReqs []url.Values
	regions  []string // region of each spot request
	// cancelAt, when > 0, cancels cancel at that spot request (1-based) and holds the
	// request until the client gives up, so that page is never read.
	cancelAt int
	cancel   func()
}

var scopeRE = regexp.MustCompile(`Credential=[^/]+/[0-9]+/([a-z0-9-]+)/ec2/aws4_request`)

const spotPagesPerRegion = 3

func newFakeEC2(t *testing.T) *fakeEC2 {
	f := &fakeEC2{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		form, _ := url.ParseQuery(string(body))
		w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
		switch form.Get("Action") {
		case "DescribeRegions":
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?>
<DescribeRegionsResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">
    <requestId>59dbff89-35bd-4eac-99ed-be587EXAMPLE</requestId>
    <regionInfo>
        <item><regionName>us-west-2</regionName><regionEndpoint>ec2.us-west-2.amazonaws.com</regionEndpoint><optInStatus>opt-in-not-required</optInStatus></item>
        <item><regionName>us-east-1</regionName><regionEndpoint>ec2.us-east-1.amazonaws.com</regionEndpoint><optInStatus>opt-in-not-required</optInStatus></item>
    </regionInfo>
</DescribeRegionsResponse>`)
		case "DescribeSpotPriceHistory":
			region := ""
			if m := scopeRE.FindStringSubmatch(r.Header.Get("Authorization")); m != nil {
				region = m[1]
			}
			f.mu.Lock()
			f.spotReqs = append(f.spotReqs, form)
			f.regions = append(f.regions, region)
			n := len(f.spotReqs)
			f.mu.Unlock()
			if n == f.cancelAt {
				f.cancel()
				<-r.Context().Done()
				return
			}
			page := 1
			if tok := form.Get("NextToken"); tok != "" {
				fmt.Sscanf(strings.TrimPrefix(tok, region+"-page-"), "%d", &page)
			}
			fmt.Fprint(w, spotPage(region, page, form["InstanceType.1"][0], form.Get("InstanceType.2")))
		default:
			t.Errorf("unexpected request %s", body)
			http.Error(w, "bad request", http.StatusBadRequest)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

// spotPage is page n of a region: two records per instance type, one per zone, at
// times that go back one hour per page.
func spotPage(region string, n int, types ...string) string {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<DescribeSpotPriceHistoryResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">
    <requestId>59dbff89-35bd-4eac-99ed-be587EXAMPLE</requestId>
    <spotPriceHistorySet>`)
	at := time.Date(2026, 11, 1, 11, 0, 0, 0, time.UTC).Add(-time.Duration(n) * time.Hour)
	for i, it := range types {
		if it == "" {
			continue
		}
		for z, zone := range []string{"a", "b"} {
			price := 0.4217 + float64(n)/10 + float64(z)/100
			if strings.HasPrefix(it, "p5") {
				price = 32.7128 + float64(n) + float64(z)/10
			}
			fmt.Fprintf(&b, `
        <item>
            <availabilityZone>%s%s</availabilityZone>
            <instanceType>%s</instanceType>
            <productDescription>Linux/UNIX</productDescription>
            <spotPrice>%.6f</spotPrice>
            <timestamp>%s</timestamp>
        </item>`, region, zone, it, price, at.Add(-time.Duration(i*10+z)*time.Minute).Format("2006-01-02T15:04:05.000Z"))
		}
	}
	b.WriteString("\n    </spotPriceHistorySet>\n")
	if n < spotPagesPerRegion {
		fmt.Fprintf(&b, "    <nextToken>%s-page-%d</nextToken>\n", region, n+1)
	}
	b.WriteString("</DescribeSpotPriceHistoryResponse>")
	return b.String()
}

// awsEnv gives the SDK static credentials and keeps it off the machine's AWS files
// and the instance metadata service.
func awsEnv(t *testing.T) {
	for k, v := range map[string]string{
		"AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_SECRET_ACCESS_KEY": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"AWS_SESSION_TOKEN": "", "AWS_PROFILE": "", "AWS_REGION": "", "AWS_DEFAULT_REGION": "",
		"AWS_CONFIG_FILE": filepath.Join(t.TempDir(), "none"), "AWS_SHARED_CREDENTIALS_FILE": filepath.Join(t.TempDir(), "none"),
		"AWS_EC2_METADATA_DISABLED": "true",
	} {
		t.Setenv(k, v)
	}
}

func backfillConfig(t *testing.T, endpoint string) (cfg, dataDir string) {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "gpuprice.yaml")
	body := fmt.Sprintf("data_dir: %s\nsources:\n  aws: {options: {ec2_endpoint: %q}}\n  fx: {enabled: false}\n", dir, endpoint)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p, dir
}

func runCtx(ctx context.Context, args ...string) (stdout, stderr string, code int) {
	var out, errb bytes.Buffer
	code = cli.Main(ctx, args, &out, &errb)
	return out.String(), errb.String(), code
}

// dropColumn removes column c from every record and joins them back, one per line.
func dropColumns(recs [][]string, cols ...int) string {
	var lines []string
	for _, r := range recs {
		var keep []string
		for i, v := range r {
			drop := false
			for _, c := range cols {
				drop = drop || i == c
			}
			if !drop {
				keep = append(keep, v)
			}
		}
		lines = append(lines, strings.Join(keep, ","))
	}
	return strings.Join(lines, "\n")
}

var backfillArgs = []string{"backfill", "aws-spot", "--since", "30d", "--instance-types", "p5.48xlarge,g5.xlarge", "--page-size", "4"}

func TestBackfillAWSSpotResumes(t *testing.T) {
	awsEnv(t)

	// Uninterrupted.
	f := newFakeEC2(t)
	cfg, _ := backfillConfig(t, f.URL)
	full := "duckdb://" + filepath.Join(t.TempDir(), "full.duckdb")
	out, errOut, code := runCtx(context.Background(), append([]string{"--config", cfg, "--store", full}, backfillArgs...)...)
	if code != 0 {
		t.Fatalf("backfill: exit %d\n%s\n%s", code, out, errOut)
	}
	if !regexp.MustCompile(`(?m)^backfill:aws-spot\s+ok\s+24\s+0\s+0\s`).MatchString(out) {
		t.Errorf("summary:\n%s", out)
	}
	if len(f.spotReqs) != 2*spotPagesPerRegion || f.regions[0] != "us-east-1" || f.regions[3] != "us-west-2" {
		t.Errorf("%d spot requests in regions %v", len(f.spotReqs), f.regions)
	}
	q := f.spotReqs[0]
	start, _ := time.Parse(time.RFC3339, q.Get("StartTime"))
	end, _ := time.Parse(time.RFC3339, q.Get("EndTime"))
	if d := end.Sub(start); d != 30*24*time.Hour || q.Get("MaxResults") != "4" || q.Get("ProductDescription.1") != "Linux/UNIX" {
		t.Errorf("query %v (window %s)", q, d)
	}
	for _, line := range []string{"[0/2 regions] us-east-1: page 1, 4 rows", "[1/2 regions] us-east-1: done (3 pages, 12 rows)", "[2/2 regions] us-west-2: done"} {
		if !strings.Contains(errOut, line) {
			t.Errorf("progress line %q missing:\n%s", line, errOut)
		}
	}
	assertBarsCover(t, full, "backfill aws-spot")
	want, code := run(t, "--config", cfg, "--store", full, "export", "--format", "csv")
	if code != 0 {
		t.Fatal("export failed")
	}
	wantRecs := parseCSV(t, want)
	if len(wantRecs) != 25 {
		t.Fatalf("exported %d records, want header + 24", len(wantRecs))
	}
	if r := wantRecs[1]; r[1] != "aws" || r[4] != "A10G-PCIE-24GB" || r[8] != "spot" || r[11] != "api" || r[20] != f.URL {
		t.Errorf("first row %v", r)
	}

	// Interrupted during the second page of us-east-1, then resumed.
	g := newFakeEC2(t)
	cfg2, dataDir := backfillConfig(t, g.URL)
	part := "duckdb://" + filepath.Join(t.TempDir(), "part.duckdb")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g.cancelAt, g.cancel = 2, cancel
	if _, errOut, code := runCtx(ctx, append([]string{"--config", cfg2, "--store", part}, backfillArgs...)...); code == 0 {
		t.Fatalf("interrupted backfill exited 0:\n%s", errOut)
	}
	cp, err := os.ReadFile(filepath.Join(dataDir, "backfill", "aws-spot.json"))
	if err != nil || !strings.Contains(string(cp), `"next_token": "us-east-1-page-2"`) {
		t.Fatalf("checkpoint after the interruption: %s %v", cp, err)
	}
	g.cancelAt = 0
	before := len(g.spotReqs)
	if out, errOut, code := runCtx(context.Background(), append([]string{"--config", cfg2, "--store", part}, backfillArgs...)...); code != 0 {
		t.Fatalf("resumed backfill: exit %d\n%s\n%s", code, out, errOut)
	}
	if first := g.spotReqs[before]; g.regions[before] != "us-east-1" || first.Get("NextToken") != "us-east-1-page-2" ||
		first.Get("StartTime") != g.spotReqs[0].Get("StartTime") {
		t.Errorf("resume started with %v in %s, want NextToken us-east-1-page-2 and the first window", first, g.regions[before])
	}
	if n := len(g.spotReqs) - before; n != 2*spotPagesPerRegion-1 {
		t.Errorf("resume made %d spot requests, want %d", n, 2*spotPagesPerRegion-1)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "backfill", "aws-spot.json")); !os.IsNotExist(err) {
		t.Errorf("checkpoint left after a complete backfill: %v", err)
	}
	assertBarsCover(t, part, "an interrupted and resumed backfill aws-spot")
	got, _ := run(t, "--config", cfg2, "--store", part, "export", "--format", "csv")
	// observed_at (0) and source_url (20: the fake's address) differ between the runs.
	if a, b := dropColumns(parseCSV(t, got), 0, 20), dropColumns(wantRecs, 0, 20); a != b {
		t.Errorf("interrupted+resumed backfill differs from uninterrupted:\n%s\n---\n%s", a, b)
	}
	runs, _ := run(t, "--config", cfg2, "--store", part, "runs")
	if strings.Count(runs, "backfill:aws-spot") != 2 || !strings.Contains(runs, "context canceled") {
		t.Errorf("run records:\n%s", runs)
	}

	// Backfilling again adds nothing.
	if _, _, code := runCtx(context.Background(), append([]string{"--config", cfg2, "--store", part}, backfillArgs...)...); code != 0 {
		t.Fatal("third backfill failed")
	}
	again, _ := run(t, "--config", cfg2, "--store", part, "export", "--format", "csv")
	if dropColumns(parseCSV(t, again), 0) != dropColumns(parseCSV(t, got), 0) {
		t.Error("a second backfill changed the store")
	}
}

func TestBackfillFlags(t *testing.T) {
	awsEnv(t)
	f := newFakeEC2(t)
	cfg, _ := backfillConfig(t, f.URL)
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "x.duckdb")
	for _, args := range [][]string{
		{"--since", "91d"}, {"--since", "yesterday"}, {"--regions", "US East"},
	} {
		_, errOut, code := runCtx(context.Background(), append([]string{"--config", cfg, "--store", dsn, "backfill", "aws-spot"}, args...)...)
		if code == 0 || errOut == "" {
			t.Errorf("%v accepted", args)
		}
	}
	// --until ends the window that long ago (or at a date or time).
	g := newFakeEC2(t)
	cfgU, _ := backfillConfig(t, g.URL)
	if out, errOut, code := runCtx(context.Background(), "--config", cfgU, "--store", dsn, "backfill", "aws-spot", "--since", "30d",
		"--until", "10d", "--regions", "eu-west-1"); code != 0 || len(g.spotReqs) == 0 {
		t.Errorf("--until: exit %d\n%s\n%s", code, out, errOut)
	} else {
		q := g.spotReqs[0]
		start, _ := time.Parse(time.RFC3339, q.Get("StartTime"))
		end, _ := time.Parse(time.RFC3339, q.Get("EndTime"))
		if d := end.Sub(start); d != 20*24*time.Hour || time.Since(end) < 10*24*time.Hour-time.Minute || time.Since(end) > 10*24*time.Hour+time.Minute {
			t.Errorf("--since 30d --until 10d: window %s to %s", start, end)
		}
	}
	for _, args := range [][]string{{"--since", "10d", "--until", "20d"}, {"--until", "soon"}} {
		if _, _, code := runCtx(context.Background(), append([]string{"--config", cfgU, "--store", dsn, "backfill", "aws-spot"}, args...)...); code != cli.ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, cli.ExitUsage)
		}
	}
	out, errOut, code := runCtx(context.Background(), "--config", cfg, "--store", dsn, "backfill", "aws-spot", "--since", "2d",
		"--regions", "eu-west-1", "--instance-types", "p5.48xlarge")
	if code != 0 || len(f.spotReqs) != spotPagesPerRegion || f.regions[0] != "eu-west-1" ||
		f.spotReqs[0].Get("InstanceType.1") != "p5.48xlarge" || f.spotReqs[0].Get("InstanceType.2") != "" {
		t.Errorf("--regions/--instance-types: exit %d, requests %v in %v\n%s\n%s", code, f.spotReqs, f.regions, out, errOut)
	}
}
