package embedded

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"unsafe"
)

// Engine is the process's one chDB session over a data directory. chDB allows one
// session per process: every Open of the same directory shares it, and a second
// directory is refused while the first is open. Queries run one at a time.
type Engine struct {
	dir  string
	lib  *lib
	mu   sync.Mutex // serialises queries and guards db, settings
	conn unsafe.Pointer
	refs int
	db   string            // the session's current database
	set  map[string]string // settings SET on the session beyond their defaults
}

var (
	enginesMu sync.Mutex
	current   *Engine
)

// Open returns the session over dir (created when missing), starting the engine on
// first use. Each Open is matched by a Close.
func Open(dir string) (*Engine, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("chdb: data directory %q: %w", dir, err)
	}
	enginesMu.Lock()
	defer enginesMu.Unlock()
	if current != nil && current.refs == 0 && current.dir != abs {
		current.stop() // idle: another directory may take its place
	}
	if current != nil {
		if current.dir != abs {
			return nil, fmt.Errorf("chdb: this process already has the embedded ClickHouse open on %s; "+
				"chDB runs one data directory per process, so %s cannot be opened beside it", current.dir, abs)
		}
		current.refs++
		return current, nil
	}
	l, err := load()
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("chdb: data directory: %w", err)
	}
	args := []string{"clickhouse", "--path=" + abs}
	argv := make([]*byte, len(args))
	for i, a := range args {
		argv[i] = cString(a)
	}
	var conn unsafe.Pointer
	keepGoSignals(func() {
		l.signals(0)
		conn = l.connect(int32(len(argv)), &argv[0])
	})
	runtime.KeepAlive(argv)
	if conn == nil || *(*unsafe.Pointer)(conn) == nil {
		return nil, fmt.Errorf("chdb: could not start the embedded ClickHouse on %s (is another process using it?)", abs)
	}
	current = &Engine{dir: abs, lib: l, conn: conn, refs: 1, db: "default", set: map[string]string{}}
	return current, nil
}

// Dir is the session's data directory.
func (e *Engine) Dir() string { return e.dir }

// Close releases one Open. The engine stays running while idle (starting it takes
// a second or two, and a CLI command in a test or in serve opens it often); opening
// another directory stops it, and so does the end of the process.
func (e *Engine) Close() error {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	if e.refs > 0 {
		e.refs--
	}
	return nil
}

// stop shuts the engine down; the caller holds enginesMu.
func (e *Engine) stop() {
	e.mu.Lock()
	defer e.mu.Unlock()
	keepGoSignals(func() { e.lib.closeConn(e.conn) })
	e.conn = nil
	if current == e {
		current = nil
	}
}

// queryError is a failed statement: chDB's message, which starts "Code: N. DB::Exception: …".
type queryError struct{ msg string }

func (q *queryError) Error() string { return q.msg }

// run executes one statement (which may carry binary data after its text) and
// returns its output in format, copied out of chDB's buffer. The caller holds e.mu.
func (e *Engine) run(query []byte, format string) ([]byte, error) {
	if e.conn == nil {
		return nil, fmt.Errorf("chdb: the embedded ClickHouse on %s is closed", e.dir)
	}
	if len(query) == 0 {
		return nil, &queryError{msg: "Code: 62. DB::Exception: Empty query. (SYNTAX_ERROR)"}
	}
	f := []byte(format)
	inner := *(*unsafe.Pointer)(e.conn)
	res := e.lib.queryN(inner, &query[0], uintptr(len(query)), &f[0], uintptr(len(f)))
	runtime.KeepAlive(query)
	runtime.KeepAlive(f)
	if res == nil {
		return nil, nil
	}
	defer e.lib.destroyResult(res)
	if msg := goString(e.lib.resultError(res)); msg != "" {
		return nil, &queryError{msg: msg}
	}
	n := e.lib.resultLength(res)
	if n == 0 {
		return nil, nil
	}
	buf := e.lib.resultBuffer(res)
	if buf == nil {
		return nil, nil
	}
	return append([]byte(nil), unsafe.Slice((*byte)(buf), n)...), nil
}

// Query runs one statement in database db with the settings given (each applied
// for this statement only) and returns its output in format.
func (e *Engine) Query(db string, settings map[string]string, query []byte, format string) ([]byte, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if err := e.use(db); err != nil {
		return nil, err
	}
	if err := e.apply(settings); err != nil {
		return nil, err
	}
	return e.run(query, format)
}

// use makes db the session's current database.
func (e *Engine) use(db string) error {
	if db == "" {
		db = "default"
	}
	if db == e.db {
		return nil
	}
	if _, err := e.run([]byte("USE "+quoteIdent(db)), "Native"); err != nil {
		return err
	}
	e.db = db
	return nil
}

// apply sets the session's settings to the defaults plus settings.
func (e *Engine) apply(settings map[string]string) error {
	for k := range e.set {
		if _, keep := settings[k]; keep {
			continue
		}
		if _, err := e.run([]byte("SET "+quoteIdent(k)+" = DEFAULT"), "Native"); err != nil {
			return err
		}
		delete(e.set, k)
	}
	for k, v := range settings {
		if cur, ok := e.set[k]; ok && cur == v {
			continue
		}
		if _, err := e.run([]byte("SET "+quoteIdent(k)+" = "+quoteString(v)), "Native"); err != nil {
			return err
		}
		e.set[k] = v
	}
	return nil
}

// quoteIdent quotes a database or setting name for ClickHouse.
func quoteIdent(s string) string {
	out := []byte{'`'}
	for i := 0; i < len(s); i++ {
		if s[i] == '`' || s[i] == '\\' {
			out = append(out, '\\')
		}
		out = append(out, s[i])
	}
	return string(append(out, '`'))
}

// quoteString quotes a setting's value as a string literal, which ClickHouse
// converts to the setting's type (numbers and booleans included).
func quoteString(s string) string {
	out := []byte{'\''}
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' || s[i] == '\\' {
			out = append(out, '\\')
		}
		out = append(out, s[i])
	}
	return string(append(out, '\''))
}
