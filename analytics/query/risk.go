package query

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// RiskQuery selects the interruption history `gpuprice risk` shows.
type RiskQuery struct {
	Provider, SKU, Region string
	// GPU is a GPU name as typed, or several separated by commas (a family selects
	// each of its variants): only the series of the GPUs they resolve to (the
	// Reader resolves them; Risk takes the canonical set).
	GPU          string
	Since, Until time.Time
	// ChangesOnly keeps only the moves between bands, not each series' first band.
	ChangesOnly bool
}

// RiskHistory is the interruption band history of the series a RiskQuery selects:
// each series' first band and every change after it, with the rate each band is
// read as (docs/risk.md).
type RiskHistory struct {
	Changes []RiskChange `json:"changes"`
}

// RiskChange is a band change with the rate of the band moved to.
type RiskChange struct {
	analytics.BandChange
	// RatePerHour is λ of the band moved to (0 when the band is not one gpuprice
	// maps: a provider without a mapping).
	RatePerHour float64 `json:"rate_per_hour"`
}

// ParseRisk reads a RiskQuery's parameters (the flags of `gpuprice risk`): since and
// until a date, an RFC 3339 time or a span back from now (absent: unbounded).
func ParseRisk(v url.Values, caps Caps) (RiskQuery, error) {
	p := newParams(v, caps)
	q := RiskQuery{Provider: p.str("provider"), SKU: p.str("sku"), Region: p.str("region"), GPU: p.str("gpu"),
		ChangesOnly: p.boolean("changes")}
	if s := p.str("since"); s != "" {
		t, err := ParseSince(s, time.Now().UTC())
		if err != nil {
			p.fail("since", "%q: %v", s, err)
		}
		q.Since = t
	}
	if s := p.str("until"); s != "" {
		t, err := ParseUntil(s)
		if err != nil {
			p.fail("until", "%q: %v", s, err)
		}
		q.Until = t
	}
	return q, p.done("format")
}

// Values are q's parameters, as ParseRisk reads them (GET /api/v1/risk).
func (q RiskQuery) Values() url.Values {
	v := vals("gpu", q.GPU, "provider", q.Provider, "sku", q.SKU, "region", q.Region)
	if q.ChangesOnly {
		v.Set("changes", "true")
	}
	setBounds(v, q.Since, q.Until)
	return v
}

// Risk is the band history of the interruption signals the store keeps
// (`gpuprice risk`, GET /api/v1/risk).
func (r *Reader) Risk(ctx context.Context, q RiskQuery) (Result[RiskHistory], error) {
	var matched []schemas.Match
	var gpus []string
	for _, name := range strings.Split(q.GPU, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		sel, err := r.Resolve(ctx, Filter{GPU: name})
		if err != nil {
			return Result[RiskHistory]{}, err
		}
		gpus, matched = append(gpus, sel.GPUs()...), append(matched, sel.Matches...)
	}
	h, err := Risk(ctx, r.Store, q, gpus)
	return Result[RiskHistory]{Data: h, Matched: matched}, err
}

// Risk reads the interruption signals q selects from st and returns their band
// history, of the canonical GPUs gpus only when there are any (q.GPU is the
// Reader's to resolve into them and is not read here).
func Risk(ctx context.Context, st store.Store, q RiskQuery, gpus []string) (RiskHistory, error) {
	sg, err := store.SignalsOf(st)
	if err != nil {
		return RiskHistory{}, fmt.Errorf("query: risk: %w", err)
	}
	// The signals before Since are read too: a move in the window is a move from the
	// band in force when it began, not a series' first band.
	sigs, err := sg.Signals(ctx, store.SignalQuery{Provider: q.Provider, SKU: q.SKU, Region: q.Region,
		Kind: schemas.SignalInterruption, Until: q.Until})
	if err != nil {
		return RiskHistory{}, err
	}
	out := RiskHistory{Changes: []RiskChange{}}
	changes := analytics.BandChanges(sigs)
	only := map[string]bool{}
	for _, g := range gpus {
		only[g] = true
	}
	for i, c := range changes {
		if len(only) > 0 && !only[c.GPU] {
			continue
		}
		if c.At.Before(q.Since) {
			// Before the window, only the band in force when it began is listed (not
			// with ChangesOnly): the series' last change before Since.
			next := i + 1
			inForce := next == len(changes) || !changes[next].SameSeries(c) || !changes[next].At.Before(q.Since)
			if q.ChangesOnly || !inForce {
				continue
			}
		} else if q.ChangesOnly && c.Rise == 0 {
			continue
		}
		rc := RiskChange{BandChange: c}
		if b, ok := analytics.BandOf(c.Provider, c.To, c.ToLabel); ok {
			rc.RatePerHour = b.Rate()
		}
		out.Changes = append(out.Changes, rc)
	}
	return out, nil
}

// Table is the history as a table.
func (r RiskHistory) Table() ([]string, [][]string) {
	header := []string{"provider", "sku", "region", "gpu", "at", "from", "to", "move", "rate_per_hour"}
	rows := make([][]string, 0, len(r.Changes))
	for _, c := range r.Changes {
		move := "first"
		switch c.Rise {
		case 1:
			move = "up"
		case -1:
			move = "down"
		}
		rows = append(rows, []string{c.Provider, c.SKU, c.Region, c.GPU, c.At.UTC().Format(time.RFC3339), c.FromLabel,
			c.ToLabel, move, strconv.FormatFloat(c.RatePerHour, 'g', 6, 64)})
	}
	return header, rows
}

// SignalSource is the optional ability of a Source to read stored signals: the
// Reader over a store that keeps them has it; the API client does not yet.
type SignalSource interface {
	Signals(ctx context.Context, q store.SignalQuery) ([]schemas.Signal, error)
}

// Signals reads the store's signals.
func (r *Reader) Signals(ctx context.Context, q store.SignalQuery) ([]schemas.Signal, error) {
	sg, err := store.SignalsOf(r.Store)
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	return sg.Signals(ctx, q)
}

// Signals passes through to the Source noted, when it reads signals.
func (n *noting) Signals(ctx context.Context, q store.SignalQuery) ([]schemas.Signal, error) {
	ss, ok := n.Source.(SignalSource)
	if !ok {
		return nil, fmt.Errorf("query: risk-adjusted prices need the store itself (not the API of gpuprice serve)")
	}
	return ss.Signals(ctx, q)
}

// RiskAdjusted is a price with the expected cost of the work it buys once
// interruptions are counted (docs/risk.md).
type RiskAdjusted struct {
	schemas.Observation
	Risk RiskCost `json:"risk"`
}

// RiskCost is the risk part of a RiskAdjusted: the band read (spot rows), the rate,
// and the expected $ per GPU-hour of work, with the computation when asked.
type RiskCost struct {
	Band      string    `json:"band,omitempty"`
	BandAt    time.Time `json:"band_at,omitzero"`
	Rate      float64   `json:"rate_per_hour"`
	Known     bool      `json:"known"` // false: a spot price without a band (no expected cost)
	Expected  float64   `json:"expected_usd_gpu_hour,omitempty"`
	Factor    float64   `json:"factor,omitempty"`
	Explained string    `json:"explain,omitempty"`
}

// RiskAdjust prices one GPU-hour of work of job's checkpoint and restart (its
// Hours are taken as 1) on each row: on-demand, reserved and commitment capacity
// is not interrupted (λ = 0); a spot row takes the newest interruption band stored
// for its (provider, sku, region); a spot or low-priority row without one is kept
// with Known false. explain adds each computation.
func RiskAdjust(ctx context.Context, src SignalSource, rows []schemas.Observation, job analytics.SpotJob,
	explain bool) ([]RiskAdjusted, error) {
	job.Hours = 1
	if err := job.Validate(); err != nil {
		return nil, err
	}
	type key struct{ provider, sku, region string }
	bands := map[key]schemas.Signal{}
	read := map[string]bool{}
	for _, o := range rows {
		if o.Pricing != schemas.Spot || read[o.Provider] {
			continue
		}
		read[o.Provider] = true
		sigs, err := src.Signals(ctx, store.SignalQuery{Provider: o.Provider, Kind: schemas.SignalInterruption})
		if err != nil {
			return nil, err
		}
		for _, s := range sigs { // ordered by series then time: the last one is the newest
			bands[key{s.Provider, s.SKU, s.Region}] = s
		}
	}
	out := make([]RiskAdjusted, 0, len(rows))
	for _, o := range rows {
		ra := RiskAdjusted{Observation: o}
		band, rate, known := "", 0.0, true
		switch o.Pricing {
		case schemas.Spot:
			s, ok := bands[key{o.Provider, o.SKU, o.Region}]
			b, mapped := analytics.BandOf(o.Provider, s.Value, s.Label)
			known = ok && mapped
			if known {
				band, rate, ra.Risk.BandAt = s.Label, b.Rate(), s.EffectiveAt
			}
		case schemas.LowPriority:
			known = false
		}
		ra.Risk.Band, ra.Risk.Rate, ra.Risk.Known = band, rate, known
		if known {
			c, err := analytics.ExpectedJobCost(o.PriceUSDGPUHour, rate, job)
			if err != nil {
				return nil, err
			}
			ra.Risk.Expected, ra.Risk.Factor = c.Expected, c.Factor
			if explain {
				ra.Risk.Explained = c.Explain(band)
			}
		}
		out = append(out, ra)
	}
	return out, nil
}

// RiskAdjustedTable is the table of risk-adjusted prices.
func RiskAdjustedTable(rows []RiskAdjusted) ([]string, [][]string) {
	header := []string{"provider", "sku", "region", "gpu", "pricing", "usd_gpu_hour", "band", "rate_per_hour",
		"risk_adj_usd_gpu_hour"}
	out := make([][]string, 0, len(rows))
	for _, r := range rows {
		band, rate, adj := r.Risk.Band, strconv.FormatFloat(r.Risk.Rate, 'g', 6, 64), Missing
		if r.Risk.Known {
			adj = strconv.FormatFloat(r.Risk.Expected, 'f', 6, 64)
		} else {
			band, rate = "unknown", Missing
		}
		out = append(out, []string{r.Provider, r.SKU, r.Region, r.GPU, r.Pricing,
			strconv.FormatFloat(r.PriceUSDGPUHour, 'f', 6, 64), band, rate, adj})
	}
	return header, out
}
