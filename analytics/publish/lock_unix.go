//go:build unix

package publish

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// LockFile is the file Publish holds locked while it writes a directory.
const LockFile = ".publish.lock"

// lock takes the directory's publish lock, or fails when another process holds it.
// The lock goes with the process (flock), so a killed run leaves none behind.
func lock(dir string) (func(), error) {
	f, err := os.OpenFile(filepath.Join(dir, LockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("publish: another gpuprice publish is writing %s", dir)
		}
		return nil, fmt.Errorf("publish: locking %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}
