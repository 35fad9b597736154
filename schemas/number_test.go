package schemas

import "testing"

func TestParseNumber(t *testing.T) {
	good := map[string]float64{
		"2.49": 2.49, "2,49": 2.49, "$2.49": 2.49, "€2,49": 2.49, "1,234.56": 1234.56, "1.234,56": 1234.56,
		"1 234,56": 1234.56, "1\u00a0234,5": 1234.5, "1,234": 1234, "12": 12, "0.000001": 0.000001, "98.32": 98.32,
		"1,234,567": 1234567,
	}
	for in, want := range good {
		got, err := ParseNumber(in)
		if err != nil || got != want {
			t.Errorf("ParseNumber(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "Contact sales", "abc", "1.2.3,4,5x", "$"} {
		if v, err := ParseNumber(in); err == nil {
			t.Errorf("ParseNumber(%q) = %v, want an error", in, v)
		}
	}
}

func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{"2.49", "1,234.56", "1.234,56", "€2,49", "1 234,5", "Contact sales", "", "1,2,3", "-0", "1e400"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := ParseNumber(s)
		if err == nil && v != v {
			t.Errorf("ParseNumber(%q) = NaN without an error", s)
		}
	})
}
