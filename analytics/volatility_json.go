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

type groupVolatilityValue struct{ groupVolatility } // one level down: see store.NullFigures

type groupVolatilityJSON struct {
	groupVolatilityValue
	store.NullFigures
}

// MarshalJSON writes the figures no series of the group has as null.
func (g GroupVolatility) MarshalJSON() ([]byte, error) {
	return json.Marshal(groupVolatilityJSON{groupVolatilityValue{groupVolatility(g)},
		store.NullFiguresOf(g.StdLogReturn, g.Annualised, g.CV, g.Range, g.MaxDrawdown,
			store.Defined{Std: g.StdDefined(), CV: g.CVDefined(), Range: g.RangeDefined(), Drawdown: g.DrawdownDefined()})})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (g *GroupVolatility) UnmarshalJSON(b []byte) error {
	var x groupVolatilityJSON
	if err := json.Unmarshal(b, &x); err != nil {
		return err
	}
	*g = GroupVolatility(x.groupVolatility)
	d := x.Into(&g.StdLogReturn, &g.Annualised, &g.CV, &g.Range, &g.MaxDrawdown)
	g.undefined = undefinedIf(!d.Std, undefStd) | undefinedIf(!d.CV, undefCV) | undefinedIf(!d.Range,
		undefRange) | undefinedIf(!d.Drawdown, undefDrawdown)
	return nil
}
