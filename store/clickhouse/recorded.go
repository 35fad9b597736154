package clickhouse

import (
	"context"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/store"
)

var _ store.RecordedCounter = (*Store)(nil)

// rawWhere is the conditions of f on the stored rows' own columns (every version of
// an identity; the GPU and tier as each row has them), with ? placeholders.
func rawWhere(f store.Filter) ([]string, []any) {
	var (
		conds []string
		args  []any
	)
	eq := func(col, v string) {
		if v != "" {
			conds = append(conds, col+" = ?")
			args = append(args, v)
		}
	}
	eq("provider", f.Provider)
	eq("pricing", f.Pricing)
	eq("region", f.Region)
	eq("gpu", f.GPU)
	eq("tier", f.Tier)
	for _, b := range []struct {
		t  time.Time
		op string
	}{{f.Since, ">="}, {f.Until, "<"}} {
		if b.t.IsZero() {
			continue
		}
		t := b.t.UTC().Truncate(time.Second)
		switch {
		case t.Before(minTime):
			t = minTime
		case t.After(maxTime):
			t = maxTime
		}
		conds = append(conds, "effective_at "+b.op+" ?")
		args = append(args, t)
	}
	return conds, args
}

// RecordedSeries counts per provider the series of f with a recorded row in the
// window or a recorded price carried into it (store.RecordedCounter), from the
// origin column. A reparse writes a recorded identity again as recorded; a live
// collection never writes a recorded row's identity (its effective_at is the time
// of the collection), so the rows' origin is their last write's.
func (s *Store) RecordedSeries(ctx context.Context, f store.Filter) (map[string]int, error) {
	conds, args := rawWhere(f)
	q := `SELECT provider, sku, region, zone, pricing FROM observations WHERE ` +
		strings.Join(append(conds, "origin = 'recorded'"), " AND ")
	if !f.Since.IsZero() {
		before := f
		before.Since, before.Until = time.Time{}, f.Since
		bconds, bargs := rawWhere(before)
		q += ` UNION ALL SELECT provider, sku, region, zone, pricing FROM observations WHERE ` +
			strings.Join(bconds, " AND ") + `
			GROUP BY provider, sku, region, zone, pricing HAVING argMax(origin, effective_at) = 'recorded'`
		args = append(args, bargs...)
	}
	rows, err := s.conn.Query(ctx, `SELECT provider, uniqExact(sku, region, zone, pricing) FROM (`+q+`)
		GROUP BY provider`, args...)
	if err != nil {
		return nil, s.wrap("recorded series", err)
	}
	defer rows.Close()
	out := map[string]int{}
	for rows.Next() {
		var (
			p string
			n uint64
		)
		if err := rows.Scan(&p, &n); err != nil {
			return nil, s.wrap("recorded series", err)
		}
		out[p] = int(n)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("recorded series", err)
	}
	return out, nil
}
