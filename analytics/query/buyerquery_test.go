package query

import (
	"net/url"
	"testing"
)

func TestParseReport(t *testing.T) {
	q, err := ParseReport(url.Values{"gpu": {"h100"}, "model-params": {"405B"}, "quote": {"2.1"}, "term": {"3y"}, "gpus": {"64"}}, APICaps)
	if err != nil {
		t.Fatal(err)
	}
	if q.Pricing != "on_demand" || q.ModelParams != 405e9 || q.Quote != 2.1 || q.Term != "3y" || q.GPUs != 64 || q.Cheapest != 10 {
		t.Errorf("%+v", q)
	}
	back, err := ParseReport(q.Values(), APICaps)
	if err != nil || back.ModelParams != q.ModelParams || back.Quote != q.Quote || back.Term != q.Term || back.GPUs != q.GPUs || !back.At.Equal(q.At) {
		t.Errorf("Values round trip: %+v, %v", back, err)
	}
	for _, bad := range []url.Values{
		{},
		{"gpu": {"h100"}, "quote": {"-1"}},
		{"gpu": {"h100"}, "quote": {"0"}},
		{"gpu": {"h100"}, "term": {"2y"}},
		{"gpu": {"h100"}, "model-params": {"big"}},
		{"gpu": {"h100"}, "gpus": {"0"}},
		{"gpu": {"h100"}, "qoute": {"2"}},
	} {
		if _, err := ParseReport(bad, APICaps); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}

func TestCounts(t *testing.T) {
	for in, want := range map[string]float64{"70B": 70e9, "7e9": 7e9, "1.5T": 1.5e12, "350m": 350e6, "125K": 125e3} {
		got, err := ParseCount(in)
		if err != nil || got != want {
			t.Errorf("ParseCount(%q) = %v, %v", in, got, err)
		}
		if back, err := ParseCount(FormatCount(got)); err != nil || back != got {
			t.Errorf("FormatCount(%v) = %q does not read back", got, FormatCount(got))
		}
	}
	for _, bad := range []string{"", "B", "-7B", "NaNB", "1e20T"} {
		if _, err := ParseCount(bad); err == nil {
			t.Errorf("ParseCount(%q): no error", bad)
		}
	}
}
