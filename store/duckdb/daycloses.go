package duckdb

import (
	"cmp"
	"context"
	"database/sql/driver"
	"fmt"
	"slices"
	"time"

	"github.com/gpuprice/gpuprice/store"
)

var _ store.DayCloses = (*Store)(nil)

// attrCols are a bar's attributes beside its series (store.BarAttrs).
const attrCols = `gpu, tier, interconnect, price_scope, price_basis`

// DayCloses returns the daily bars Bars returns for BarQuery{Filter: f, Width:
// Daily, CarryIn: true} in the compact form day prices read (store.DayCloses).
//
// One read of the bars up to the window's end (materialised once, each hashed
// once) gives two kinds of rows. The bars come as numbers only: a 63-bit hash of
// the series, one of the attributes, the start, close and last sighting (reading
// the ten strings of every bar through database/sql cost more than the query):
// those of the window and each series' latest before it (as Bars carries it in,
// grouped by the series' hash). The names come once per distinct series and
// attributes, from every bar read (dayCloseNames), so that every bar read has its
// names. Two reads, the names and the bars each scanning the history, took a third
// longer for every series' bars at 2M raw rows, as long for one GPU's (BENCHMARKS.md,
// 2026-12-08). The bars are put in Bars' order here. Two names with one hash
// (never seen; checked all the same) make it return what Bars returns.
func (s *Store) DayCloses(ctx context.Context, f store.Filter) ([]store.SeriesCloses, error) {
	q := store.BarQuery{Filter: f, Width: store.Daily, CarryIn: true}
	upTo, args := barsWhere(q, time.Time{}, f.Until)
	const nulls = `NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL`
	query := `WITH h AS MATERIALIZED (SELECT (hash(` + seriesCols + `) >> 1)::BIGINT AS sh,
			(hash(` + attrCols + `) >> 1)::BIGINT AS ah, ` + seriesCols + `, ` + attrCols + `, bar_start, close,
			last_observed_at FROM bars` + upTo + `)
	SELECT 0 AS k, sh, ah, ` + seriesCols + `, ` + attrCols + `, NULL::TIMESTAMP, NULL::DOUBLE, NULL::TIMESTAMP
		FROM (SELECT DISTINCT sh, ah, ` + seriesCols + `, ` + attrCols + ` FROM h)
	UNION ALL SELECT 1, sh, ah, ` + nulls + `, bar_start, close, last_observed_at FROM h`
	if !f.Since.IsZero() {
		query += ` WHERE bar_start >= ?
	UNION ALL SELECT 1, sh, b.ah, ` + nulls + `, b.bar_start, b.close, b.seen FROM (SELECT sh, arg_max({'ah': ah,
			'bar_start': bar_start, 'close': close, 'seen': last_observed_at}, bar_start) AS b
		FROM h WHERE bar_start < ? GROUP BY sh)`
		args = append(args, utc(f.Since), utc(f.Since))
	}
	// The rows of either kind come in any order: each series' bars are kept as read
	// (by its hash, a slice a series) and take their names once all are in.
	type rawBar struct {
		attrs       int64
		start, seen time.Time
		close       float64
	}
	raw := map[int64][]rawBar{}
	names := dayCloseNames{series: map[int64]*store.SeriesCloses{}, attrs: map[int64]*store.BarAttrs{}}
	err := s.eachRow(ctx, query, args, func(v []driver.Value) error {
		sh, _ := v[1].(int64)
		ah, _ := v[2].(int64)
		if k, _ := v[0].(int32); k == 0 {
			return names.add(sh, ah, v[3:13])
		}
		start, err := rawTime(v[13])
		if err != nil {
			return err
		}
		c, ok := v[14].(float64)
		if !ok {
			return fmt.Errorf("duckdb: close %T", v[14])
		}
		seen, err := rawTime(v[15]) // NULL: rolled up before schema version 4
		if err != nil {
			return err
		}
		raw[sh] = append(raw[sh], rawBar{attrs: ah, start: start, close: c, seen: seen})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("duckdb: day closes: %w", err)
	}
	if names.collided {
		bars, err := s.Bars(ctx, q)
		if err != nil {
			return nil, err
		}
		return store.ClosesOfBars(bars), nil
	}
	for sh, rs := range raw {
		sc := names.series[sh]
		if sc == nil { // every bar read has its names: never
			return nil, fmt.Errorf("duckdb: day closes: bars of series %x without its names", sh)
		}
		sc.Bars = make([]store.CloseBar, len(rs))
		for i, b := range rs {
			a := names.attrs[b.attrs]
			if a == nil {
				return nil, fmt.Errorf("duckdb: day closes: a bar of attributes %x without their names", b.attrs)
			}
			sc.Bars[i] = store.CloseBar{Start: b.start, Close: b.close, LastObservedAt: b.seen, Attrs: a}
		}
	}
	out := make([]store.SeriesCloses, 0, len(names.series))
	for _, sc := range names.series {
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

// dayCloseNames gathers the names DayCloses reads by the hashes its bars carry;
// collided reports two names of one hash.
type dayCloseNames struct {
	series   map[int64]*store.SeriesCloses
	attrs    map[int64]*store.BarAttrs
	collided bool
}

// add takes the names of series hash sh and attributes hash ah: v, the series'
// five strings then the attributes' five.
func (n *dayCloseNames) add(sh, ah int64, v []driver.Value) error {
	var str [10]string
	for i := range str {
		var ok bool
		if str[i], ok = v[i].(string); !ok {
			return fmt.Errorf("duckdb: name %T", v[i])
		}
	}
	sc := store.SeriesCloses{Provider: str[0], SKU: str[1], Region: str[2], Zone: str[3], Pricing: str[4]}
	a := store.BarAttrs{GPU: str[5], Tier: str[6], Interconnect: str[7], PriceScope: str[8], PriceBasis: str[9]}
	if had := n.series[sh]; had == nil {
		n.series[sh] = &sc
	} else if had.Provider != sc.Provider || had.SKU != sc.SKU || had.Region != sc.Region || had.Zone != sc.Zone ||
		had.Pricing != sc.Pricing {
		n.collided = true
	}
	if had := n.attrs[ah]; had == nil {
		n.attrs[ah] = &a
	} else if *had != a {
		n.collided = true
	}
	return nil
}
