package main

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gpuprice/gpuprice/analytics/mcp"
	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// mcpCase is one tool call and the command whose `--format json` is its data.
type mcpCase struct {
	tool string
	args map[string]any
	cli  []string
}

// mcpCases are calls of every tool on the recorded example (`--at 2026-11-02`);
// sku is a Lambda on-demand SKU the example holds.
func mcpCases(sku string) []mcpCase {
	const at = "2026-11-02"
	return []mcpCase{
		{"find_offers", map[string]any{"gpu": "h100", "pricing": "On-Demand"},
			[]string{"prices", "--gpu", "h100", "--pricing", "On-Demand", "--limit", "20"}},
		{"find_offers", map[string]any{"interconnect": "infiniband", "limit": 50, "all-series": true},
			[]string{"prices", "--interconnect", "infiniband", "--limit", "50", "--all-series"}},
		{"series", map[string]any{"provider": "lambda", "sku": sku, "pricing": "on_demand", "since": "7d", "at": at},
			[]string{"series", "--provider", "lambda", "--sku", sku, "--pricing", "on_demand", "--since", "7d", "--at", at,
				"--limit", "500"}},
		{"volatility", map[string]any{"window": "30d", "at": at}, []string{"volatility", "--window", "30d", "--at", at}},
		{"volatility", map[string]any{"window": "30d", "at": at, "by": "offering", "gpu": "H100 SXM", "below": 3},
			[]string{"volatility", "--window", "30d", "--at", at, "--by", "offering", "--gpu", "H100 SXM", "--below", "3"}},
		{"spreads", map[string]any{"gpu": "H100-SXM-80GB", "since": "7d", "at": at},
			[]string{"spreads", "--gpu", "H100-SXM-80GB", "--since", "7d", "--at", at}},
		{"price_index", map[string]any{"since": "7d", "at": at}, []string{"index", "--since", "7d", "--at", at}},
		{"training_token_cost", map[string]any{"params": 7e9, "gpu": "H100-SXM-80GB"},
			[]string{"tokens", "--params", "7e9", "--gpu", "H100-SXM-80GB", "--limit", "20"}},
		{"training_token_cost", map[string]any{"params": 7e9, "gpu": "H100-SXM-80GB", "risk-adjusted": true,
			"checkpoint": "30m", "restart": "10m"},
			[]string{"tokens", "--params", "7e9", "--gpu", "H100-SXM-80GB", "--limit", "20", "--risk-adjusted",
				"--checkpoint", "30m", "--restart", "10m"}},
		{"negotiation_history", map[string]any{"gpu": "H100-SXM-80GB", "since": "30d", "at": at},
			[]string{"history", "--gpu", "H100-SXM-80GB", "--since", "30d", "--at", at}},
		{"terms", map[string]any{"gpu": "H100-SXM-80GB", "at": at}, []string{"terms", "--gpu", "H100-SXM-80GB", "--at", at}},
		{"breakeven", map[string]any{"gpu": "H100-SXM-80GB", "term": "1y", "utilisation": "60%", "quote": 2.1, "at": at},
			[]string{"breakeven", "--gpu", "H100-SXM-80GB", "--term", "1y", "--utilisation", "60%", "--quote", "2.1",
				"--at", at}},
		{"inference_cost", map[string]any{"params": 70e9, "gpu": "h100"},
			[]string{"inference", "--params", "70e9", "--gpu", "h100", "--limit", "20"}},
		{"risk", map[string]any{"sku": "p4d.24xlarge", "changes": true, "since": "2026-10-26"},
			[]string{"risk", "--sku", "p4d.24xlarge", "--changes", "--since", "2026-10-26"}},
		{"availability", map[string]any{"gpu": "h100", "since": "2026-10-01", "until": "2026-11-03", "by": "gpu"},
			[]string{"availability", "--gpu", "h100", "--since", "2026-10-01", "--until", "2026-11-03", "--by", "gpu"}},
		{"digest", map[string]any{"gpu": "H100-SXM-80GB,a100 40gb", "at": at},
			[]string{"digest", "--gpu", "H100-SXM-80GB,a100 40gb", "--at", at}},
		{"list_gpus", map[string]any{"gpu": "a100"}, []string{"gpus", "--gpu", "a100"}},
	}
}

// TestMCPRecordedDuckDB: an MCP client (the SDK's) lists the tools and gets the
// CLI's answers, on the recorded example in DuckDB, in memory, over stdio from
// `gpuprice mcp` and over streamable HTTP from `serve`'s /mcp.
func TestMCPRecordedDuckDB(t *testing.T) {
	testMCPRecorded(t, "duckdb://"+filepath.Join(t.TempDir(), "mcp.duckdb"))
}

// TestIntegrationClickHouseMCPRecorded is the same on ClickHouse.
func TestIntegrationClickHouseMCPRecorded(t *testing.T) {
	testMCPRecorded(t, chtest.FreshDSN(t, "mcp"))
}

func testMCPRecorded(t *testing.T, dsn string) {
	ctx := context.Background()
	recorded := filepath.Join("..", "..", "examples", "recorded")
	if _, code := run(t, "--store", dsn, "reparse", recorded); !collected(code) {
		t.Fatalf("reparse %s failed", recorded)
	}
	var lambda []schemas.Observation
	runJSON(t, &lambda, "--store", dsn, "prices", "--provider", "lambda", "--pricing", "on_demand", "--format", "json")
	if len(lambda) == 0 {
		t.Fatal("the recorded example has no Lambda on-demand offer")
	}
	checkOpenCost(t, dsn)
	bandsBesideExample(t, dsn)
	cases := mcpCases(lambda[0].SKU)
	want := make([]any, len(cases))
	for i, c := range cases {
		out, code := run(t, append([]string{"--store", dsn}, append(c.cli, "--format", "json")...)...)
		if code != 0 {
			t.Fatalf("gpuprice %v: exit %d", c.cli, code)
		}
		if err := json.Unmarshal([]byte(out), &want[i]); err != nil || leaves(want[i]) < 3 {
			t.Fatalf("gpuprice %v: %v (%d values)", c.cli, err, leaves(want[i]))
		}
	}
	check := func(how string, cs *sdk.ClientSession) {
		t.Helper()
		tools, err := cs.ListTools(ctx, nil)
		if err != nil || len(tools.Tools) != 14 {
			t.Fatalf("%s: tools/list: %v (%d tools)", how, err, len(tools.Tools))
		}
		called := map[string]bool{}
		for _, c := range cases {
			called[c.tool] = true
		}
		for _, tl := range tools.Tools {
			if !called[tl.Name] {
				t.Errorf("%s: tool %s is not compared with the CLI", how, tl.Name)
			}
		}
		for i, c := range cases {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
			if err != nil || res.IsError {
				t.Fatalf("%s: %s %v: %v %v", how, c.tool, c.args, err, res.Content)
			}
			var got struct {
				Data     any             `json:"data"`
				Matched  []schemas.Match `json:"matched"`
				Recorded map[string]int  `json:"recorded"`
			}
			b, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			var text any
			if err := json.Unmarshal([]byte(res.Content[0].(*sdk.TextContent).Text), &text); err != nil ||
				!reflect.DeepEqual(text, res.StructuredContent) {
				t.Errorf("%s: %s: the text content is not the structured content (%v)", how, c.tool, err)
			}
			if c.tool == "find_offers" {
				got.Data = unmarkOffers(t, got.Data)
			}
			if !reflect.DeepEqual(got.Data, want[i]) {
				t.Errorf("%s: %s %v: the data differs from gpuprice %v:\n%s", how, c.tool, c.args, c.cli,
					answerDiff("", got.Data, want[i]))
			}
			// The catalog says nothing of the rows' origin.
			if c.tool != "list_gpus" && c.tool != "risk" && c.tool != "availability" && len(got.Recorded) == 0 {
				t.Errorf("%s: %s: the answer does not say it read a recorded example", how, c.tool)
			}
			if g, ok := c.args["gpu"].(string); ok && (len(got.Matched) == 0 || !strings.HasPrefix(g, got.Matched[0].Input)) {
				t.Errorf("%s: %s: matched %+v", how, c.tool, got.Matched)
			}
		}
	}
	client := func() *sdk.Client { return sdk.NewClient(&sdk.Implementation{Name: "test", Version: "test"}, nil) }

	// In memory, over a reader of the store.
	st, err := store.OpenExisting(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := schemas.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	r := &query.Reader{Store: st, Catalog: cat, Providers: schemas.DefaultProviders().Names()}
	server, clientEnd := sdk.NewInMemoryTransports()
	ss, err := mcp.New(r, mcp.Options{}).Connect(ctx, server, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := client().Connect(ctx, clientEnd, nil)
	if err != nil {
		t.Fatal(err)
	}
	check("in memory", cs)
	cs.Close()
	ss.Close()
	st.Close()

	// Over stdio: `gpuprice mcp`, this test binary running main() (not on the
	// embedded ClickHouse, whose directory one process holds: this one).
	if !chtest.Embedded() {
		checkStdio(t, dsn, check)
	}

	// Over streamable HTTP: serve's /mcp.
	base, stop := startServe(t, "--config", writeConfig(t, closedURL(t)), "--store", dsn)
	defer stop()
	cs, err = client().Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	check("streamable HTTP", cs)
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "find_offers", Arguments: map[string]any{"gpu": "H1000"}})
	if err != nil || !res.IsError || !strings.Contains(res.Content[0].(*sdk.TextContent).Text, "did you mean") {
		t.Errorf("a GPU that is not known: %v %+v", err, res)
	}
	cs.Close()
}

// unmarkOffers checks find_offers' scope and origin of each row against the
// row's price_scope and attrs.origin, and returns the rows without them (as
// `prices --format json` writes them).
func unmarkOffers(t *testing.T, data any) any {
	t.Helper()
	rows, _ := data.([]any)
	for _, x := range rows {
		row := x.(map[string]any)
		attrs, _ := row["attrs"].(map[string]any)
		scope, _ := row["price_scope"].(string)
		if row["scope"] != schemas.ScopeOf(scope) || attrs == nil || row["origin"] != attrs["origin"] {
			t.Errorf("offer %v %v: scope %v origin %v", row["provider"], row["sku"], row["scope"], row["origin"])
		}
		delete(row, "scope")
		delete(row, "origin")
	}
	return data
}

// checkOpenCost: `export opencost` writes a node row per region and instance type
// of `prices` (on-demand by default) at its $/hour, and a row without a region.
func checkOpenCost(t *testing.T, dsn string) {
	t.Helper()
	var rows []schemas.Observation
	runJSON(t, &rows, "--store", dsn, "prices", "--provider", "aws", "--pricing", "on_demand", "--format", "json")
	file := filepath.Join(t.TempDir(), "pricing.csv")
	if _, code := run(t, "--store", dsn, "export", "opencost", "--provider", "aws", "--out", file); code != 0 {
		t.Fatalf("export opencost: exit %d", code)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	recs := parseCSV(t, string(b))
	if strings.Join(recs[0], ",") != "EndTimestamp,InstanceID,Region,AssetClass,InstanceIDField,InstanceType,MarketPriceHourly,Version" {
		t.Fatalf("header %v", recs[0])
	}
	got := map[string]string{}
	for _, r := range recs[1:] {
		got[r[2]+"/"+r[1]] = r[6]
		if r[3] != "node" || r[4] != "metadata.labels.node.kubernetes.io/instance-type" || r[5] != r[1] ||
			r[0] != "2026-11-01 12:00:00 UTC" {
			t.Errorf("row %v", r)
		}
	}
	if len(rows) == 0 || len(got) != 2*len(rows) {
		t.Errorf("%d rows for %d offers: %v", len(got), len(rows), got)
	}
	for _, o := range rows {
		want := strconv.FormatFloat(o.PriceUSDHour, 'f', -1, 64)
		if got[o.Region+"/"+o.SKU] != want || got["/"+o.SKU] != want {
			t.Errorf("%s %s: %q and %q, want %s", o.Region, o.SKU, got[o.Region+"/"+o.SKU], got["/"+o.SKU], want)
		}
	}
}

// checkStdio runs check on `gpuprice mcp` over its stdin and stdout.
func checkStdio(t *testing.T, dsn string, check func(string, *sdk.ClientSession)) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "--store", dsn, "mcp")
	cmd.Env = append(os.Environ(), asGPUPrice+"=1")
	var stderr syncBuffer
	cmd.Stderr = &stderr
	client := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "test"}, nil)
	cs, err := client.Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("gpuprice mcp: %v\n%s", err, stderr.String())
	}
	check("stdio", cs)
	if err := cs.Close(); err != nil {
		t.Errorf("gpuprice mcp did not end with its input: %v\n%s", err, stderr.String())
	}
}
