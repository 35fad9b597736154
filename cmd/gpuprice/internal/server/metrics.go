package server

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// metrics are the service's Prometheus collectors, in a registry of their own.
type metrics struct {
	s           *Server
	reg         *prometheus.Registry
	runs        *prometheus.CounterVec
	lastRun     *prometheus.GaugeVec
	lastRows    *prometheus.GaugeVec
	lastQuar    *prometheus.GaugeVec
	up          *prometheus.GaugeVec
	duration    *prometheus.HistogramVec
	alertFiring *prometheus.GaugeVec
	alertFailed *prometheus.CounterVec
}

func newMetrics(s *Server) *metrics {
	m := &metrics{s: s, reg: prometheus.NewRegistry()}
	m.runs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gpuprice_runs_total", Help: "Source runs by final status."}, []string{"source", "status"})
	m.lastRun = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gpuprice_source_last_run_timestamp_seconds", Help: "When the source's last run finished."}, []string{"source"})
	m.lastRows = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gpuprice_source_last_rows_accepted", Help: "Rows the last run stored."}, []string{"source"})
	m.lastQuar = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gpuprice_source_last_rows_quarantined", Help: "Rows the last run quarantined."}, []string{"source"})
	m.up = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gpuprice_source_up", Help: "1 when the source's last run was ok or degraded, 0 when it failed."}, []string{"source"})
	m.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gpuprice_source_run_duration_seconds", Help: "Duration of source runs.",
		Buckets: prometheus.ExponentialBuckets(0.5, 2, 12)}, []string{"source"})
	m.alertFiring = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gpuprice_alerts_firing", Help: "Alert instances firing per rule at the last evaluation."}, []string{"rule"})
	m.alertFailed = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gpuprice_alert_failures_total", Help: "Failed alert notifications (per notifier) and rule evaluations (notifier \"\")."}, []string{"notifier"})
	m.reg.MustRegister(m.runs, m.lastRun, m.lastRows, m.lastQuar, m.up, m.duration, m.alertFiring, m.alertFailed, &marketCollector{s})
	return m
}

// observeRun sets the source gauges from a run record; a run of this process
// (counted) also adds to the run counter and the duration histogram.
func (m *metrics) observeRun(r schemas.Run, counted bool) {
	m.lastRun.WithLabelValues(r.Source).Set(float64(r.FinishedAt.Unix()))
	m.lastRows.WithLabelValues(r.Source).Set(float64(r.RowsAccepted))
	m.lastQuar.WithLabelValues(r.Source).Set(float64(r.RowsQuarantine))
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
			m.observeRun(runs[0], false)
		}
	}
}

// marketCollector exports, at scrape time, the spool size and the cheapest current
// $/GPU-hour per GPU, pricing kind and tier (bounded cardinality: never per offer).
type marketCollector struct{ s *Server }

var (
	cheapestDesc = prometheus.NewDesc("gpuprice_cheapest_usd_per_gpu_hour", "Cheapest latest price per GPU-hour.", []string{"gpu", "pricing", "tier"}, nil)
	offersDesc   = prometheus.NewDesc("gpuprice_offers", "Series with a latest price.", []string{"gpu", "pricing", "tier"}, nil)
	spoolDesc    = prometheus.NewDesc("gpuprice_spool_rows", "Rows waiting in the on-disk spool.", nil, nil)
)

func (m *marketCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- cheapestDesc
	ch <- offersDesc
	ch <- spoolDesc
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
	type key struct{ gpu, pricing, tier string }
	cheapest := map[key]float64{}
	count := map[key]int{}
	for _, o := range rows { // cheapest first
		k := key{o.GPU, o.Pricing, o.Tier}
		if _, seen := cheapest[k]; !seen {
			cheapest[k] = o.PriceUSDGPUHour
		}
		count[k]++
	}
	for k, v := range cheapest {
		ch <- prometheus.MustNewConstMetric(cheapestDesc, prometheus.GaugeValue, v, k.gpu, k.pricing, k.tier)
		ch <- prometheus.MustNewConstMetric(offersDesc, prometheus.GaugeValue, float64(count[k]), k.gpu, k.pricing, k.tier)
	}
}
