package query

import (
	"errors"
	"net/url"
	"reflect"
	"testing"
	"time"
)

// TestValuesRoundTrip: a query written as parameters (what the CLI sends a running
// server) parses back to the same query.
func TestValuesRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	f := Filter{GPU: "h100", Provider: "aws", Pricing: "spot", Region: "us-east-1", Tier: "hyperscaler"}
	check := func(name string, q, back any, err error) {
		t.Helper()
		if err != nil || !reflect.DeepEqual(q, back) {
			t.Errorf("%s: %+v\nback: %+v (%v)", name, q, back, err)
		}
	}
	pq := PricesQuery{Filter: f, Limit: 7, Stale: 36 * time.Hour, AllSeries: true, IncludeDerived: true}
	pb, err := ParsePrices(pq.Values(), APICaps)
	check("prices", pq, pb, err)
	vq := VolatilityQuery{Filter: f, Window: 7 * 24 * time.Hour, Bar: 24 * time.Hour, At: at, By: "zone", Below: 2.5}
	vb, err := ParseVolatility(vq.Values(), APICaps)
	check("volatility", vq, vb, err)
	hq := HistoryQuery{Filter: Filter{GPU: "H100-SXM-80GB", Pricing: "spot", Region: "r"}, Since: 90 * 24 * time.Hour, At: at, Cheapest: 3}
	hb, err := ParseHistory(hq.Values(), APICaps)
	check("history", hq, hb, err)
	tq := TokensQuery{Filter: f, Params: 7e9, MFU: 0.4, Tokens: 1e11, Precision: "fp8", Limit: 5}
	tb, err := ParseTokens(tq.Values(), APICaps)
	check("tokens", tq, tb, err)
	sq := SeriesQuery{Provider: "lambda", SKU: "x", Region: "r", Zone: "z", Pricing: "on_demand", Since: 12 * time.Hour, At: at, Bar: time.Hour, Limit: 9}
	sb, err := ParseSeries(sq.Values(), APICaps)
	check("series", sq, sb, err)
}

func TestParamErrors(t *testing.T) {
	for _, c := range []struct {
		q     string
		param string
	}{
		{"window=1x", "window"}, {"window=4000d", "window"}, {"bar=2h", "bar"}, {"by=gpu", "by"},
		{"below=-1", "below"}, {"gpu=a&gpu=b", "gpu"}, {"windw=7d", "windw"}, {"at=soon", "at"},
	} {
		v, _ := url.ParseQuery(c.q)
		_, err := ParseVolatility(v, APICaps)
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Param != c.param {
			t.Errorf("%s: %v, want an error about %s", c.q, err, c.param)
		}
	}
	v, _ := url.ParseQuery("windw=7d")
	_, err := ParseVolatility(v, APICaps)
	var pe *ParamError
	if errors.As(err, &pe); len(pe.Suggestions) == 0 || pe.Suggestions[0] != "window" {
		t.Errorf("windw: suggestions %v", pe.Suggestions)
	}
	if _, err := ParseVolatility(url.Values{"window": {"4000d"}}, NoCaps); err != nil {
		t.Errorf("the CLI has no cap on windows: %v", err)
	}
	if _, err := ParsePrices(url.Values{"limit": {"0"}}, NoCaps); err != nil {
		t.Errorf("the CLI's limit 0 means all: %v", err)
	}
	if _, err := ParsePrices(url.Values{"gpu": {"\xff"}}, APICaps); err == nil {
		t.Error("invalid UTF-8 accepted")
	}
}
