package analytics

import (
	"encoding/json"

	"github.com/gpuprice/gpuprice/store"
)

// undefinedFigures marks the figures of a GroupVolatility that none of its series
// has.
type undefinedFigures uint8

const (
	undefStd undefinedFigures = 1 << iota // StdLogReturn and Annualised
	undefCV
	undefRange
	undefDrawdown
)

func undefinedIf(cond bool, f undefinedFigures) undefinedFigures {
	if cond {
		return f
	}
	return 0
}

// StdDefined reports whether StdLogReturn and Annualised exist: a series of the
// group has two returns.
func (g GroupVolatility) StdDefined() bool { return g.undefined&undefStd == 0 }

// CVDefined reports whether CV exists.
func (g GroupVolatility) CVDefined() bool { return g.undefined&undefCV == 0 }

// RangeDefined reports whether Range exists.
func (g GroupVolatility) RangeDefined() bool { return g.undefined&undefRange == 0 }

// DrawdownDefined reports whether MaxDrawdown exists.
func (g GroupVolatility) DrawdownDefined() bool { return g.undefined&undefDrawdown == 0 }

type groupVolatility GroupVolatility // without the methods

type groupVolatilityJSON struct {
	groupVolatility
	StdLogReturn *float64 `json:"std_log_return"`
	Annualised   *float64 `json:"annualised"`
	CV           *float64 `json:"cv"`
	Range        *float64 `json:"range"`
	MaxDrawdown  *float64 `json:"max_drawdown"`
}

// MarshalJSON writes the figures no series of the group has as null.
func (g GroupVolatility) MarshalJSON() ([]byte, error) {
	return json.Marshal(groupVolatilityJSON{groupVolatility: groupVolatility(g),
		StdLogReturn: store.Figure(g.StdLogReturn, g.StdDefined()), Annualised: store.Figure(g.Annualised, g.StdDefined()),
		CV: store.Figure(g.CV, g.CVDefined()), Range: store.Figure(g.Range, g.RangeDefined()),
		MaxDrawdown: store.Figure(g.MaxDrawdown, g.DrawdownDefined())})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (g *GroupVolatility) UnmarshalJSON(b []byte) error {
	var x groupVolatilityJSON
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	*g = GroupVolatility(x.groupVolatility)
	val := func(p *float64, f undefinedFigures) float64 {
		if p == nil {
			g.undefined |= f
			return 0
		}
		return *p
	}
	g.StdLogReturn, g.Annualised = val(x.StdLogReturn, undefStd), val(x.Annualised, undefStd)
	g.CV, g.Range, g.MaxDrawdown = val(x.CV, undefCV), val(x.Range, undefRange), val(x.MaxDrawdown, undefDrawdown)
	return nil
}
