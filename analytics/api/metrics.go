package api

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/gpuprice/gpuprice/analytics/metrics"
	"github.com/gpuprice/gpuprice/schemas"
)

// serverMetrics are the service's Prometheus collectors, in a registry of their own.
type serverMetrics struct {
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
	market      *metrics.Market
}

func newMetrics(s *Server) *serverMetrics {
	m := &serverMetrics{s: s, reg: prometheus.NewRegistry()}
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
	m.market = &metrics.Market{Reader: s.reader, Current: s.current, Spool: s.spool, Log: s.log}
	m.reg.MustRegister(m.runs, m.collections, m.lastRun, m.lastRows, m.lastQuar, m.lastNotOff, m.up, m.duration,
		m.alertFiring, m.alertFailed, m.market)
	return m
}

// observeCollection counts a run of n sources of which failed failed.
func (m *serverMetrics) observeCollection(n, failed int) {
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
func (m *serverMetrics) observeRun(r schemas.Run, counted bool) {
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
