//go:build unix

package store

import (
	"errors"
	"syscall"
)

// processAlive reports whether a process with pid exists (signal 0 is not sent,
// only checked; EPERM: it exists, owned by another user).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
