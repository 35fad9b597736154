package server

import (
	"context"
	"errors"
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

// metrics are the service's Prometheus collectors, in a registry of their own.
type metrics struct {
	s           *Server
	reg         *prometheus.Registry
	runs        *prometheus.CounterVec
	collections *prometheus.CounterVec
	lastRun     *prometheus.GaugeVec
	lastRows    *prometheus.GaugeVec
	lastQuar    *prometheus.GaugeVec
	lastNotOff  *prometheus.GaugeVec
	up          *prometheus.GaugeVec
	duration    *prometheus.HistogramVec
	alertFiring *prometheus.GaugeVec
	alertFailed *prometheus.CounterVec
	market      *marketCollector
}

func newMetrics(s *Server) *metrics {
	m := &metrics{s: s, reg: prometheus.NewRegistry()}
	m.runs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gpuprice_runs_total",
		Help: "Source runs by final status."}, []string{"source", "status"})
	m.collections = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gpuprice_collections_total",
		Help: "Runs of sources (scheduled or asked for) by outcome: ok (no source failed), some_failed, all_failed."},
		[]string{"outcome"})
	m.lastRun = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gpuprice_source_last_run_timestamp_seconds",
		Help: "When the source's last run finished."}, []string{"source"})
	m.lastRows = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gpuprice_source_last_rows_accepted",
		Help: "Rows the last run stored."}, []string{"source"})
	m.lastQuar = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gpuprice_source_last_rows_quarantined",
		Help: "Rows the last run quarantined."}, []string{"source"})
	m.lastNotOff = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gpuprice_source_last_rows_not_offered",
		Help: "Rows the last run's source said are not offered (counted, neither stored nor quarantined)."},
		[]string{"source"})
	m.up = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gpuprice_source_up",
		Help: "1 when the source's last run was ok or degraded, 0 when it failed."}, []string{"source"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gpuprice_source_run_duration_seconds",
		Help:    "Duration of source runs.",
		Buckets: prometheus.ExponentialBuckets(0.5, 2, 12)}, []string{"source"})
	m.alertFiring = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gpuprice_alerts_firing",
		Help: "Alert instances firing per rule at the last evaluation."}, []string{"rule"})
	m.alertFailed = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gpuprice_alert_failures_total",
		Help: "Failed alert notifications (per notifier) and rule evaluations (notifier \"\")."}, []string{"notifier"})
	m.market = &marketCollector{s: s}
	m.reg.MustRegister(m.runs, m.collections, m.lastRun, m.lastRows, m.lastQuar, m.lastNotOff, m.up, m.duration,
		m.alertFiring, m.alertFailed, m.market)
	return m
}

// observeCollection counts a run of n sources of which failed failed.
func (m *metrics) observeCollection(n, failed int) {
	if n == 0 {
		return
	}
	outcome := "ok"
	switch {
	case failed == n:
		outcome = "all_failed"
	case failed > 0:
		outcome = "some_failed"
	}
	m.collections.WithLabelValues(outcome).Inc()
}

// observeRun sets the source gauges from a run record; a run of this process
// (counted) also adds to the run counter and the duration histogram.
func (m *metrics) observeRun(r schemas.Run, counted bool) {
	m.lastRun.WithLabelValues(r.Source).Set(float64(r.FinishedAt.Unix()))
	m.lastRows.WithLabelValues(r.Source).Set(float64(r.RowsAccepted))
	m.lastQuar.WithLabelValues(r.Source).Set(float64(r.RowsQuarantine))
	m.lastNotOff.WithLabelValues(r.Source).Set(float64(r.RowsNotOffered))
	up := 1.0
	if r.Status == schemas.RunFailed {
		up = 0
	}
	m.up.WithLabelValues(r.Source).Set(up)
	if counted {
		m.runs.WithLabelValues(r.Source, r.Status).Inc()
		if d := r.FinishedAt.Sub(r.StartedAt); d >= 0 {
			m.duration.WithLabelValues(r.Source).Observe(d.Seconds())
		}
	}
}

// restore sets the source gauges from the last stored run of every scheduled
// source, so that they survive a restart.
func (m *metrics) restore(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	for _, j := range m.s.cfg.Jobs {
		runs, err := m.s.st.Runs(ctx, j.Source, 1)
		if err != nil {
			m.s.log.Warn("metrics: last run not readable", "source", j.Source, "error", err.Error())
			return
		}
		if len(runs) > 0 {
			m.observeRun(store.Judged(runs, time.Now())[0], false)
		}
	}
}

// marketCollector exports, at scrape time, the spool size, the cheapest current
// $/GPU-hour per GPU, pricing kind, tier, provider and region (GPUs the catalog
// could not place left out), the offers per GPU, pricing kind and tier, and the
// latest day's reference index and tier spread. Index and spreads read bars: they
// are computed at most once a minute.
type marketCollector struct {
	s *Server

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
		"The latest day's hyperscaler / specialist median ratio (gpuprice spreads) per GPU and pricing kind; absent when a tier has no price.", []string{"gpu", "pricing"}, nil)
	medianDesc = prometheus.NewDesc("gpuprice_tier_median_usd_per_gpu_hour",
		"The latest day's median price per GPU-hour of a tier (gpuprice spreads).", []string{"gpu", "pricing", "tier"}, nil)
	bandDesc = prometheus.NewDesc("gpuprice_interruption_band",
		"The interruption band in force of a spot offer (gpuprice risk; AWS Spot Advisor: 0 <5%, 1 5-10%, 2 10-15%, "+
			"3 15-20%, 4 >20% a month; Azure eviction rate: 0 0-5 … 4 20+ an hour), per provider, SKU, region and GPU.", []string{"provider", "sku", "region", "gpu"}, nil)
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

func (m *marketCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{cheapestDesc, offersDesc, spoolDesc, indexDesc, spreadDesc, medianDesc,
		bandDesc, bandRateDesc, stockDesc, depthDesc} {
		ch <- d
	}
}

func (m *marketCollector) Collect(ch chan<- prometheus.Metric) {
	if m.s.spool != nil {
		if n, err := m.s.spool(); err == nil {
			ch <- prometheus.MustNewConstMetric(spoolDesc, prometheus.GaugeValue, float64(n))
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rows, err := m.s.current(ctx, store.Filter{})
	if err != nil {
		m.s.log.Warn("metrics: latest prices not readable", "error", err.Error())
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
func (m *marketCollector) daily(ctx context.Context) ([]analytics.IndexPoint, []analytics.SpreadDay, []query.RiskChange,
	map[stockKey]float64, map[stockKey]float64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if time.Since(m.when) < metricsFreq {
		return m.index, m.spreads, m.bands, m.stock, m.depth
	}
	now := time.Now().UTC()
	idx, err := m.s.reader.Index(ctx, query.IndexQuery{Since: 2 * store.Daily, At: now})
	if err != nil {
		m.s.log.Warn("metrics: index not computed", "error", err.Error())
		return m.index, m.spreads, m.bands, m.stock, m.depth
	}
	sp, err := m.s.reader.Spreads(ctx, query.SpreadsQuery{Since: 2 * store.Daily, At: now})
	if err != nil {
		m.s.log.Warn("metrics: spreads not computed", "error", err.Error())
		return m.index, m.spreads, m.bands, m.stock, m.depth
	}
	// A window that begins now lists each series' band in force, once.
	rk, err := m.s.reader.Risk(ctx, query.RiskQuery{Since: now.Add(time.Second)})
	if err != nil && !errors.Is(err, store.ErrNoSignals) {
		m.s.log.Warn("metrics: interruption bands not read", "error", err.Error())
	}
	m.stock, m.depth = m.stockNow(ctx, now)
	m.when, m.index, m.spreads, m.bands = time.Now(), idx.Data, sp.Data.Days, rk.Data.Changes
	return m.index, m.spreads, m.bands, m.stock, m.depth
}

// stockNow sums, per provider and GPU, the GPUs in stock and the marketplace depth
// of each series' newest signal that still holds at now (analytics.StockHold).
// Labels are bounded: free text is folded (textsafe.PromLabel) and a GPU is a
// canonical name.
func (m *marketCollector) stockNow(ctx context.Context, now time.Time) (map[stockKey]float64, map[stockKey]float64) {
	stock, depth := map[stockKey]float64{}, map[stockKey]float64{}
	for _, kind := range []string{schemas.SignalStock, schemas.SignalDepth} {
		sigs, err := m.s.reader.Signals(ctx, store.SignalQuery{Kind: kind, Since: now.Add(-analytics.StockHold)})
		if err != nil {
			if !errors.Is(err, store.ErrNoSignals) {
				m.s.log.Warn("metrics: stock not read", "error", err.Error())
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

// invalidate makes the next scrape recompute the index and spreads.
func (m *marketCollector) invalidate() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.when = time.Time{}
}
