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

// Defined says which of a volatility's figures exist.
type Defined struct {
	Std      bool // StdLogReturn and Annualised
	CV       bool
	Range    bool
	Drawdown bool // MaxDrawdown
}

// NullFigures is the JSON of the five figures a volatility has only with enough
// bars: null where undefined. The JSON forms of SeriesVolatility and
// analytics.GroupVolatility embed it after their value, which they hold one level
// deeper (as seriesVolatilityJSON does), so that these fields shadow the value's
// own figures and are written last.
type NullFigures struct {
	StdLogReturn *float64 `json:"std_log_return"`
	Annualised   *float64 `json:"annualised"`
	CV           *float64 `json:"cv"`
	Range        *float64 `json:"range"`
	MaxDrawdown  *float64 `json:"max_drawdown"`
}

// NullFiguresOf is the figures with the undefined ones null.
func NullFiguresOf(stdLogReturn, annualised, cv, rng, maxDrawdown float64, d Defined) NullFigures {
	return NullFigures{StdLogReturn: Figure(stdLogReturn, d.Std), Annualised: Figure(annualised, d.Std),
		CV: Figure(cv, d.CV), Range: Figure(rng, d.Range), MaxDrawdown: Figure(maxDrawdown, d.Drawdown)}
}

// Into stores the figures through the pointers, 0 for null, and says which were
// there.
func (n NullFigures) Into(stdLogReturn, annualised, cv, rng, maxDrawdown *float64) Defined {
	val := func(p *float64) float64 {
		if p == nil {
			return 0
		}
		return *p
	}
	*stdLogReturn, *annualised, *cv, *rng, *maxDrawdown = val(
		n.StdLogReturn,
	), val(
		n.Annualised,
	), val(
		n.CV,
	), val(
		n.Range,
	), val(
		n.MaxDrawdown,
	)
	return Defined{
		Std:      n.StdLogReturn != nil && n.Annualised != nil,
		CV:       n.CV != nil,
		Range:    n.Range != nil,
		Drawdown: n.MaxDrawdown != nil,
	}
}

type seriesVolatility SeriesVolatility // without the methods

type seriesVolatilityValue struct{ seriesVolatility } // one level down: see NullFigures

type seriesVolatilityJSON struct {
	seriesVolatilityValue
	NullFigures
}

// MarshalJSON writes the undefined figures as null.
func (v SeriesVolatility) MarshalJSON() ([]byte, error) {
	return json.Marshal(seriesVolatilityJSON{seriesVolatilityValue{seriesVolatility(v)},
		NullFiguresOf(v.StdLogReturn, v.Annualised, v.CV, v.Range, v.MaxDrawdown,
			Defined{Std: v.StdDefined(), CV: v.CVDefined(), Range: v.RangeDefined(), Drawdown: v.DrawdownDefined()})})
}

// UnmarshalJSON reads what MarshalJSON writes (null: 0).
func (v *SeriesVolatility) UnmarshalJSON(b []byte) error {
	var x seriesVolatilityJSON
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	*v = SeriesVolatility(x.seriesVolatility)
	x.Into(&v.StdLogReturn, &v.Annualised, &v.CV, &v.Range, &v.MaxDrawdown)
	return nil
}
