//go:build !unix

package publish

import "os"

// openNoFollow opens p read-only (openInside has checked it with Lstat).
func openNoFollow(p string) (*os.File, error) { return os.Open(p) }
