package store

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestVolatilityUndefinedFiguresAreNull(t *testing.T) {
	one := SeriesVolatility{Provider: "lambda", Bars: 1, Min: 2, Max: 2.2, Mean: 2.1, Close: 2.1, Range: 0.1}
	b, err := json.Marshal(one)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"std_log_return":null`, `"annualised":null`, `"cv":null`, `"max_drawdown":null`, `"range":0.1`, `"close":2.1`, `"provider":"lambda"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("%s lacks %s", b, want)
		}
	}
	var back SeriesVolatility
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, one) {
		t.Errorf("round trip: %+v %v, want %+v", back, err, one)
	}
	three := SeriesVolatility{Bars: 3, Returns: 2, StdLogReturn: 0, Annualised: 0, CV: 0.05, Min: 1, Mean: 1}
	b, _ = json.Marshal(three)
	for _, want := range []string{`"std_log_return":0,`, `"annualised":0,`, `"cv":0.05`, `"max_drawdown":0}`} {
		if !strings.Contains(string(b), want) { // a defined 0 stays 0
			t.Errorf("%s lacks %s", b, want)
		}
	}
}

// TestVolatilityJSONBytes pins the whole JSON form: the value's fields in order,
// then the five figures (null where undefined), as the API and OpenAPI have it.
func TestVolatilityJSONBytes(t *testing.T) {
	v := SeriesVolatility{Provider: "lambda", SKU: "gpu_1x_h100", Pricing: "on_demand", GPU: "H100-SXM-80GB", Tier: "hyperscaler",
		Bars: 2, Returns: 1, CV: 0.05, Range: 0.1, MaxDrawdown: 0.02, Changes: 1, Min: 2, Max: 2.2, Mean: 2.1, Close: 2.2}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"provider":"lambda","sku":"gpu_1x_h100","region":"","zone":"","pricing":"on_demand","gpu":"H100-SXM-80GB","tier":"hyperscaler",` +
		`"bars":2,"returns":1,"changes":1,"share_below":null,"min":2,"max":2.2,"mean":2.1,"close":2.2,` +
		`"std_log_return":null,"annualised":null,"cv":0.05,"range":0.1,"max_drawdown":0.02}`
	if string(b) != want {
		t.Errorf("got  %s\nwant %s", b, want)
	}
}

func TestNullFiguresRoundTrip(t *testing.T) {
	d := Defined{Std: true, Range: true}
	n := NullFiguresOf(0.01, 0.2, 0.3, 0.4, 0.5, d)
	if n.StdLogReturn == nil || *n.Annualised != 0.2 || n.CV != nil || *n.Range != 0.4 || n.MaxDrawdown != nil {
		t.Fatalf("NullFiguresOf: %+v", n)
	}
	var s, a, cv, r, dd float64 = 9, 9, 9, 9, 9
	if got := n.Into(&s, &a, &cv, &r, &dd); got != d || s != 0.01 || a != 0.2 || cv != 0 || r != 0.4 || dd != 0 {
		t.Errorf("Into: %+v %v %v %v %v %v", got, s, a, cv, r, dd)
	}
	// One of the pair null: the pair is undefined.
	n.Annualised = nil
	if got := n.Into(&s, &a, &cv, &r, &dd); got.Std {
		t.Errorf("annualised null, Std defined: %+v", got)
	}
}
