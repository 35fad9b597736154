package duckdb

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// WriteSignals upserts signals by identity, in one transaction; within sigs the
// last of an identity wins.
func (s *Store) WriteSignals(ctx context.Context, sigs []schemas.Signal) error {
	if len(sigs) == 0 {
		return nil
	}
	if err := store.ValidateSignals(sigs); err != nil {
		return fmt.Errorf("duckdb: write signals: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("duckdb: write signals: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	version := s.versions(len(sigs))
	var enc store.AttrsEncoder
	rows := lastOfIdentity(sigs)
	// One statement per chunk of rows: a statement per row costs a round of
	// DuckDB's planner each.
	const chunk = 256
	for lo := 0; lo < len(rows); lo += chunk {
		hi := min(lo+chunk, len(rows))
		var b strings.Builder
		b.WriteString(`INSERT INTO signals (observed_at, effective_at, provider, sku, region, zone, gpu, kind, value,
			label, source, source_url, run_id, attrs, version) VALUES `)
		args := make([]any, 0, (hi-lo)*15)
		for i := lo; i < hi; i++ {
			g := rows[i]
			attrs, err := enc.Encode(g.Attrs)
			if err != nil {
				return fmt.Errorf("duckdb: write signals: %w", err)
			}
			if i > lo {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
			args = append(args, utc(g.ObservedAt), utc(g.EffectiveAt), g.Provider, g.SKU, g.Region, g.Zone, g.GPU,
				g.Kind, g.Value, g.Label, g.Source, g.SourceURL, g.RunID, attrs, version+uint64(i))
		}
		b.WriteString(` ON CONFLICT (provider, sku, region, zone, kind, effective_at) DO UPDATE SET
			observed_at = excluded.observed_at, gpu = excluded.gpu, value = excluded.value, label = excluded.label,
			source = excluded.source, source_url = excluded.source_url, run_id = excluded.run_id,
			attrs = excluded.attrs, version = excluded.version`)
		if _, err := tx.ExecContext(ctx, b.String(), args...); err != nil {
			return fmt.Errorf("duckdb: write signals: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("duckdb: write signals: %w", err)
	}
	return nil
}

// lastOfIdentity returns sigs with only the last signal of each identity, in the
// order of those last ones, so that each stored row is written once per write.
func lastOfIdentity(sigs []schemas.Signal) []schemas.Signal {
	type key struct {
		provider, sku, region, zone, kind string
		at                                int64
	}
	last := make(map[key]int, len(sigs))
	for i, g := range sigs {
		last[key{g.Provider, g.SKU, g.Region, g.Zone, g.Kind, utc(g.EffectiveAt).Unix()}] = i
	}
	if len(last) == len(sigs) {
		return sigs
	}
	out := make([]schemas.Signal, 0, len(last))
	for i, g := range sigs {
		if last[key{g.Provider, g.SKU, g.Region, g.Zone, g.Kind, utc(g.EffectiveAt).Unix()}] == i {
			out = append(out, g)
		}
	}
	return out
}

// Signals returns the signals q selects.
func (s *Store) Signals(ctx context.Context, q store.SignalQuery) ([]schemas.Signal, error) {
	where, args := store.SignalWhere(q, func(t time.Time) any { return utc(t) })
	rows, err := s.db.QueryContext(ctx, `SELECT provider, sku, region, zone, kind, effective_at, observed_at, gpu,
		value, label, source, source_url, run_id, attrs
	FROM signals WHERE `+where+`
	ORDER BY provider, sku, region, zone, kind, effective_at`, args...)
	if err != nil {
		return nil, fmt.Errorf("duckdb: signals: %w", err)
	}
	defer rows.Close()
	var out []schemas.Signal
	for rows.Next() {
		var g schemas.Signal
		var attrs string
		if err := rows.Scan(&g.Provider, &g.SKU, &g.Region, &g.Zone, &g.Kind, &g.EffectiveAt, &g.ObservedAt, &g.GPU,
			&g.Value, &g.Label, &g.Source, &g.SourceURL, &g.RunID, &attrs); err != nil {
			return nil, fmt.Errorf("duckdb: signals: %w", err)
		}
		g.EffectiveAt, g.ObservedAt = g.EffectiveAt.UTC(), g.ObservedAt.UTC()
		if g.Attrs, err = store.DecodeAttrs(attrs); err != nil {
			return nil, fmt.Errorf("duckdb: signals: %w", err)
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("duckdb: signals: %w", err)
	}
	return out, nil
}

var _ store.Signals = (*Store)(nil)
