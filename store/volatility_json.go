package store

import "encoding/json"

// A figure that needs more bars than a series has is undefined: JSON null (empty in
// CSV, "-" in tables), never 0. The float fields hold 0 then; these methods say
// which figures exist.

// StdDefined reports whether StdLogReturn and Annualised exist: a sample standard
// deviation needs two returns (three bars).
func (v SeriesVolatility) StdDefined() bool { return v.Returns >= 2 }

// CVDefined reports whether CV exists: two closes with a positive mean.
func (v SeriesVolatility) CVDefined() bool { return v.Bars >= 2 && v.Mean > 0 }

// DrawdownDefined reports whether MaxDrawdown exists: two closes.
func (v SeriesVolatility) DrawdownDefined() bool { return v.Bars >= 2 }

// RangeDefined reports whether Range exists: a bar with a positive low.
func (v SeriesVolatility) RangeDefined() bool { return v.Bars >= 1 && v.Min > 0 }

// Figure returns x when defined, else nil.
func Figure(x float64, defined bool) *float64 {
	if !defined {
		return nil
	}
	return &x
}

type seriesVolatility SeriesVolatility // without the methods

type seriesVolatilityJSON struct {
	seriesVolatility
	StdLogReturn *float64 `json:"std_log_return"`
	Annualised   *float64 `json:"annualised"`
	CV           *float64 `json:"cv"`
	Range        *float64 `json:"range"`
	MaxDrawdown  *float64 `json:"max_drawdown"`
}

// MarshalJSON writes the undefined figures as null.
func (v SeriesVolatility) MarshalJSON() ([]byte, error) {
	return json.Marshal(seriesVolatilityJSON{seriesVolatility: seriesVolatility(v),
		StdLogReturn: Figure(v.StdLogReturn, v.StdDefined()), Annualised: Figure(v.Annualised, v.StdDefined()),
		CV: Figure(v.CV, v.CVDefined()), Range: Figure(v.Range, v.RangeDefined()),
		MaxDrawdown: Figure(v.MaxDrawdown, v.DrawdownDefined())})
}

// UnmarshalJSON reads what MarshalJSON writes (null: 0).
func (v *SeriesVolatility) UnmarshalJSON(b []byte) error {
	var x seriesVolatilityJSON
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	*v = SeriesVolatility(x.seriesVolatility)
	val := func(p *float64) float64 {
		if p == nil {
			return 0
		}
		return *p
	}
	v.StdLogReturn, v.Annualised, v.CV, v.Range, v.MaxDrawdown = val(x.StdLogReturn), val(x.Annualised), val(x.CV), val(x.Range), val(x.MaxDrawdown)
	return nil
}
