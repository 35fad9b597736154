package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// evictFromPageCache asks the kernel to drop the file's pages from the page cache
// (those no process maps), so that the next process to run it maps the pages it
// reads as an exec from disk does. How a binary came into the cache (written by
// `go build`, copied, read whole) decides how large its page-cache folios are, and
// Linux maps a whole folio on a fault: the same binary's resident file pages vary by
// tens of megabytes with it.
func evictFromPageCache(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
}
