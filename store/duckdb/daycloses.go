package duckdb

import (
	"cmp"
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/gpuprice/gpuprice/store"
)

var _ store.DayCloses = (*Store)(nil)

// attrCols are a bar's attributes beside its series (store.BarAttrs).
const attrCols = `gpu, tier, interconnect, price_scope, price_basis`

// DayCloses returns the daily bars Bars returns for BarQuery{Filter: f, Width:
// Daily, CarryIn: true} in the compact form day prices read (store.DayCloses).
//
// Two reads. The bars come as numbers only: a 63-bit hash of
// the series, one of the attributes, the start, close and last sighting (reading
// the ten strings of every bar through database/sql cost more than the query).
// The names come once per distinct series and attributes, from every bar up to
// the window's end, read at the same time on another connection. The bars are put
// in Bars' order here. Two names with
// one hash (never seen; checked all the same), or a bar whose names were written
// after they were read, make it return what Bars returns.
func (s *Store) DayCloses(ctx context.Context, f store.Filter) ([]store.SeriesCloses, error) {
	q := store.BarQuery{Filter: f, Width: store.Daily, CarryIn: true}
	window, args := barsWhere(q, f.Since, f.Until)
	const cols = `bar_start, close, last_observed_at, ` + attrCols
	src := `SELECT ` + seriesCols + `, ` + cols + ` FROM bars` + window
	if !f.Since.IsZero() {
		carry, cargs := barsWhere(q, time.Time{}, f.Since)
		src += ` UNION ALL ` + carriedIn(cols, carry) // as Bars carries it in
		args = append(args, cargs...)
	}
	names, nargs := barsWhere(q, time.Time{}, f.Until)
	// The two reads at once, on two connections: DuckDB runs one while the other's
	// rows are scanned here. The bars are kept as read (numbers only) and matched
	// to their names once both are in.
	type rawBar struct {
		series, attrs int64
		start, seen   time.Time
		close         float64
	}
	var (
		series   map[int64]*store.SeriesCloses
		attrs    map[int64]*store.BarAttrs
		collided bool
		nameErr  error
		wg       sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		series, attrs, collided, nameErr = s.closeNames(ctx, names, nargs)
	}()
	var raw []rawBar
	err := s.eachRow(ctx, `SELECT (hash(`+seriesCols+`) >> 1)::BIGINT, (hash(`+attrCols+`) >> 1)::BIGINT,
		bar_start, close, last_observed_at FROM (`+src+`)`, args, func(v []driver.Value) error {
		sh, _ := v[0].(int64)
		ah, _ := v[1].(int64)
		start, err := rawTime(v[2])
		if err != nil {
			return err
		}
		c, ok := v[3].(float64)
		if !ok {
			return fmt.Errorf("duckdb: close %T", v[3])
		}
		seen, err := rawTime(v[4]) // NULL: rolled up before schema version 4
		if err != nil {
			return err
		}
		raw = append(raw, rawBar{series: sh, attrs: ah, start: start, close: c, seen: seen})
		return nil
	})
	wg.Wait()
	if nameErr != nil {
		return nil, nameErr
	}
	if err != nil {
		return nil, fmt.Errorf("duckdb: day closes: %w", err)
	}
	if !collided {
		for _, b := range raw {
			sc, a := series[b.series], attrs[b.attrs]
			if sc == nil || a == nil { // written after the names were read
				err = errMissed
				break
			}
			sc.Bars = append(sc.Bars, store.CloseBar{Start: b.start, Close: b.close, LastObservedAt: b.seen, Attrs: a})
		}
	}
	if collided || errors.Is(err, errMissed) {
		bars, err := s.Bars(ctx, q)
		if err != nil {
			return nil, err
		}
		return store.ClosesOfBars(bars), nil
	}
	out := make([]store.SeriesCloses, 0, len(series))
	for _, sc := range series {
		if len(sc.Bars) > 0 {
			slices.SortFunc(sc.Bars, func(a, b store.CloseBar) int { return a.Start.Compare(b.Start) })
			out = append(out, *sc)
		}
	}
	slices.SortFunc(out, func(a, b store.SeriesCloses) int {
		return cmp.Or(cmp.Compare(a.Provider, b.Provider), cmp.Compare(a.SKU, b.SKU), cmp.Compare(a.Region, b.Region),
			cmp.Compare(a.Zone, b.Zone), cmp.Compare(a.Pricing, b.Pricing))
	})
	return out, nil
}

// errMissed stops DayCloses' read at a bar of names it did not read.
var errMissed = errors.New("a bar of names not read")

// closeNames reads the series and attributes of the bars where selects, by the
// hashes DayCloses reads the bars with; collided reports two names of one hash.
func (s *Store) closeNames(ctx context.Context, where string, args []any) (
	series map[int64]*store.SeriesCloses, attrs map[int64]*store.BarAttrs, collided bool, err error) {
	series, attrs = map[int64]*store.SeriesCloses{}, map[int64]*store.BarAttrs{}
	err = s.eachRow(ctx, `SELECT DISTINCT (hash(`+seriesCols+`) >> 1)::BIGINT, (hash(`+attrCols+`) >> 1)::BIGINT,
		`+seriesCols+`, `+attrCols+` FROM bars`+where, args, func(v []driver.Value) error {
		var str [10]string
		for i := range str {
			var ok bool
			if str[i], ok = v[2+i].(string); !ok {
				return fmt.Errorf("duckdb: name %T", v[2+i])
			}
		}
		sh, _ := v[0].(int64)
		ah, _ := v[1].(int64)
		sc := store.SeriesCloses{Provider: str[0], SKU: str[1], Region: str[2], Zone: str[3], Pricing: str[4]}
		a := store.BarAttrs{GPU: str[5], Tier: str[6], Interconnect: str[7], PriceScope: str[8], PriceBasis: str[9]}
		if had := series[sh]; had == nil {
			series[sh] = &sc
		} else if had.Provider != sc.Provider || had.SKU != sc.SKU || had.Region != sc.Region || had.Zone != sc.Zone ||
			had.Pricing != sc.Pricing {
			collided = true
		}
		if had := attrs[ah]; had == nil {
			attrs[ah] = &a
		} else if *had != a {
			collided = true
		}
		return nil
	})
	if err != nil {
		return nil, nil, false, fmt.Errorf("duckdb: day closes: names: %w", err)
	}
	return series, attrs, collided, nil
}
