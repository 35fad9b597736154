// Package embedded runs the ClickHouse engine in this process (chDB's libchdb.so,
// loaded at run time, no cgo) behind the HTTP interface that clickhouse-go speaks, so
// the ClickHouse store's own code and SQL run on a current engine without a server.
// See doc.go for how it is found, what it emulates and what it cannot do.
package embedded

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Version is the chDB release the SQL is tested on, and the npm package that holds it.
const (
	Version    = "26.7.3-stable.1"
	NPMPackage = "@chdb/lib-linux-x64-gnu"
	// TarballSHA256 is the checksum of the npm tarball of NPMPackage@Version that
	// deploy/chdb/install.sh verifies.
	TarballSHA256 = "c0d32b129e988f2b9a9a31c9141aecf5e1e2453f9a079efc4d36ab8e3f92b2ad"
)

// EnvLibPath names the variable that points at libchdb.so (chdb-go's name for it).
const EnvLibPath = "CHDB_LIB_PATH"

// ErrNoLibrary is returned when libchdb.so cannot be found or loaded.
var ErrNoLibrary = errors.New("embedded ClickHouse (chDB) library libchdb.so not found")

// InstallHint says how to get the library; every ErrNoLibrary carries it.
const InstallHint = "install it with ./deploy/chdb/install.sh (npm package " + NPMPackage + "@" + Version +
	", checksum verified, into " + "~/.cache/gpuprice/chdb/" + Version + "/), or set " + EnvLibPath +
	" to the path of a libchdb.so of that release"

// CacheDir is where deploy/chdb/install.sh puts the library for this user.
func CacheDir() string {
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "gpuprice", "chdb", Version)
}

// LibraryPath returns the libchdb.so this process would load: $CHDB_LIB_PATH, else
// the install script's cache, else /usr/local/lib/libchdb.so; "" when none exists.
func LibraryPath() string {
	if p := os.Getenv(EnvLibPath); p != "" {
		return p
	}
	for _, p := range []string{filepath.Join(CacheDir(), "libchdb.so"), "/usr/local/lib/libchdb.so"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// lib holds the functions of libchdb.so this package calls.
type lib struct {
	connect       func(argc int32, argv **byte) unsafe.Pointer
	closeConn     func(conn unsafe.Pointer)
	queryN        func(conn unsafe.Pointer, query *byte, queryLen uintptr, format *byte, formatLen uintptr) unsafe.Pointer
	destroyResult func(res unsafe.Pointer)
	resultBuffer  func(res unsafe.Pointer) unsafe.Pointer
	resultLength  func(res unsafe.Pointer) uintptr
	resultError   func(res unsafe.Pointer) unsafe.Pointer
	signals       func(enabled int32)
}

var (
	loadOnce sync.Once
	loaded   *lib
	loadErr  error
)

// load opens libchdb.so once per process.
func load() (*lib, error) {
	loadOnce.Do(func() {
		if runtime.GOOS != "linux" {
			loadErr = fmt.Errorf("%w: the pinned release is built for linux only", ErrNoLibrary)
			return
		}
		path := LibraryPath()
		if path == "" {
			loadErr = fmt.Errorf("%w: %s", ErrNoLibrary, InstallHint)
			return
		}
		h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			loadErr = fmt.Errorf("%w: loading %s: %v; %s", ErrNoLibrary, path, err, InstallHint)
			return
		}
		l := &lib{}
		for name, fn := range map[string]any{
			"chdb_connect":                     &l.connect,
			"chdb_close_conn":                  &l.closeConn,
			"chdb_query_n":                     &l.queryN,
			"chdb_destroy_query_result":        &l.destroyResult,
			"chdb_result_buffer":               &l.resultBuffer,
			"chdb_result_length":               &l.resultLength,
			"chdb_result_error":                &l.resultError,
			"chdb_set_signal_handlers_enabled": &l.signals,
		} {
			sym, err := purego.Dlsym(h, name)
			if err != nil || sym == 0 {
				loadErr = fmt.Errorf("%w: %s lacks %s (it is not chDB %s or later): %v", ErrNoLibrary, path, name, Version, err)
				return
			}
			purego.RegisterFunc(fn, sym)
		}
		loaded = l
	})
	return loaded, loadErr
}

// keepGoSignals runs f and then puts back the process's signal handlers as they
// were before it: the Go runtime owns SIGSEGV (nil dereferences become panics),
// SIGURG (preemption), SIGPIPE, SIGINT and SIGTERM (gpuprice's own handling), and
// chDB's opt-out of its crash handlers resets several of them to SIG_DFL.
func keepGoSignals(f func()) {
	type sigaction struct {
		handler  uintptr
		flags    uint64
		restorer uintptr
		mask     uint64
	}
	var saved [65]sigaction
	for sig := 1; sig < len(saved); sig++ {
		if sig == int(syscall.SIGKILL) || sig == int(syscall.SIGSTOP) {
			continue
		}
		syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), 0, uintptr(unsafe.Pointer(&saved[sig])), 8, 0, 0)
	}
	f()
	for sig := 1; sig < len(saved); sig++ {
		if sig == int(syscall.SIGKILL) || sig == int(syscall.SIGSTOP) {
			continue
		}
		syscall.RawSyscall6(syscall.SYS_RT_SIGACTION, uintptr(sig), uintptr(unsafe.Pointer(&saved[sig])), 0, 8, 0, 0)
	}
}

// cString returns a NUL-terminated copy of s.
func cString(s string) *byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return &b[0]
}

// goString copies the NUL-terminated C string at p ("" for NULL).
func goString(p unsafe.Pointer) string {
	if p == nil {
		return ""
	}
	n := 0
	for *(*byte)(unsafe.Add(p, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(p), n))
}
