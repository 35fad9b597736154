package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Caps on what is read of a snapshot's small files: a catalog or manifest larger
// than this is not one gpuprice wrote (a catalog of 100 years of days is ~10 MiB).
const (
	maxJSONBytes = 64 << 20
	maxSigBytes  = 4 << 10
)

// ErrNotRegular is returned for a path of a snapshot that is not a regular file
// inside the directory: a symbolic link, a device, a FIFO, a socket.
var ErrNotRegular = errors.New("not a regular file inside the snapshot directory")

// openInside opens dir/rel for reading only when it is a regular file inside dir:
// no component of rel may be a symbolic link, and the file must be regular. The file
// is opened without following a link and without blocking (a FIFO is refused, never
// read), and its mode is checked on the open file before anything is read.
func openInside(dir, rel string) (*os.File, fs.FileInfo, error) {
	if !cleanRel(rel) {
		return nil, nil, fmt.Errorf("%s: path outside the directory", rel)
	}
	p := dir
	parts := strings.Split(rel, "/")
	for i, part := range parts {
		p = filepath.Join(p, part)
		st, err := os.Lstat(p)
		if err != nil {
			return nil, nil, err
		}
		switch {
		case st.Mode()&fs.ModeSymlink != 0:
			return nil, nil, fmt.Errorf("%s is a symbolic link: %w", strings.Join(parts[:i+1], "/"), ErrNotRegular)
		case i < len(parts)-1 && !st.IsDir():
			return nil, nil, fmt.Errorf("%s is not a directory: %w", strings.Join(parts[:i+1], "/"), ErrNotRegular)
		case i == len(parts)-1 && !st.Mode().IsRegular():
			return nil, nil, fmt.Errorf("%s is a %s: %w", rel, modeName(st.Mode()), ErrNotRegular)
		}
	}
	f, err := openNoFollow(p)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !st.Mode().IsRegular() { // replaced between the Lstat and the open
		f.Close()
		return nil, nil, fmt.Errorf("%s is a %s: %w", rel, modeName(st.Mode()), ErrNotRegular)
	}
	return f, st, nil
}

// modeName names a file's type for a message.
func modeName(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeDevice != 0:
		return "device"
	case m.IsDir():
		return "directory"
	}
	return "non-regular file (" + m.Type().String() + ")"
}

// readInside reads a small file of the snapshot (see openInside), at most max bytes.
func readInside(dir, rel string, max int64) ([]byte, error) {
	f, st, err := openInside(dir, rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d a snapshot's %s may hold", rel, st.Size(), max,
			filepath.Base(rel))
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: more than %d bytes", rel, max)
	}
	return b, nil
}

// ctxReader stops a long read when its context is done (SIGINT, SIGTERM).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// ctxReaderAt is ctxReader for random access (a Parquet file).
type ctxReaderAt struct {
	ctx context.Context
	r   io.ReaderAt
}

func (c ctxReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.ReadAt(p, off)
}

// mkdirInside creates dir/rel (a directory path) component by component and
// refuses any component that exists and is not a real directory (a symbolic link
// out of the snapshot directory), so publish never writes outside dir.
func mkdirInside(dir, rel string) (string, error) {
	p := dir
	if rel == "." || rel == "" {
		return p, nil
	}
	parts := strings.Split(filepath.ToSlash(rel), "/")
	for i, part := range parts {
		p = filepath.Join(p, part)
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
				return "", err
			}
			if st, err = os.Lstat(p); err != nil {
				return "", err
			}
		} else if err != nil {
			return "", err
		}
		if !st.IsDir() || st.Mode()&fs.ModeSymlink != 0 {
			return "", fmt.Errorf("%s is a %s, not a directory: publish writes only inside %s (%w)",
				strings.Join(parts[:i+1], "/"), modeName(st.Mode()), dir, ErrNotRegular)
		}
	}
	return p, nil
}
