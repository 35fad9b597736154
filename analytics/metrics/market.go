// Package metrics is the market on /metrics: a Prometheus collector (Market) that
// asks the read model (analytics/query) at scrape time for the cheapest current price
// per label set, the offers, the latest index and spreads, the interruption bands and
// the stock now, with every label bounded (provider text folded by textsafe.PromLabel,
// a provider's regions past maxRegionLabels folded into one). serve registers it
// beside its own run counters; it computes nothing the read model does not.
package metrics

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/schemas/textsafe"
	"github.com/gpuprice/gpuprice/store"
)

// Market is a Prometheus collector of the market, asked at scrape time: the spool
// size, the cheapest current $/GPU-hour per GPU, pricing kind, tier, provider and
// region (GPUs the catalog could not place left out), the offers per GPU, pricing kind
// and tier, the latest day's reference index and tier spread, the interruption band
// in force of every spot offer, and the GPUs in stock and the market depth now. Index,
// spreads, bands and stock read bars and signals: they are computed at most once a
// minute (Invalidate forces the next scrape to).
type Market struct {
	// Reader answers the index, spreads, risk and signals questions.
	Reader *query.Reader
	// Current returns the latest prices of the series still on offer.
	Current func(ctx context.Context, f store.Filter) ([]schemas.Observation, error)
	// Spool returns the rows waiting in the spool; nil: no spool gauge.
	Spool func() (int, error)
	// Log takes the warnings of a figure that could not be read (the scrape goes on).
	Log *slog.Logger

	mu      sync.Mutex
	when    time.Time
	index   []analytics.IndexPoint
	spreads []analytics.SpreadDay
	bands   []query.RiskChange   // the band in force of every series
	stock   map[stockKey]float64 // gpuprice_gpus_in_stock
	depth   map[stockKey]float64 // gpuprice_market_depth
}

// stockKey is the label set of the stock gauges.
type stockKey struct{ provider, gpu string }

var (
	cheapestDesc = prometheus.NewDesc("gpuprice_cheapest_usd_per_gpu_hour",
		"Cheapest latest price per GPU-hour of the series on offer, per GPU, pricing kind, tier, provider and region.",
		[]string{"gpu", "pricing", "tier", "provider", "region"}, nil)
	offersDesc = prometheus.NewDesc("gpuprice_offers", "Series with a latest price.", []string{"gpu", "pricing", "tier"},
		nil)
	spoolDesc = prometheus.NewDesc("gpuprice_spool_rows", "Rows waiting in the on-disk spool.", nil, nil)
	indexDesc = prometheus.NewDesc("gpuprice_index_usd_per_gpu_hour",
		"The latest day's reference price (gpuprice index) per GPU, pricing kind and group.", []string{"gpu", "pricing",
			"group"}, nil)
	spreadDesc = prometheus.NewDesc("gpuprice_spread_ratio",
		"The latest day's hyperscaler / specialist median ratio (gpuprice spreads) per GPU and pricing kind; absent when a "+
			"tier has no price.", []string{"gpu", "pricing"}, nil)
	medianDesc = prometheus.NewDesc("gpuprice_tier_median_usd_per_gpu_hour",
		"The latest day's median price per GPU-hour of a tier (gpuprice spreads).", []string{"gpu", "pricing", "tier"}, nil)
	bandDesc = prometheus.NewDesc("gpuprice_interruption_band",
		"The interruption band in force of a spot offer (gpuprice risk; AWS Spot Advisor: 0 <5%, 1 5-10%, 2 10-15%, "+
			"3 15-20%, 4 >20% a month; Azure eviction rate: 0 0-5 … 4 20+ an hour), per provider, SKU, region and GPU.",
		[]string{"provider", "sku", "region", "gpu"}, nil)
	bandRateDesc = prometheus.NewDesc("gpuprice_interruption_rate_per_hour",
		"The interruptions per hour the band in force is read as (docs/risk.md), per provider, SKU, region and GPU.",
		[]string{"provider", "sku", "region", "gpu"}, nil)
	stockDesc = prometheus.NewDesc("gpuprice_gpus_in_stock",
		"The GPUs a provider's offers of a GPU can supply now, from each offer's newest stock signal (at most 3 h old; "+
			"instances times their GPUs; stock counted in regions left out; gpuprice availability), per provider and GPU.",
		[]string{"provider", "gpu"}, nil)
	depthDesc = prometheus.NewDesc("gpuprice_market_depth",
		"The offers of a GPU a marketplace lists as rentable now, from its newest depth signal (at most 3 h old), "+
			"per provider and GPU.", []string{"provider", "gpu"}, nil)
	metricsFreq = time.Minute
)

// labelKey and labelWhere are the label sets of gpuprice_offers and
// gpuprice_cheapest_usd_per_gpu_hour.
type labelKey struct{ gpu, pricing, tier string }

type labelWhere struct {
	labelKey
	provider, region string
}

// byLabels is the cheapest price per label set and the offers per GPU, pricing kind
// and tier of rows (cheapest first). Labels are a bounded set: a host's free text is
// folded into textsafe.Other (textsafe.PromLabel), and so are a provider's regions
// past maxRegionLabels.
func byLabels(rows []schemas.Observation) (map[labelWhere]float64, map[labelKey]int) {
	cheapest := map[labelWhere]float64{}
	count := map[labelKey]int{}
	for _, o := range rows { // cheapest first
		k := labelKey{o.GPU, o.Pricing, o.Tier}
		count[k]++
		if o.GPU == schemas.UnknownGPU {
			continue
		}
		w := labelWhere{k, textsafe.PromLabel(o.Provider), textsafe.PromLabel(o.Region)}
		if _, seen := cheapest[w]; !seen {
			cheapest[w] = o.PriceUSDGPUHour
		}
	}
	regions := map[string][]string{} // provider → its region labels
	for w := range cheapest {
		regions[w.provider] = append(regions[w.provider], w.region)
	}
	for p, rs := range regions {
		keep := keptRegions(rs)
		for w, v := range cheapest {
			if w.provider != p || keep[w.region] {
				continue
			}
			delete(cheapest, w)
			o := w
			o.region = textsafe.Other
			if c, ok := cheapest[o]; !ok || v < c {
				cheapest[o] = v
			}
		}
	}
	return cheapest, count
}

// maxRegionLabels bounds the region labels of one provider on /metrics: past it,
// the regions last in sorted order are folded into textsafe.Other.
const maxRegionLabels = 100

// keptRegions are the region labels kept of a provider's: the first
// maxRegionLabels distinct ones in sorted order (and Other).
func keptRegions(rs []string) map[string]bool {
	sort.Strings(rs)
	rs = slices.Compact(rs)
	keep := map[string]bool{}
	for i, r := range rs {
		if i < maxRegionLabels || r == textsafe.Other {
			keep[r] = true
		}
	}
	return keep
}

// Describe sends the descriptions of every gauge the collector exports.
func (m *Market) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{cheapestDesc, offersDesc, spoolDesc, indexDesc, spreadDesc, medianDesc,
		bandDesc, bandRateDesc, stockDesc, depthDesc} {
		ch <- d
	}
}

// Collect reads the market and sends its gauges.
func (m *Market) Collect(ch chan<- prometheus.Metric) {
	if m.Spool != nil {
		if n, err := m.Spool(); err == nil {
			ch <- prometheus.MustNewConstMetric(spoolDesc, prometheus.GaugeValue, float64(n))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rows, err := m.Current(ctx, store.Filter{})
	if err != nil {
		m.Log.Warn("metrics: latest prices not readable", "error", err.Error())
		return
	}
	cheapest, count := byLabels(rows)
	for w, v := range cheapest {
		ch <- prometheus.MustNewConstMetric(cheapestDesc, prometheus.GaugeValue, v, w.gpu, w.pricing, w.tier, w.provider,
			w.region)
	}
	for k, n := range count {
		ch <- prometheus.MustNewConstMetric(offersDesc, prometheus.GaugeValue, float64(n), k.gpu, k.pricing, k.tier)
	}
	index, spreads, bands, stock, depth := m.daily(ctx)
	for k, v := range stock {
		ch <- prometheus.MustNewConstMetric(stockDesc, prometheus.GaugeValue, v, k.provider, k.gpu)
	}
	for k, v := range depth {
		ch <- prometheus.MustNewConstMetric(depthDesc, prometheus.GaugeValue, v, k.provider, k.gpu)
	}
	for _, b := range bands {
		l := []string{textsafe.PromLabel(b.Provider), textsafe.PromLabel(b.SKU), textsafe.PromLabel(b.Region),
			textsafe.PromLabel(b.GPU)}
		ch <- prometheus.MustNewConstMetric(bandDesc, prometheus.GaugeValue, b.To, l...)
		if b.RatePerHour > 0 {
			ch <- prometheus.MustNewConstMetric(bandRateDesc, prometheus.GaugeValue, b.RatePerHour, l...)
		}
	}
	last := map[[3]string]analytics.IndexPoint{}
	for _, p := range index { // sorted by day within a key: the last wins
		if p.GPU == schemas.UnknownGPU { // no reference price of GPUs nobody could place
			continue
		}
		last[[3]string{p.GPU, p.Pricing, p.Group}] = p
	}
	for k, p := range last {
		ch <- prometheus.MustNewConstMetric(indexDesc, prometheus.GaugeValue, p.Price, k[0], k[1], k[2])
	}
	lastSpread := map[[2]string]analytics.SpreadDay{}
	for _, d := range spreads {
		if d.GPU == schemas.UnknownGPU {
			continue
		}
		lastSpread[[2]string{d.GPU, d.Pricing}] = d
	}
	for k, d := range lastSpread {
		if d.Ratio != nil {
			ch <- prometheus.MustNewConstMetric(spreadDesc, prometheus.GaugeValue, *d.Ratio, k[0], k[1])
		}
		for tier, v := range map[string]*float64{schemas.TierHyperscaler: d.Hyperscaler, schemas.TierSpecialist: d.Specialist,
			schemas.TierMarketplace: d.Marketplace} {
			if v != nil {
				ch <- prometheus.MustNewConstMetric(medianDesc, prometheus.GaugeValue, *v, k[0], k[1], tier)
			}
		}
	}
}

// daily returns today's index and spreads (the last two days'), the bands in force
// and the stock now, recomputed at most every metricsFreq.
func (m *Market) daily(ctx context.Context) ([]analytics.IndexPoint, []analytics.SpreadDay, []query.RiskChange,
	map[stockKey]float64, map[stockKey]float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if time.Since(m.when) < metricsFreq {
		return m.index, m.spreads, m.bands, m.stock, m.depth
	}
	now := time.Now().UTC()
	idx, err := m.Reader.Index(ctx, query.IndexQuery{Since: 2 * store.Daily, At: now})
	if err != nil {
		m.Log.Warn("metrics: index not computed", "error", err.Error())
		return m.index, m.spreads, m.bands, m.stock, m.depth
	}
	sp, err := m.Reader.Spreads(ctx, query.SpreadsQuery{Since: 2 * store.Daily, At: now})
	if err != nil {
		m.Log.Warn("metrics: spreads not computed", "error", err.Error())
		return m.index, m.spreads, m.bands, m.stock, m.depth
	}
	// A window that begins now lists each series' band in force, once.
	rk, err := m.Reader.Risk(ctx, query.RiskQuery{Since: now.Add(time.Second)})
	if err != nil && !errors.Is(err, store.ErrNoSignals) {
		m.Log.Warn("metrics: interruption bands not read", "error", err.Error())
	}
	m.stock, m.depth = m.stockNow(ctx, now)
	m.when, m.index, m.spreads, m.bands = time.Now(), idx.Data, sp.Data.Days, rk.Data.Changes
	return m.index, m.spreads, m.bands, m.stock, m.depth
}

// stockNow sums, per provider and GPU, the GPUs in stock and the marketplace depth
// of each series' newest signal that still holds at now (analytics.StockHold).
// Labels are bounded: free text is folded (textsafe.PromLabel) and a GPU is a
// canonical name.
func (m *Market) stockNow(ctx context.Context, now time.Time) (map[stockKey]float64, map[stockKey]float64) {
	stock, depth := map[stockKey]float64{}, map[stockKey]float64{}
	for _, kind := range []string{schemas.SignalStock, schemas.SignalDepth} {
		sigs, err := m.Reader.Signals(ctx, store.SignalQuery{Kind: kind, Since: now.Add(-analytics.StockHold)})
		if err != nil {
			if !errors.Is(err, store.ErrNoSignals) {
				m.Log.Warn("metrics: stock not read", "error", err.Error())
			}
			continue
		}
		for i, s := range sigs { // ordered by series then time: the last of a series is its newest
			if i+1 < len(sigs) && sigs[i+1].SameSeries(s) || s.GPU == "" {
				continue
			}
			k := stockKey{textsafe.PromLabel(s.Provider), textsafe.PromLabel(s.GPU)}
			if kind == schemas.SignalDepth {
				depth[k] += s.Value
			} else if n, stated := analytics.GPUsAvailable(s, 0); stated {
				stock[k] += n
			}
		}
	}
	return stock, depth
}

// Invalidate makes the next scrape recompute the index, spreads, bands and stock
// (after a run stored new prices).
func (m *Market) Invalidate() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.when = time.Time{}
}
