package schedule

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// runs is a RunReader answering a fixed last run per source.
type runs map[string]schemas.Run

func (m runs) Runs(_ context.Context, source string, _ int) ([]schemas.Run, error) {
	if r, ok := m[source]; ok {
		return []schemas.Run{r}, nil
	}
	return nil, nil
}

// okRuns is a RunFunc whose every source runs ok at once.
func okRuns(_ context.Context, sources []string) []schemas.Run {
	var out []schemas.Run
	for _, n := range sources {
		out = append(out, schemas.Run{Source: n, Status: schemas.RunOK})
	}
	return out
}

func TestNewChecksSchedules(t *testing.T) {
	noop := func(context.Context) {}
	for _, c := range []struct {
		cfg  Config
		d    Deps
		want string
	}{
		{Config{Jobs: []Job{{Source: "vast", Schedule: "every minute"}}}, Deps{}, `sources.vast.schedule "every minute": `},
		{Config{AlertsSchedule: "61 * * * *"}, Deps{EvaluateAlerts: noop}, `alerts.schedule "61 * * * *": `},
		{Config{DigestSchedule: "@fortnightly"}, Deps{SendDigest: noop}, `digest.schedule "@fortnightly": `},
	} {
		c.d.RunSources = okRuns
		_, err := New(c.cfg, c.d)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("New(%+v) = %v, want an error starting %q", c.cfg, err, c.want)
		}
	}
	// Without their func the alerts' and digest's schedules are not read; a job
	// without one runs hourly.
	cfg := Config{Jobs: []Job{{Source: "vast"}}, AlertsSchedule: "bad", DigestSchedule: "bad"}
	if _, err := New(cfg, Deps{RunSources: okRuns}); err != nil {
		t.Errorf("New: %v", err)
	}
	if _, err := New(Config{}, Deps{}); err == nil {
		t.Error("New without RunSources: no error")
	}
	if err := Check("@every 10m"); err != nil {
		t.Errorf("Check(@every 10m) = %v", err)
	}
	if err := Check("0 25 * * *"); err == nil {
		t.Error("Check(0 25 * * *): no error")
	}
}

// gate is a RunFunc whose runs of source block until released; the others run at
// once.
type gate struct {
	source  string
	in      chan struct{} // a run of source started
	release chan struct{}
}

func newGate(source string) *gate {
	return &gate{source: source, in: make(chan struct{}, 1), release: make(chan struct{})}
}

func (g *gate) run(ctx context.Context, sources []string) []schemas.Run {
	if slices.Contains(sources, g.source) {
		g.in <- struct{}{}
		select {
		case <-g.release:
		case <-ctx.Done():
			var out []schemas.Run
			for _, n := range sources {
				out = append(out, schemas.Run{Source: n, Status: schemas.RunInterrupted, RowsAccepted: 3,
					RowsStored: 2, RowsSpooled: 1})
			}
			return out
		}
	}
	return okRuns(ctx, sources)
}

func TestOneRunOfASourceAtATime(t *testing.T) {
	g := newGate("vast")
	var mu sync.Mutex
	var ran [][]schemas.Run
	s, err := New(Config{}, Deps{RunSources: g.run, Ran: func(_ context.Context, rs []schemas.Run) {
		mu.Lock()
		ran = append(ran, rs)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan []schemas.Run)
	go func() { done <- s.Run(context.Background(), "vast") }()
	<-g.in
	got, busy := s.RunNow([]string{"vast", "runpod", "runpod"})
	if len(got) != 1 || got[0].Source != "runpod" || !slices.Equal(busy, []string{"vast", "runpod"}) {
		t.Errorf("RunNow while vast runs = %v, busy %v; want runpod run once, vast and the second runpod busy",
			got, busy)
	}
	if got, busy := s.RunNow([]string{"vast"}); got != nil || !slices.Equal(busy, []string{"vast"}) {
		t.Errorf("RunNow(vast) while it runs = %v, busy %v", got, busy)
	}
	if got := s.Run(context.Background(), "vast"); got != nil {
		t.Errorf("Run(vast) while it runs = %v", got)
	}
	close(g.release)
	if got := <-done; len(got) != 1 || got[0].Status != schemas.RunOK {
		t.Errorf("the first run of vast = %v", got)
	}
	if got := s.Run(context.Background(), "vast"); len(got) != 1 {
		t.Errorf("Run(vast) once its run is over = %v", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(ran) != 3 {
		t.Errorf("Ran told of %d runs, want 3 (runpod, vast, vast again): %v", len(ran), ran)
	}
}

func TestStopCutsTheRunsUnderWay(t *testing.T) {
	g := newGate("vast")
	s, err := New(Config{Jobs: []Job{{Source: "vast", Schedule: "@yearly"}}}, Deps{RunSources: g.run})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	runCtx, err := s.Start(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan []schemas.Run)
	go func() { r, _ := s.RunNow([]string{"vast"}); done <- r }()
	<-g.in
	cancel()
	s.Stop()
	if runCtx.Err() == nil {
		t.Error("the runs' context outlived Stop")
	}
	if !s.Stopping() {
		t.Error("Stopping() = false after Stop")
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	cut := s.Wait(wctx)
	if len(cut) != 1 || cut[0].Source != "vast" || cut[0].Status != schemas.RunInterrupted {
		t.Fatalf("Wait = %v, want vast's interrupted run", cut)
	}
	if r := <-done; len(r) != 1 {
		t.Errorf("the cut run returned %v", r)
	}
	if r := s.Run(context.Background(), "runpod"); r != nil {
		t.Errorf("Run after Stop = %v", r)
	}
	if r, busy := s.RunNow([]string{"runpod"}); r != nil || busy != nil {
		t.Errorf("RunNow after Stop = %v, busy %v", r, busy)
	}
	want := "serve: stopped; collections cut short: vast (3 accepted: 2 stored, 1 spooled, 0 lost)"
	if got := (&Stopped{Interrupted: cut}).Error(); got != want {
		t.Errorf("Stopped = %q, want %q", got, want)
	}
	if got := (&Stopped{}).Error(); got != "serve: stopped; no collection was running" {
		t.Errorf("Stopped with none = %q", got)
	}
	if (&Stopped{Interrupted: cut}).Lost() {
		t.Error("Lost() with no row lost")
	}
	cut = append(cut, schemas.Run{Source: "runpod", RowsLost: 1})
	if !(&Stopped{Interrupted: cut}).Lost() {
		t.Error("Lost() = false with a row lost")
	}
}

// TestStart: the gauges start from the last stored runs, the killed runs are
// recovered, and with runNow every job runs once and the alerts are evaluated
// after them.
func TestStart(t *testing.T) {
	var mu sync.Mutex
	var ran, last, recovered []string
	changed := 0
	alertsAfter := make(chan []string, 1)
	stored := runs{"vast": {Source: "vast", RunID: "v1", Status: schemas.RunOK},
		"runpod": {Source: "runpod", RunID: "r2", Status: schemas.RunOK}}
	d := Deps{
		RunSources: okRuns,
		Runs:       stored,
		Recover: func(context.Context) ([]schemas.Run, error) {
			return []schemas.Run{{Source: "vast", RunID: "v1", Status: schemas.RunInterrupted},
				{Source: "runpod", RunID: "r1", Status: schemas.RunInterrupted}}, nil
		},
		Ran: func(_ context.Context, rs []schemas.Run) {
			mu.Lock()
			defer mu.Unlock()
			for _, r := range rs {
				ran = append(ran, r.Source)
			}
		},
		Last: func(r schemas.Run) {
			mu.Lock()
			defer mu.Unlock()
			last = append(last, r.RunID+" "+r.Status)
		},
		Recovered: func(r schemas.Run) {
			mu.Lock()
			defer mu.Unlock()
			recovered = append(recovered, r.RunID)
		},
		Changed: func() { mu.Lock(); changed++; mu.Unlock() },
		EvaluateAlerts: func(context.Context) {
			mu.Lock()
			defer mu.Unlock()
			alertsAfter <- slices.Sorted(slices.Values(ran))
		},
	}
	var logs bytes.Buffer
	d.Log = slog.New(slog.NewTextHandler(&logs, nil))
	s, err := New(Config{Jobs: []Job{{Source: "vast", Schedule: "@yearly"}, {Source: "runpod", Schedule: "@yearly"}},
		AlertsSchedule: "@yearly"}, d)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := s.Start(ctx, true); err != nil {
		t.Fatal(err)
	}
	if got := receive(t, alertsAfter, "the alerts' evaluation after the runs of runNow"); !slices.Equal(got,
		[]string{"runpod", "vast"}) {
		t.Errorf("alerts evaluated after the runs of %v, want both", got)
	}
	s.Stop()
	s.Wait(ctx)
	mu.Lock()
	defer mu.Unlock()
	// Restore told of both stored runs; the recovery of v1 (vast's last run) too,
	// not r1 (runpod's last run is r2).
	slices.Sort(last)
	if want := []string{"r2 ok", "v1 interrupted", "v1 ok"}; !slices.Equal(last, want) {
		t.Errorf("Last told of %v, want %v", last, want)
	}
	if !slices.Equal(recovered, []string{"v1", "r1"}) || changed != 1 {
		t.Errorf("Recovered told of %v and Changed %d times, want v1, r1 and once", recovered, changed)
	}
	for _, line := range []string{`msg="source scheduled" source=vast schedule=@yearly`,
		`msg="alerts scheduled" schedule=@yearly`} {
		if !strings.Contains(logs.String(), line) {
			t.Errorf("log lacks %s:\n%s", line, logs.String())
		}
	}
}

func TestFailedRunsAreLogged(t *testing.T) {
	var logs bytes.Buffer
	failAll := func(_ context.Context, sources []string) []schemas.Run {
		var out []schemas.Run
		for _, n := range sources {
			st := schemas.RunFailed
			if n == "ok" {
				st = schemas.RunOK
			}
			out = append(out, schemas.Run{Source: n, Status: st})
		}
		return out
	}
	s, err := New(Config{}, Deps{RunSources: failAll, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s.Run(context.Background(), "a", "b")
	if want := `level=ERROR msg="every source of the run failed" sources=2`; !strings.Contains(logs.String(), want) {
		t.Errorf("log lacks %s:\n%s", want, logs.String())
	}
	s.Run(context.Background(), "a", "ok")
	if want := `level=WARN msg="sources of the run failed" failed=1 sources=2`; !strings.Contains(logs.String(), want) {
		t.Errorf("log lacks %s:\n%s", want, logs.String())
	}
	if n := Failed([]schemas.Run{{Status: schemas.RunFailed}, {Status: schemas.RunOK}}); n != 1 {
		t.Errorf("Failed = %d", n)
	}
}

// TestScheduledTurn: a job runs on its schedule.
func TestScheduledTurn(t *testing.T) {
	turn := make(chan string, 4)
	run := func(_ context.Context, sources []string) []schemas.Run {
		turn <- sources[0]
		return nil
	}
	s, err := New(Config{Jobs: []Job{{Source: "vast", Schedule: "@every 1s"}}}, Deps{RunSources: run})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Start(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	defer func() { s.Stop(); s.Wait(context.Background()) }()
	if got := receive(t, turn, "a scheduled turn of an @every 1s schedule"); got != "vast" {
		t.Errorf("the scheduled turn ran %s", got)
	}
}

// receive returns what ch sends, failing t when nothing comes within 10 s.
func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
	}
	t.Fatalf("no %s within 10 s", what)
	var none T
	return none
}
