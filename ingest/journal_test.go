package ingest

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// journalSink records, in order, every write a run makes: each batch with the span of
// the run's started record as it stood when the batch was written.
type journalSink struct {
	*memSink
	mu     sync.Mutex
	events []string
	last   schemas.Run // the run record last written
}

func (j *journalSink) WriteObservations(ctx context.Context, obs []schemas.Observation) error {
	j.mu.Lock()
	for _, o := range obs {
		if j.last.Status != schemas.RunStarted || o.EffectiveAt.Before(j.last.SpanSince) ||
			!o.EffectiveAt.Before(j.last.SpanUntil) {
			j.events = append(j.events, fmt.Sprintf("row %s at %s outside the started record's span [%s, %s)",
				o.SKU, o.EffectiveAt, j.last.SpanSince, j.last.SpanUntil))
		}
	}
	j.events = append(j.events, fmt.Sprintf("rows %d", len(obs)))
	j.mu.Unlock()
	return j.memSink.WriteObservations(ctx, obs)
}

func (j *journalSink) WriteRun(ctx context.Context, r schemas.Run) error {
	j.mu.Lock()
	j.last = r
	j.events = append(j.events, "run "+r.Status)
	j.mu.Unlock()
	return j.memSink.WriteRun(ctx, r)
}

// A journaled run is recorded as started before any of its rows is written, with a
// span covering every batch before that batch is written, and ends with its final
// record.
func TestJournalRecordsStartedBeforeRows(t *testing.T) {
	sink := &journalSink{memSink: newMemSink()}
	c := newCollector(sink)
	c.Journal = true
	// 7 rows, effective_at going back an hour each: every batch (3 rows) widens the span.
	src := emitN(7, func(i int, o *schemas.Observation) { o.EffectiveAt = t0.Add(-time.Duration(i) * time.Hour) })
	res := c.Collect(context.Background(), "run-j", []Job{{Name: "good", Source: src}})
	if res[0].Status != schemas.RunOK || res[0].RowsAccepted != 7 {
		t.Fatalf("result %+v", res[0])
	}
	for _, e := range sink.events {
		if strings.HasPrefix(e, "row ") {
			t.Error(e)
		}
	}
	if len(sink.events) < 3 || sink.events[0] != "run started" || sink.events[len(sink.events)-1] != "run ok" {
		t.Fatalf("writes %q: want the started record first and the final one last", sink.events)
	}
	final := sink.last
	if final.Owner != store.Owner() || !final.SpanSince.Equal(t0.Add(-6*time.Hour).Truncate(time.Second)) ||
		!final.SpanUntil.Equal(t0.Truncate(time.Second).Add(time.Second)) {
		t.Fatalf("final record %+v: want this process as owner and the span of the 7 rows", final)
	}
	// Without a journal (a Collector of its own), only the final record is written.
	plain := &journalSink{memSink: newMemSink()}
	newCollector(plain).Collect(context.Background(), "run-p", []Job{{Name: "good", Source: emitN(2, nil)}})
	if plain.events[len(plain.events)-2] != "rows 2" || plain.events[len(plain.events)-1] != "run ok" ||
		len(plain.memSink.runs) != 1 {
		t.Fatalf("writes without a journal: %q", plain.events)
	}
}

// A started record whose process is gone shows as interrupted: another host's after
// GoneAfter of silence, this host's at once when its pid is free (or is this
// process's own pid with another token: a container's pid 1 restarted).
func TestGoneJudgesStartedRecords(t *testing.T) {
	now := time.Now()
	rec := func(owner string, beat time.Duration) schemas.Run {
		return schemas.Run{Status: schemas.RunStarted, Owner: owner, FinishedAt: now.Add(-beat)}
	}
	host, pid := ownerHostPID(t)
	for _, c := range []struct {
		r    schemas.Run
		gone bool
	}{
		{rec(store.Owner(), time.Hour), true}, // silent past GoneAfter: gone, whoever ran it
		{rec(store.Owner(), time.Second), false},
		{rec("elsewhere/1/00000000", time.Second), false},
		{rec("elsewhere/1/00000000", store.GoneAfter+time.Minute), true},
		{rec(host+"/"+pid+"/ffffffff", time.Second), true}, // this pid, another process
		{rec(host+"/999999999/00000000", time.Second), true},
		{rec(host+"/1/00000000", time.Second), false}, // pid 1 runs
		{schemas.Run{Status: schemas.RunOK, FinishedAt: now.Add(-time.Hour)}, false},
	} {
		if got := store.Gone(c.r, now); got != c.gone {
			t.Errorf("Gone(%q, last written %s ago) = %v, want %v", c.r.Owner, now.Sub(c.r.FinishedAt), got, c.gone)
		}
	}
	k := store.Judged([]schemas.Run{rec(host+"/999999999/00000000", 0)}, now)[0]
	if k.Status != schemas.RunInterrupted {
		t.Fatalf("Judged: %+v", k)
	}
}

func ownerHostPID(t *testing.T) (host, pid string) {
	parts := strings.Split(store.Owner(), "/")
	if len(parts) != 3 {
		t.Fatalf("Owner() = %q: want host/pid/token", store.Owner())
	}
	return parts[0], parts[1]
}

// A process killed moments ago is a zombie until its parent reaps it: gone all the
// same.
func TestGoneSeesAZombie(t *testing.T) {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep to start:", err)
	}
	host, _ := ownerHostPID(t)
	r := schemas.Run{Status: schemas.RunStarted, Owner: fmt.Sprintf("%s/%d/00000000", host, cmd.Process.Pid), FinishedAt: time.Now()}
	if store.Gone(r, time.Now()) {
		t.Fatal("a running process is gone")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Not reaped yet: a zombie.
	deadline := time.Now().Add(10 * time.Second)
	for !store.Gone(r, time.Now()) {
		if time.Now().After(deadline) {
			t.Fatal("a killed, unreaped process is not gone")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = cmd.Wait()
	if !store.Gone(r, time.Now()) {
		t.Fatal("a reaped process is not gone")
	}
}
