package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/robfig/cron/v3"
	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/store"
)

func init() { addCommand((*app).serveCmd) }

// fxRefreshEvery bounds how often the long-running service asks the ECB for rates
// (the ECB publishes once a working day).
const fxRefreshEvery = time.Hour

func (a *app) serveCmd() *cobra.Command {
	var listen string
	var runNow bool
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run every enabled source on its schedule and serve prices, /metrics and a web page",
		Long: `serve is the long-running service: each enabled source runs on its own cron
schedule (sources.<name>.schedule, else the source's default; see ` + "`gpuprice sources`" + `),
a run still going when its next turn comes is skipped, spooled batches are replayed
before every run, and ECB rates are refreshed at most hourly. With alert rules
configured, they are evaluated on alerts.schedule (default every 15 minutes) and
after the first collections of --run-now, as ` + "`gpuprice alerts`" + ` does.

HTTP endpoints:
  /              the cheapest current offer per GPU and pricing kind, and the last runs
  /api/prices    latest prices of series on offer, JSON or CSV (?gpu= &provider= &pricing= &region= &tier= &format=csv &limit= &all_series=true)
  /api/runs      run records as JSON (?source= &limit=)
  /metrics       Prometheus metrics: runs, rows, durations, spool, cheapest $/GPU-hour
  /healthz       200 when the store answers`,
		Example: `  gpuprice serve --listen :8080 --run-now`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.serve(cmd.Context(), listen, runNow)
		},
	}
	cmd.Flags().StringVar(&listen, "listen", "127.0.0.1:8080", "address to serve HTTP on")
	cmd.Flags().BoolVar(&runNow, "run-now", false, "run every enabled source once at start, then on schedule")
	return cmd
}

type service struct {
	a     *app
	st    store.Store
	spool *ingest.DirSpool

	alertMu     sync.Mutex // one evaluation at a time: they share the state file
	alertFiring *prometheus.GaugeVec
	alertFailed *prometheus.CounterVec

	fxMu   sync.Mutex
	fx     ingest.FX
	fxWhen time.Time

	runs     *prometheus.CounterVec
	lastRun  *prometheus.GaugeVec
	lastRows *prometheus.GaugeVec
	lastQuar *prometheus.GaugeVec
	up       *prometheus.GaugeVec
	duration *prometheus.HistogramVec
	reg      *prometheus.Registry
}

func (a *app) serve(ctx context.Context, listen string, runNow bool) error {
	st, err := a.openStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	spool, err := a.spool()
	if err != nil {
		return err
	}
	jobs, err := a.jobs(nil)
	if err != nil {
		return err
	}
	s := newService(a, st, spool)
	parser := cron.NewParser(cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
	sched := cron.New(cron.WithParser(parser), cron.WithChain(cron.Recover(cronLogger{a}), cron.SkipIfStillRunning(cronLogger{a})))
	for _, j := range jobs {
		info, _, _ := scrapers.Lookup(j.Name)
		spec := info.Schedule
		if c := a.cfg.Sources[j.Name].Schedule; c != "" {
			spec = c
		}
		if spec == "" {
			spec = "@hourly"
		}
		if _, err := sched.AddFunc(spec, func() { s.collect(ctx, j) }); err != nil {
			return fmt.Errorf("sources.%s.schedule %q: %w", j.Name, spec, err)
		}
		a.log.Info("source scheduled", "source", j.Name, "schedule", spec)
	}
	if len(a.cfg.Alerts.Rules) > 0 {
		if _, err := a.alertEngine(); err != nil { // notifiers' URLs set: fail at start, not at the first turn
			return err
		}
		spec := a.cfg.Alerts.ScheduleSpec()
		if _, err := sched.AddFunc(spec, func() { s.evaluateAlerts(ctx) }); err != nil {
			return fmt.Errorf("alerts.schedule %q: %w", spec, err)
		}
		a.log.Info("alerts scheduled", "rules", len(a.cfg.Alerts.Rules), "schedule", spec)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	srv := &http.Server{Handler: s.routes(), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(a.stdout, "gpuprice serving on http://%s\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	sched.Start()
	var first, collected sync.WaitGroup
	if runNow {
		for _, j := range jobs {
			collected.Add(1)
			go func() { defer collected.Done(); s.collect(ctx, j) }()
		}
		first.Add(1)
		go func() { // alerts once the first collections are in
			defer first.Done()
			collected.Wait()
			if len(a.cfg.Alerts.Rules) > 0 {
				s.evaluateAlerts(ctx)
			}
		}()
	}
	select {
	case <-ctx.Done():
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return fmt.Errorf("serve: %w", err)
		}
	}
	a.log.Info("shutting down: waiting for running collections")
	stopped := sched.Stop()
	first.Wait()
	<-stopped.Done()
	shut, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shut)
}

type cronLogger struct{ a *app }

func (l cronLogger) Info(msg string, kv ...any) { l.a.log.Debug("cron: "+msg, kv...) }
func (l cronLogger) Error(err error, msg string, kv ...any) {
	l.a.log.Error("cron: "+msg, append(kv, "error", err.Error())...)
}

func newService(a *app, st store.Store, spool *ingest.DirSpool) *service {
	s := &service{a: a, st: st, spool: spool, reg: prometheus.NewRegistry()}
	s.runs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gpuprice_runs_total", Help: "Source runs by final status."}, []string{"source", "status"})
	s.lastRun = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gpuprice_source_last_run_timestamp_seconds", Help: "When the source's last run finished."}, []string{"source"})
	s.lastRows = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gpuprice_source_last_rows_accepted", Help: "Rows the last run stored."}, []string{"source"})
	s.lastQuar = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gpuprice_source_last_rows_quarantined", Help: "Rows the last run quarantined."}, []string{"source"})
	s.up = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gpuprice_source_up", Help: "1 when the source's last run was ok or degraded, 0 when it failed."}, []string{"source"})
	s.duration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gpuprice_source_run_duration_seconds", Help: "Duration of source runs.",
		Buckets: prometheus.ExponentialBuckets(0.5, 2, 12)}, []string{"source"})
	s.alertFiring = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gpuprice_alerts_firing", Help: "Alert instances firing per rule at the last evaluation."}, []string{"rule"})
	s.alertFailed = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gpuprice_alert_failures_total", Help: "Failed alert notifications (per notifier) and rule evaluations (notifier \"\")."}, []string{"notifier"})
	s.reg.MustRegister(s.runs, s.lastRun, s.lastRows, s.lastQuar, s.up, s.duration, s.alertFiring, s.alertFailed, &marketCollector{s})
	return s
}

// currentFX returns the FX converter, refreshing it at most every fxRefreshEvery.
func (s *service) currentFX(ctx context.Context) ingest.FX {
	s.fxMu.Lock()
	defer s.fxMu.Unlock()
	if s.fx == nil || time.Since(s.fxWhen) > fxRefreshEvery {
		s.fx, s.fxWhen = s.a.loadFX(ctx, s.st), time.Now()
	}
	return s.fx
}

func (s *service) collect(ctx context.Context, j ingest.Job) {
	if ctx.Err() != nil {
		return
	}
	s.a.replaySpool(ctx, s.spool, s.st)
	col, err := s.a.collector(s.st, s.currentFX(ctx), s.spool)
	if err != nil {
		s.a.log.Error("collector not built", "source", j.Name, "error", err.Error())
		return
	}
	res := col.Collect(ctx, ingest.NewRunID(time.Now()), []ingest.Job{j})
	s.a.rollupAfter(ctx, s.st, res)
	r := res[0]
	s.runs.WithLabelValues(r.Source, r.Status).Inc()
	s.lastRun.WithLabelValues(r.Source).Set(float64(r.FinishedAt.Unix()))
	s.lastRows.WithLabelValues(r.Source).Set(float64(r.RowsAccepted))
	s.lastQuar.WithLabelValues(r.Source).Set(float64(r.RowsQuarantine))
	up := 1.0
	if r.Status == schemas.RunFailed {
		up = 0
	}
	s.up.WithLabelValues(r.Source).Set(up)
	s.duration.WithLabelValues(r.Source).Observe(r.Duration.Seconds())
}

// evaluateAlerts evaluates the alert rules and notifies (see `gpuprice alerts`).
func (s *service) evaluateAlerts(ctx context.Context) {
	if ctx.Err() != nil {
		return
	}
	s.alertMu.Lock()
	defer s.alertMu.Unlock()
	rep, err := s.a.evaluateAlerts(ctx, s.st, time.Now().UTC(), false)
	if err != nil {
		s.alertFailed.WithLabelValues("").Inc()
		s.a.log.Error("alerts not evaluated", "error", err.Error())
		return
	}
	for _, r := range rep.Rules {
		if r.Error != "" {
			s.alertFailed.WithLabelValues("").Inc()
			s.a.log.Error("alert rule not evaluated", "rule", r.Rule, "error", r.Error)
			continue
		}
		n := 0
		for _, in := range r.Instances {
			if in.Firing {
				n++
			}
		}
		s.alertFiring.WithLabelValues(r.Rule).Set(float64(n))
	}
	for _, d := range rep.Deliveries {
		if d.Error != "" {
			s.alertFailed.WithLabelValues(d.Notifier).Inc()
		} else {
			s.a.log.Info("alerts sent", "notifier", d.Notifier, "firing", d.Firing, "resolved", d.Resolved)
		}
	}
}

// marketCollector exports, at scrape time, the spool size and the cheapest current
// $/GPU-hour per GPU, pricing kind and tier (bounded cardinality: never per offer).
type marketCollector struct{ s *service }

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
	if st, err := m.s.spool.Status(); err == nil {
		ch <- prometheus.MustNewConstMetric(spoolDesc, prometheus.GaugeValue, float64(st.Rows))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	rows, err := m.s.st.Latest(ctx, store.Filter{})
	if err != nil {
		m.s.a.log.Warn("metrics: latest prices not readable", "error", err.Error())
		return
	}
	rows = currentOnly(rows, defaultStale)
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

func (s *service) routes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		if _, err := s.st.Runs(r.Context(), "", 1); err != nil {
			http.Error(w, "store: unavailable", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /api/prices", s.apiPrices)
	mux.HandleFunc("GET /api/runs", s.apiRuns)
	mux.HandleFunc("GET /{$}", s.page)
	return mux
}

func (s *service) apiPrices(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	ff := filterFlags{gpu: q.Get("gpu"), provider: q.Get("provider"), pricing: q.Get("pricing"), region: q.Get("region"), tier: q.Get("tier")}
	f, err := ff.filter()
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	limit := 0
	if v := q.Get("limit"); v != "" {
		if limit, err = strconv.Atoi(v); err != nil || limit < 0 {
			http.Error(w, "limit: not a non-negative integer", http.StatusBadRequest)
			return
		}
	}
	format := q.Get("format")
	if format == "" {
		format = "json"
	}
	if format != "json" && format != "csv" {
		http.Error(w, "format: json or csv", http.StatusBadRequest)
		return
	}
	rows, err := s.st.Latest(r.Context(), f)
	if err != nil {
		s.a.log.Warn("api: latest failed", "error", err.Error())
		http.Error(w, "store: query failed", http.StatusServiceUnavailable)
		return
	}
	if q.Get("all_series") != "true" {
		rows = currentOnly(rows, defaultStale)
	}
	if limit > 0 && len(rows) > limit {
		rows = rows[:limit]
	}
	if format == "csv" {
		w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	} else {
		w.Header().Set("Content-Type", "application/json")
	}
	_ = writeObservations(w, format, rows)
}

func (s *service) apiRuns(w http.ResponseWriter, r *http.Request) {
	limit := 50
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			http.Error(w, "limit: not a non-negative integer", http.StatusBadRequest)
			return
		}
		limit = n
	}
	runs, err := s.st.Runs(r.Context(), r.URL.Query().Get("source"), limit)
	if err != nil {
		http.Error(w, "store: query failed", http.StatusServiceUnavailable)
		return
	}
	if runs == nil {
		runs = []schemas.Run{}
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(runs)
}

var pageTmpl = template.Must(template.New("page").Funcs(template.FuncMap{
	"money": func(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) },
	"when":  func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04Z") },
}).Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>gpuprice</title>
<style>body{font-family:system-ui,sans-serif;margin:2em}table{border-collapse:collapse}td,th{padding:.2em .8em;border-bottom:1px solid #ddd;text-align:left}td.n{text-align:right}</style>
</head><body>
<h1>GPU prices</h1>
<p>The cheapest current offer per GPU and pricing kind, in US dollars per GPU-hour. Data: <a href="/api/prices">/api/prices</a> (<a href="/api/prices?format=csv">CSV</a>), <a href="/metrics">/metrics</a>.</p>
<table><tr><th>GPU</th><th>pricing</th><th>$/GPU-h</th><th>provider</th><th>tier</th><th>SKU</th><th>region</th><th>offers</th><th>seen</th></tr>
{{range .Best}}<tr><td>{{.O.GPU}}</td><td>{{.O.Pricing}}</td><td class="n">{{money .O.PriceUSDGPUHour}}</td><td>{{.O.Provider}}</td><td>{{.O.Tier}}</td><td>{{.O.SKU}}</td><td>{{.O.Region}}</td><td class="n">{{.N}}</td><td>{{when .O.ObservedAt}}</td></tr>
{{else}}<tr><td colspan="9">No prices yet: the first scheduled runs will fill this page.</td></tr>{{end}}
</table>
<h2>Last runs</h2>
<table><tr><th>source</th><th>finished</th><th>status</th><th>rows</th><th>quarantined</th><th>error</th></tr>
{{range .Runs}}<tr><td>{{.Source}}</td><td>{{when .FinishedAt}}</td><td>{{.Status}}</td><td class="n">{{.RowsAccepted}}</td><td class="n">{{.RowsQuarantine}}</td><td>{{.Error}}</td></tr>
{{end}}</table>
</body></html>
`))

type best struct {
	O schemas.Observation
	N int
}

func (s *service) page(w http.ResponseWriter, r *http.Request) {
	rows, err := s.st.Latest(r.Context(), store.Filter{})
	if err != nil {
		http.Error(w, "store: query failed", http.StatusServiceUnavailable)
		return
	}
	rows = currentOnly(rows, defaultStale)
	idx := map[[2]string]int{}
	var out []best
	for _, o := range rows {
		if o.GPU == schemas.UnknownGPU {
			continue
		}
		k := [2]string{o.GPU, o.Pricing}
		if i, ok := idx[k]; ok {
			out[i].N++
			continue
		}
		idx[k] = len(out)
		out = append(out, best{O: o, N: 1})
	}
	runs, _ := s.st.Runs(r.Context(), "", 30)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := pageTmpl.Execute(w, map[string]any{"Best": out, "Runs": runs}); err != nil {
		s.a.log.Warn("page not rendered", "error", err.Error())
	}
}
