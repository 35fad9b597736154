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
