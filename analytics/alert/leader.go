package alert

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
)

// ErrStandingBy is returned when another process evaluates the alerts of the same
// state file: this one stands by, so that no alert is sent twice.
var ErrStandingBy = errors.New("alert: another process evaluates these alerts; standing by")

// Leader is the right to evaluate the alerts of one state file, held with an
// exclusive advisory lock (flock) on <state>.lock for as long as the process runs:
// of two `gpuprice serve` sharing a state file, one evaluates and notifies, the
// other stands by and takes over when the first exits (the kernel drops the lock
// of a process that ends, however it ends).
type Leader struct {
	path string
	mu   sync.Mutex
	f    *os.File
}

// NewLeader returns the leader lock of the state file at statePath; it is not
// taken until Acquire.
func NewLeader(statePath string) *Leader { return &Leader{path: statePath + ".lock"} }

// Acquire takes the lock when this process does not hold it yet, without waiting.
// It returns ErrStandingBy while another process holds it.
func (l *Leader) Acquire() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		return nil
	}
	f, err := os.OpenFile(l.path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return fmt.Errorf("alert: lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return ErrStandingBy
		}
		return fmt.Errorf("alert: lock %s: %w", l.path, err)
	}
	l.f = f
	return nil
}

// Release gives the lock up.
func (l *Leader) Release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
}
