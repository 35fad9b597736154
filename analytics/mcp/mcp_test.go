package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/schemas"
)

// connect starts the server over src in memory and returns the SDK's client on it.
func connect(t *testing.T, src query.Source) *sdk.ClientSession {
	t.Helper()
	ctx := context.Background()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := New(src, Options{Version: "test"}).Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ss.Close() })
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "test"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// catalogOnly reads nothing from a store: the catalog answers the GPU names,
// which is all the calls of these tests reach before failing on an argument.
func catalogOnly(t *testing.T) *query.Reader {
	cat, err := schemas.DefaultCatalog()
	if err != nil {
		t.Fatal(err)
	}
	return &query.Reader{Catalog: cat, Providers: schemas.DefaultProviders().Names()}
}

// TestToolsListed: the client lists every tool, each read-only, with an input
// schema whose every argument is described and an output schema with data and
// matched; nothing that writes, collects or shows configuration is among them.
func TestToolsListed(t *testing.T) {
	cs := connect(t, catalogOnly(t))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
		if tl.Annotations == nil || !tl.Annotations.ReadOnlyHint || tl.Description == "" {
			t.Errorf("%s: annotations %+v, description %q", tl.Name, tl.Annotations, tl.Description)
		}
		var in, out jsonschema.Schema
		remarshal(t, tl.InputSchema, &in)
		remarshal(t, tl.OutputSchema, &out)
		if in.Type != "object" || len(in.Properties) == 0 {
			t.Errorf("%s: input schema %+v", tl.Name, in)
		}
		for name, p := range in.Properties {
			if len(p.Description) < 20 {
				t.Errorf("%s: argument %s: description %q", tl.Name, name, p.Description)
			}
		}
		if out.Properties["data"] == nil || out.Properties["matched"] == nil || out.Properties["data"].Description == "" {
			t.Errorf("%s: output schema %+v", tl.Name, out.Properties)
		}
	}
	want := "availability breakeven digest find_offers inference_cost list_gpus negotiation_history price_index risk series spreads terms " +
		"training_token_cost volatility" // listed by name
	if got := strings.Join(names, " "); got != want {
		t.Errorf("tools %q, want %q", got, want)
	}
	for _, n := range names {
		for _, bad := range []string{"collect", "run", "quarantine", "source", "config", "alert", "write"} {
			if strings.Contains(n, bad) {
				t.Errorf("tool %s: nothing an agent calls may %s", n, bad)
			}
		}
	}
}

func remarshal(t *testing.T, from, to any) {
	t.Helper()
	b, err := json.Marshal(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, to); err != nil {
		t.Fatal(err)
	}
}

// TestArgumentErrors: a wrong argument is a tool error naming it and saying what
// would be accepted, with the API's "did you mean".
func TestArgumentErrors(t *testing.T) {
	cs := connect(t, catalogOnly(t))
	for _, c := range []struct {
		tool string
		args map[string]any
		want []string
	}{
		{"find_offers", map[string]any{"gpus": "h100"}, []string{"invalid argument gpus", "did you mean gpu?"}},
		{"find_offers", map[string]any{"all_series": true}, []string{"invalid argument all_series", "did you mean all-series?"}},
		{"find_offers", map[string]any{"gpu": "H1000"}, []string{"invalid argument gpu", "did you mean", "H100"}},
		{"find_offers", map[string]any{"limit": "ten"}, []string{"invalid argument limit", "an integer from 1 to 50000"}},
		{"find_offers", map[string]any{"gpu": []string{"h100"}}, []string{"invalid argument gpu", "must be a string"}},
		{"find_offers", map[string]any{"format": "csv"}, []string{"invalid argument format", "not an argument"}},
		{"series", map[string]any{"provider": "lambda"}, []string{"invalid argument sku", "is required"}},
		{"volatility", map[string]any{"bar": "5m"}, []string{"invalid argument bar", "use 1h or 1d"}},
		{"negotiation_history", nil, []string{"invalid argument gpu", "is required"}},
		{"training_token_cost", map[string]any{"params": 7e9, "mfu": 3}, []string{"invalid argument mfu", "a number from 0 to 1"}},
		{"breakeven", map[string]any{"gpu": "h100", "term": "2y"}, []string{"invalid argument term"}},
		{"spreads", map[string]any{"since": "a week"}, []string{"invalid argument since", "7d"}},
	} {
		res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatalf("%s %v: %v", c.tool, c.args, err)
		}
		text := ""
		if len(res.Content) > 0 {
			text = res.Content[0].(*sdk.TextContent).Text
		}
		if !res.IsError || res.StructuredContent != nil {
			t.Errorf("%s %v: not an error: %s", c.tool, c.args, text)
		}
		for _, w := range c.want {
			if !strings.Contains(text, w) {
				t.Errorf("%s %v: %q lacks %q", c.tool, c.args, text, w)
			}
		}
	}
}

// TestListGPUs: a tool over the catalog alone answers with typed structured
// output, the name as typed resolved.
func TestListGPUs(t *testing.T) {
	cs := connect(t, catalogOnly(t))
	res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "list_gpus", Arguments: map[string]any{"gpu": "h100 sxm"}})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	var got query.Result[[]schemas.GPU]
	remarshal(t, res.StructuredContent, &got)
	if len(got.Data) != 1 || got.Data[0].ID != "H100-SXM-80GB" || len(got.Matched) != 1 || got.Matched[0].Input != "h100 sxm" {
		t.Errorf("answer %+v", got)
	}
}
