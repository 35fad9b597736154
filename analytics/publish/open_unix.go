//go:build unix

package publish

import (
	"os"
	"syscall"
)

// openNoFollow opens p read-only without following a final symbolic link and
// without blocking on a FIFO.
func openNoFollow(p string) (*os.File, error) {
	return os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
}
