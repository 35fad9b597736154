package clickhouse

import (
	"context"
	"fmt"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// WriteSignals writes signals as one batch; the newest version of an identity is
// the one read.
func (s *Store) WriteSignals(ctx context.Context, sigs []schemas.Signal) error {
	if len(sigs) == 0 {
		return nil
	}
	const op = "write signals"
	if err := store.ValidateSignals(sigs); err != nil {
		return fmt.Errorf("clickhouse: %s: %w", op, err)
	}
	batch, err := s.conn.PrepareBatch(ctx, `INSERT INTO signals (observed_at, effective_at, provider, sku, region,
		zone, gpu, kind, value, label, source, source_url, run_id, attrs, version)`)
	if err != nil {
		return s.wrap(op, err)
	}
	defer batch.Close()
	version := s.versions(len(sigs))
	var enc store.AttrsEncoder
	for i, g := range sigs {
		observed, err := toCH(g.ObservedAt)
		if err != nil {
			return fmt.Errorf("clickhouse: %s: observed_at: %w", op, err)
		}
		effective, err := toCH(g.EffectiveAt)
		if err != nil {
			return fmt.Errorf("clickhouse: %s: effective_at: %w", op, err)
		}
		attrs, err := enc.Encode(g.Attrs)
		if err != nil {
			return fmt.Errorf("clickhouse: %s: attrs: %w", op, err)
		}
		if err := batch.Append(observed, effective, g.Provider, g.SKU, g.Region, g.Zone, g.GPU, g.Kind, g.Value,
			g.Label, g.Source, g.SourceURL, g.RunID, attrs, version+uint64(i)); err != nil {
			return s.wrap(op+": append", err)
		}
	}
	if err := batch.Send(); err != nil {
		return s.wrap(op, err)
	}
	return nil
}

// Signals returns the signals q selects: the last write of each identity, merged
// or not.
func (s *Store) Signals(ctx context.Context, q store.SignalQuery) ([]schemas.Signal, error) {
	const op = "signals"
	var terr error
	where, args := store.SignalWhere(q, func(t time.Time) any {
		v, err := toCH(t)
		if err != nil && terr == nil {
			terr = err
		}
		return v
	})
	if terr != nil {
		return nil, fmt.Errorf("clickhouse: %s: %w", op, terr)
	}
	rows, err := s.conn.Query(ctx, `SELECT provider, sku, region, zone, kind, effective_at,
		argMax(observed_at, version), argMax(gpu, version), argMax(value, version), argMax(label, version),
		argMax(source, version), argMax(source_url, version), argMax(run_id, version), argMax(attrs, version)
	FROM signals WHERE `+where+`
	GROUP BY provider, sku, region, zone, kind, effective_at
	ORDER BY provider, sku, region, zone, kind, effective_at`, args...)
	if err != nil {
		return nil, s.wrap(op, err)
	}
	defer rows.Close()
	var out []schemas.Signal
	for rows.Next() {
		var g schemas.Signal
		var attrs string
		if err := rows.Scan(&g.Provider, &g.SKU, &g.Region, &g.Zone, &g.Kind, &g.EffectiveAt, &g.ObservedAt, &g.GPU,
			&g.Value, &g.Label, &g.Source, &g.SourceURL, &g.RunID, &attrs); err != nil {
			return nil, s.wrap(op, err)
		}
		g.EffectiveAt, g.ObservedAt = fromCH(g.EffectiveAt), fromCH(g.ObservedAt)
		if g.Attrs, err = store.DecodeAttrs(attrs); err != nil {
			return nil, fmt.Errorf("clickhouse: %s: %w", op, err)
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap(op, err)
	}
	return out, nil
}

var _ store.Signals = (*Store)(nil)
