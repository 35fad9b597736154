package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/schemas/stats"
	"github.com/gpuprice/gpuprice/store"
)

// SuspectConfig is the relative gate beside the absolute Bounds: a price far from
// its peers is held as suspect (quarantined with the reason and the peer median)
// instead of becoming the cheapest offer or entering the index. Peers of a row are
// the current prices of the same canonical GPU, pricing kind and price scope: other
// providers', the same provider's other tiers and regions, and the series' own last
// price (docs/analytics.md, "Suspect prices").
type SuspectConfig struct {
	// Below and Above bound the ratio price / peer median that passes: defaults 0.25
	// and 4 (under a quarter or over four times the median is suspect).
	Below, Above float64
	// MinPeers is how many peer prices a median needs before the gate judges
	// (default 3): with fewer, nothing is suspect.
	MinPeers int
	// Disabled turns the gate off.
	Disabled bool
}

// DefaultSuspect is the gate's documented default.
func DefaultSuspect() SuspectConfig { return SuspectConfig{Below: 0.25, Above: 4, MinPeers: 3} }

// SuspectPrefix starts the quarantine reason of every suspect row; `gpuprice
// quarantine release` only releases such rows.
const SuspectPrefix = "suspect:"

// peerKey groups peers: same canonical GPU, pricing kind, price scope and market
// tier. Tiers are kept apart because their price levels differ by design (a
// hyperscaler's on-demand H100 is 4–7× a marketplace's; that premium is what
// `gpuprice spreads` measures), so one median across tiers would hold real prices.
type peerKey struct{ gpu, pricing, scope, tier string }

// Peers is the set of current prices a run's rows are judged against. It starts
// from the store's latest prices and learns every row the run accepts, so that a
// first collection is judged against its own other rows. Safe for concurrent use.
type Peers struct {
	cfg SuspectConfig
	// now and window: only rows observed within window of now are judged (current
	// peers cannot judge a price replayed from history). Zero window: every row.
	now    time.Time
	window time.Duration
	mu     sync.Mutex
	by     map[peerKey]map[string]float64 // series key → $/GPU-hour
}

// NewPeers builds the peer set from current rows (store.Latest, withdrawn series
// already left out), keeping listed prices of known GPUs.
func NewPeers(cfg SuspectConfig, current []schemas.Observation) *Peers {
	d := DefaultSuspect()
	if cfg.Below <= 0 {
		cfg.Below = d.Below
	}
	if cfg.Above <= 0 {
		cfg.Above = d.Above
	}
	if cfg.MinPeers <= 0 {
		cfg.MinPeers = d.MinPeers
	}
	p := &Peers{cfg: cfg, by: map[peerKey]map[string]float64{}}
	for _, o := range current {
		p.learn(o)
	}
	return p
}

func keyOf(o schemas.Observation) (peerKey, bool) {
	if o.GPU == "" || o.GPU == schemas.UnknownGPU || !o.Comparable() || !(o.PriceUSDGPUHour > 0) {
		return peerKey{}, false
	}
	return peerKey{o.GPU, o.Pricing, schemas.ScopeOf(o.PriceScope), o.Tier}, true
}

func (p *Peers) learn(o schemas.Observation) {
	k, ok := keyOf(o)
	if !ok {
		return
	}
	m := p.by[k]
	if m == nil {
		m = map[string]float64{}
		p.by[k] = m
	}
	m[o.SeriesKey()] = o.PriceUSDGPUHour
}

// Learn adds an accepted row to the peers. A row outside the window (history
// replayed by an import or a backfill) is not a current price: it is judged by
// no one and judges no one.
func (p *Peers) Learn(o schemas.Observation) {
	if p == nil || p.cfg.Disabled || !p.current(&o) {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.learn(o)
}

// current reports whether o was observed within the window of now (every row
// when there is no window).
func (p *Peers) current(o *schemas.Observation) bool {
	return p.window <= 0 || !(o.ObservedAt.Before(p.now.Add(-p.window)) || o.ObservedAt.After(p.now.Add(p.window)))
}

// Judge returns the reason a normalised row is suspect, or "" when it is not (or
// has too few peers to judge). The row's own series counts with its last price.
func (p *Peers) Judge(o schemas.Observation) string {
	if p == nil || p.cfg.Disabled {
		return ""
	}
	k, ok := keyOf(o)
	if !ok {
		return ""
	}
	if !p.current(&o) {
		return ""
	}
	p.mu.Lock()
	prices := make([]float64, 0, len(p.by[k]))
	for _, v := range p.by[k] {
		prices = append(prices, v)
	}
	p.mu.Unlock()
	if len(prices) < p.cfg.MinPeers {
		return ""
	}
	med := stats.Median(prices)
	ratio := o.PriceUSDGPUHour / med
	if ratio >= p.cfg.Below && ratio <= p.cfg.Above {
		return ""
	}
	return fmt.Sprintf(
		"%s $%.4g/GPU-h is %.2g× the peer median $%.4g/GPU-h of %d current %s %s %s %s prices (held below %g× or above "+
			"%g×); release with `gpuprice quarantine release` if it is real",
		SuspectPrefix,
		o.PriceUSDGPUHour,
		ratio,
		med,
		len(prices),
		k.tier,
		k.gpu,
		k.pricing,
		k.scope,
		p.cfg.Below,
		p.cfg.Above,
	)
}

// ErrNotSuspect is returned by ReleaseSuspect for a quarantined row that was not
// held as suspect (a row that failed an absolute gate cannot be released).
var ErrNotSuspect = errors.New("ingest: not a suspect row")

// ReleaseSuspect stores a row a person confirmed: q must be a row the suspect gate
// held (its reason starts with SuspectPrefix). The raw row is normalised again with
// every gate but the relative one, marked Attrs["released_from_quarantine"] = q.ID()
// and written with run id "release-<id>"; the bars over its day are rebuilt. The
// quarantine log is append-only and keeps the row; a run record "quarantine-release"
// says who came out. Releasing the same row twice writes the same identity twice,
// which counts once.
func (r *Runner) ReleaseSuspect(ctx context.Context, q schemas.Quarantined) (schemas.Observation, error) {
	if !strings.HasPrefix(q.Reason, SuspectPrefix) {
		return schemas.Observation{}, fmt.Errorf("%w: %s (reason: %s)", ErrNotSuspect, q.ID(), q.Reason)
	}
	var o schemas.Observation
	if err := json.Unmarshal([]byte(q.Raw), &o); err != nil {
		return o, fmt.Errorf("ingest: release %s: raw row: %w", q.ID(), err)
	}
	n := r.normalizer(ctx, FXLazy) // no relative gate
	out, _, err := n.Normalize(ctx, o)
	if err != nil {
		return o, fmt.Errorf("ingest: release %s: %w", q.ID(), err)
	}
	if out.Attrs == nil {
		out.Attrs = map[string]string{}
	}
	out.Attrs["released_from_quarantine"] = q.ID()
	out.RunID = "release-" + q.ID()
	now := time.Now().UTC()
	if r.Now != nil {
		now = r.Now().UTC()
	}
	if err := r.Store.WriteObservations(ctx, []schemas.Observation{out}); err != nil {
		return out, fmt.Errorf("ingest: release %s: %w", q.ID(), err)
	}
	if ru, ok := r.Store.(store.Rollups); ok {
		day := out.EffectiveAt.UTC().Truncate(store.Daily)
		if err := ru.Rollup(ctx, day, day.Add(store.Daily)); err != nil {
			return out, fmt.Errorf("ingest: release %s: rollup: %w", q.ID(), err)
		}
	}
	run := schemas.Run{RunID: out.RunID, Source: "quarantine-release", StartedAt: now, FinishedAt: now,
		Status: schemas.RunOK, RowsAccepted: 1, Error: "released " + q.ID() + " of " + q.Source + " run " + q.RunID}
	if err := r.Store.WriteRun(ctx, run); err != nil {
		return out, fmt.Errorf("ingest: release %s: run record: %w", q.ID(), err)
	}
	return out, nil
}
