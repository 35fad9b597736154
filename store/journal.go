package store

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// RunJournal is the optional ability of a store to list the runs under way:
// StartedRuns returns every run whose record, as last written, says
// schemas.RunStarted (recorded before its rows were written and not finished since:
// under way, or killed), oldest first. Both backends have it; the ingest Runner
// reads it to find killed runs and rebuild their bars.
type RunJournal interface {
	StartedRuns(ctx context.Context) ([]schemas.Run, error)
}

// HeartbeatEvery is how often a run under way rewrites its started record (besides
// before every batch that widens its span), and GoneAfter how long a started record
// may go unwritten before its process counts as gone whatever host it ran on.
var (
	HeartbeatEvery = time.Minute
	GoneAfter      = 10 * time.Minute
)

// owner is this process as run records name it: "host/pid/token", the token
// telling it from an earlier process of the same pid (a container's pid 1).
var owner = func() string {
	host, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s/%d/%x", host, os.Getpid(), b)
}()

// Owner is this process as run records name it: "host/pid/token".
func Owner() string { return owner }

// Gone reports whether the process of a started run record r is gone at now: it
// ran on this host and no process has its pid any more (or this one has, and it is
// not the run's), or its record was last written more than GoneAfter ago. A record that is not started is never gone.
func Gone(r schemas.Run, now time.Time) bool {
	if r.Status != schemas.RunStarted {
		return false
	}
	if now.Sub(r.FinishedAt) > GoneAfter {
		return true
	}
	if r.Owner == owner {
		return false // this process's own run, under way
	}
	parts := strings.Split(r.Owner, "/")
	me, _ := os.Hostname()
	if len(parts) != 3 || parts[0] != me {
		return false // another host's: only its silence tells
	}
	n, err := strconv.Atoi(parts[1])
	if err != nil || n <= 0 {
		return false
	}
	// A process of this pid that is not this one, or none at all.
	return n == os.Getpid() || !processAlive(n)
}

// Killed returns r, a started record whose process is Gone, as it is shown and
// rewritten: interrupted, saying so and what it had stored.
func Killed(r schemas.Run) schemas.Run {
	r.Status = schemas.RunInterrupted
	msg := fmt.Sprintf("interrupted: its process (%s) stopped before the run's end (killed?) with %d rows "+
		"accepted (the store holds those of the batches it wrote); its bars are rebuilt by the next run", r.Owner,
		r.RowsAccepted)
	if r.Error != "" {
		msg += "; " + r.Error
	}
	r.Error = msg
	return r
}

// Judged returns runs with every started record whose process is Gone at now shown
// as Killed, for readers (runs, the API, metrics) before the next run rewrites it.
func Judged(runs []schemas.Run, now time.Time) []schemas.Run {
	for i, r := range runs {
		if Gone(r, now) {
			runs[i] = Killed(r)
		}
	}
	return runs
}

// UnixSeconds is t as the Unix seconds a run record's span is stored in, 0 for the
// zero time.
func UnixSeconds(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// FromUnixSeconds is UnixSeconds' inverse: 0 is the zero time.
func FromUnixSeconds(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(n, 0).UTC()
}
