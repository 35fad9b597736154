package query

import (
	"context"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// AvailabilityQuery selects what `gpuprice availability` answers: how available
// each offer (or each provider's GPU, By "gpu") was over a window, from the stock
// and depth signals stored; with Need, the offers that can supply that many GPUs
// now, cheapest first on what a finished job costs.
type AvailabilityQuery struct {
	Provider, SKU, Region string
	// GPU is a GPU name as typed, or several separated by commas (a family selects
	// each of its variants).
	GPU          string
	Since, Until time.Time // the window; Since zero: 7 days before Until (or now)
	// By is "offer" (each series, the default) or "gpu" (each provider's GPU: in
	// stock while any of its offers is).
	By string
	// Need, when > 0, asks for the offers whose newest stock (within
	// analytics.StockHold of Until, or now) is at least Need GPUs, with their
	// prices; offers whose stock counts no GPUs (Lambda counts regions) but is not
	// empty come after, marked count_stated false.
	Need int
	// Job is the checkpoint and restart the Need offers' spot prices are
	// risk-adjusted with (docs/risk.md).
	Job analytics.SpotJob
	// Step, when > 0, adds the timeline of each provider's GPU (kind and unit)
	// sampled every Step (analytics.StockTimeline; at least 10 minutes).
	Step time.Duration
}

// MinAvailabilityStep is the shortest Step of a timeline.
const MinAvailabilityStep = 10 * time.Minute

// DefaultAvailabilityWindow is the window of an AvailabilityQuery without Since.
const DefaultAvailabilityWindow = 7 * 24 * time.Hour

// ParseAvailability reads an AvailabilityQuery's parameters (the flags of
// `gpuprice availability`, GET /api/v1/availability).
func ParseAvailability(v url.Values, caps Caps) (AvailabilityQuery, error) {
	p := newParams(v, caps)
	q := AvailabilityQuery{Provider: p.str("provider"), SKU: p.str("sku"), Region: p.str("region"), GPU: p.str("gpu")}
	q.Since, q.Until = p.bounds()
	q.By = p.enum("by", "offer", "offer", "gpu")
	q.Need = p.integer("need", 0, 0, 1_000_000)
	if p.str("step") != "" {
		if q.Step = p.span("step", ""); q.Step > 0 && q.Step < MinAvailabilityStep {
			p.fail("step", "%q: at least %s", p.str("step"), FormatSpan(MinAvailabilityStep))
		}
	}
	q.Job = analytics.SpotJob{Hours: 1, CheckpointMin: p.span("checkpoint", "30m").Minutes(),
		RestartMin: p.span("restart", "10m").Minutes()}
	if q.Need == 0 {
		for _, n := range []string{"checkpoint", "restart"} {
			if p.has(n) {
				p.fail(n, "is read only with need (the offers that can supply that many GPUs now)")
			}
		}
	}
	return q, p.done("format")
}

// Values are q's parameters, as ParseAvailability reads them.
func (q AvailabilityQuery) Values() url.Values {
	v := vals("gpu", q.GPU, "provider", q.Provider, "sku", q.SKU, "region", q.Region)
	if q.By != "" && q.By != "offer" {
		v.Set("by", q.By)
	}
	if q.Step > 0 {
		v.Set("step", FormatSpan(q.Step))
	}
	if q.Need > 0 {
		v.Set("need", strconv.Itoa(q.Need))
		v.Set("checkpoint", FormatSpan(time.Duration(q.Job.CheckpointMin*float64(time.Minute))))
		v.Set("restart", FormatSpan(time.Duration(q.Job.RestartMin*float64(time.Minute))))
	}
	setBounds(v, q.Since, q.Until)
	return v
}

// Availability is the answer of an AvailabilityQuery.
type Availability struct {
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
	By    string    `json:"by"`
	// Rows are the series (or groups) with something observed in the window,
	// least available first.
	Rows []analytics.OfferAvailability `json:"rows"`
	// Need and Offers answer a Need query.
	Need   int             `json:"need,omitempty"`
	Offers []CapacityOffer `json:"offers,omitempty"`
	// Timeline answers a Step query: per provider's GPU, kind and unit.
	Timeline []analytics.StockLine `json:"timeline,omitempty"`
}

// CapacityOffer is an offer that can supply the GPUs asked for now: its stock and
// a price of it, with the expected price of a GPU-hour of work once interruptions
// are counted (spot with a stored band; on-demand and reserved: the sticker).
type CapacityOffer struct {
	Provider string    `json:"provider"`
	SKU      string    `json:"sku"`
	Region   string    `json:"region"`
	GPU      string    `json:"gpu"`
	Stock    float64   `json:"stock"` // the stock signal's value, in Unit
	Unit     string    `json:"unit"`
	Label    string    `json:"label,omitempty"`
	StockAt  time.Time `json:"stock_at"`
	// GPUsAvailable is the GPUs the stock stands for (CountStated false: the
	// provider states none, only that some region has capacity).
	GPUsAvailable float64 `json:"gpus_available"`
	CountStated   bool    `json:"count_stated"`
	// The offer's current price (Pricing "" and no figures: stock without a
	// current price).
	Pricing         string   `json:"pricing,omitempty"`
	PriceUSDGPUHour float64  `json:"usd_gpu_hour,omitempty"`
	PriceRegion     string   `json:"price_region,omitempty"`
	Risk            RiskCost `json:"risk"`
}

// Availability answers q from the stored stock and depth signals.
func (r *Reader) Availability(ctx context.Context, q AvailabilityQuery) (Result[Availability], error) {
	var res Result[Availability]
	gpus := map[string]bool{}
	for _, name := range strings.Split(q.GPU, ",") {
		if name = strings.TrimSpace(name); name == "" {
			continue
		}
		sel, err := r.Resolve(ctx, Filter{GPU: name})
		if err != nil {
			return res, err
		}
		for _, g := range sel.GPUs() {
			gpus[g] = true
		}
		res.Matched = append(res.Matched, sel.Matches...)
	}
	until := q.Until
	if until.IsZero() {
		// The next whole second: a signal stored this second is in the window.
		until = time.Now().UTC().Add(time.Second).Truncate(time.Second)
	}
	since := q.Since
	if since.IsZero() {
		since = until.Add(-DefaultAvailabilityWindow)
	}
	a := Availability{Since: since, Until: until, By: q.By, Need: q.Need, Rows: []analytics.OfferAvailability{}}
	if a.By == "" {
		a.By = "offer"
	}
	sg, err := store.SignalsOf(r.Store)
	if err != nil {
		return res, fmt.Errorf("query: availability: %w", err)
	}
	var sigs []schemas.Signal
	for _, kind := range []string{schemas.SignalStock, schemas.SignalDepth} {
		// From one hold before the window: the signal in force when it began.
		got, err := sg.Signals(ctx, store.SignalQuery{Provider: q.Provider, SKU: q.SKU, Region: q.Region, Kind: kind,
			Since: since.Add(-analytics.StockHold), Until: until})
		if err != nil {
			return res, err
		}
		for _, s := range got {
			if len(gpus) == 0 || gpus[s.GPU] {
				sigs = append(sigs, s)
			}
		}
	}
	sort.SliceStable(sigs, func(i, j int) bool { return seriesLess(sigs[i], sigs[j]) })
	if a.By == "gpu" {
		a.Rows = append(a.Rows, analytics.GroupAvailability(sigs, since, until)...)
	} else {
		a.Rows = append(a.Rows, analytics.StockAvailability(sigs, since, until)...)
	}
	sort.SliceStable(a.Rows, func(i, j int) bool { return a.Rows[i].InStockShare < a.Rows[j].InStockShare })
	if q.Step > 0 {
		a.Timeline = analytics.StockTimeline(sigs, since, until, q.Step)
	}
	if q.Need > 0 {
		if a.Offers, err = r.capacity(ctx, q, sigs, until, gpus); err != nil {
			return res, err
		}
	}
	res.Data = a
	return res, nil
}

// seriesLess orders signals by series, kind, then time, as the stores do.
func seriesLess(a, b schemas.Signal) bool {
	for _, c := range [][2]string{{a.Provider, b.Provider}, {a.SKU, b.SKU}, {a.Region, b.Region}, {a.Zone, b.Zone},
		{a.Kind, b.Kind}} {
		if c[0] != c[1] {
			return c[0] < c[1]
		}
	}
	return a.EffectiveAt.Before(b.EffectiveAt)
}

// capacity is the Need answer: each stock series whose newest signal holds at
// until and can supply q.Need GPUs (or states no count but is not empty), with
// each current price of its offer, cheapest first on the risk-adjusted figure.
func (r *Reader) capacity(ctx context.Context, q AvailabilityQuery, sigs []schemas.Signal, until time.Time,
	gpus map[string]bool) ([]CapacityOffer, error) {
	type key struct{ provider, sku string }
	var newest []schemas.Signal
	for i, s := range sigs {
		last := i+1 == len(sigs) || !sigs[i+1].SameSeries(s) || sigs[i+1].Kind != s.Kind
		if !last || s.Kind != schemas.SignalStock || s.Value <= 0 || s.EffectiveAt.Add(analytics.StockHold).Before(until) {
			continue
		}
		newest = append(newest, s)
	}
	// The current prices of the offers with stock, read once per provider.
	prices := map[key][]schemas.Observation{}
	read := map[string]bool{}
	for _, s := range newest {
		if read[s.Provider] {
			continue
		}
		read[s.Provider] = true
		rows, err := r.latest(ctx, store.Filter{Provider: s.Provider})
		if err != nil {
			return nil, err
		}
		rows = ListedOnly(analytics.CurrentOnly(rows, analytics.StaleAfter))
		for _, o := range rows {
			if len(gpus) > 0 && !gpus[o.GPU] {
				continue
			}
			prices[key{o.Provider, o.SKU}] = append(prices[key{o.Provider, o.SKU}], o)
		}
	}
	var out []CapacityOffer
	var priced []schemas.Observation
	var owner []int
	for _, s := range newest {
		perInstance := 0
		ps := prices[key{s.Provider, s.SKU}]
		for _, o := range ps {
			if o.GPUCount > 0 {
				perInstance = int(o.GPUCount)
			}
		}
		n, stated := analytics.GPUsAvailable(s, perInstance)
		if stated && n < float64(q.Need) {
			continue
		}
		base := CapacityOffer{Provider: s.Provider, SKU: s.SKU, Region: s.Region, GPU: s.GPU, Stock: s.Value,
			Unit: analytics.UnitOf(s), Label: s.Label, StockAt: s.EffectiveAt, GPUsAvailable: n, CountStated: stated}
		matched := false
		for _, o := range ps {
			if s.Region != "" && o.Region != s.Region {
				continue
			}
			matched = true
			c := base
			c.Pricing, c.PriceUSDGPUHour, c.PriceRegion = o.Pricing, o.PriceUSDGPUHour, o.Region
			out = append(out, c)
			priced, owner = append(priced, o), append(owner, len(out)-1)
		}
		if !matched {
			out = append(out, base)
		}
	}
	adj, err := RiskAdjust(ctx, r, priced, q.Job, false)
	if err != nil {
		return nil, err
	}
	for i, ra := range adj {
		out[owner[i]].Risk = ra.Risk
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.CountStated != b.CountStated {
			return a.CountStated
		}
		return capacityCost(a) < capacityCost(b)
	})
	if out == nil {
		out = []CapacityOffer{}
	}
	return out, nil
}

// capacityCost is the figure offers are ordered by: the risk-adjusted price where
// known, else the sticker; unknown bands and offers without a price last.
func capacityCost(c CapacityOffer) float64 {
	switch {
	case c.Pricing == "":
		return math.Inf(1)
	case c.Risk.Known && c.Risk.Expected > 0:
		return c.Risk.Expected
	case c.Risk.Known:
		return c.PriceUSDGPUHour
	}
	return math.MaxFloat64 / 2
}

// Table is the answer as a table: the Need offers when asked for, else the
// window's rows.
func (a Availability) Table() ([]string, [][]string) {
	if a.Need > 0 {
		header := []string{"provider", "sku", "region", "gpu", "gpus_available", "stock", "unit", "stock_at", "pricing",
			"usd_gpu_hour", "band", "risk_adj_usd_gpu_hour"}
		rows := make([][]string, 0, len(a.Offers))
		for _, c := range a.Offers {
			gpus := "not stated"
			if c.CountStated {
				gpus = strconv.FormatFloat(c.GPUsAvailable, 'f', -1, 64)
			}
			price, band, adj := Missing, Missing, Missing
			if c.Pricing != "" {
				price = strconv.FormatFloat(c.PriceUSDGPUHour, 'f', 4, 64)
				band = c.Risk.Band
				switch {
				case !c.Risk.Known:
					band = "unknown"
				case c.Risk.Expected > 0:
					adj = strconv.FormatFloat(c.Risk.Expected, 'f', 4, 64)
				default:
					adj = price
				}
				if band == "" {
					band = Missing
				}
			}
			rows = append(rows, []string{c.Provider, c.SKU, c.Region, c.GPU, gpus,
				strconv.FormatFloat(c.Stock, 'f', -1, 64), c.Unit, c.StockAt.UTC().Format(time.RFC3339), c.Pricing,
				price, band, adj})
		}
		return header, rows
	}
	header := []string{"provider", "sku", "region", "gpu", "kind", "in_stock_share", "observed_h", "outages",
		"longest_outage_h", "longest_outage_from", "last", "unit", "last_at"}
	if a.By == "gpu" {
		header[1], header[2] = "series", "signals"
	}
	rows := make([][]string, 0, len(a.Rows))
	for _, r := range a.Rows {
		from := Missing
		if !r.OutageFrom.IsZero() {
			from = r.OutageFrom.UTC().Format(time.RFC3339)
		}
		sku, region := r.SKU, r.Region
		if a.By == "gpu" {
			sku, region = strconv.Itoa(r.Series), strconv.Itoa(r.Signals)
		}
		rows = append(rows, []string{r.Provider, sku, region, r.GPU, r.Kind,
			strconv.FormatFloat(r.InStockShare, 'f', 4, 64), hours(r.Observed), strconv.Itoa(r.Outages),
			hours(r.LongestOutage), from, strconv.FormatFloat(r.Last, 'f', -1, 64), r.Unit,
			r.LastAt.UTC().Format(time.RFC3339)})
	}
	return header, rows
}

func hours(d time.Duration) string { return strconv.FormatFloat(d.Hours(), 'f', 2, 64) }
