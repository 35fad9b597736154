package embedded

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"regexp"
	"strconv"
	"strings"

	chproto "github.com/ClickHouse/ch-go/proto"
	"github.com/ClickHouse/clickhouse-go/v2/lib/column"
	"github.com/ClickHouse/clickhouse-go/v2/lib/proto"
)

// helloQuery is what clickhouse-go asks first on an HTTP connection. Its revision
// tells the client how the server frames Native blocks; chDB writes plain Native
// (no block info, no serialization flags: revision 0), so the emulation answers 0.
const helloQuery = "SELECT displayName(), version(), revision(), timezone()"

// notSettings are the URL parameters of ClickHouse's HTTP interface that are not
// settings.
var notSettings = map[string]bool{
	"database": true, "default_format": true, "client_protocol_version": true,
	"query_id": true, "quota_key": true, "query": true, "compress": true, "decompress": true,
	"user": true, "password": true, "session_id": true, "session_timeout": true,
}

var insertFormat = regexp.MustCompile(`(?is)\s+FORMAT\s+(\w+)\s*$`)

var exceptionCode = regexp.MustCompile(`^Code: (\d+)\.`)

// Transport answers clickhouse-go's HTTP requests from the engine, as ClickHouse's
// HTTP interface would: the statement from the body (or from the query parameter,
// with the body as its data, for INSERT … FORMAT Native), the database and settings
// from the URL, output in Native, and failures as status 500 with the exception code
// in X-ClickHouse-Exception-Code.
type Transport struct{ Engine *Engine }

// RoundTrip implements http.RoundTripper.
func (t Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("chdb: read request: %w", err)
		}
		body = b
	}
	if enc := req.Header.Get("Content-Encoding"); enc != "" {
		return respond(req, http.StatusBadRequest, nil,
			[]byte("Code: 1. DB::Exception: the embedded ClickHouse takes uncompressed requests, not "+enc)), nil
	}
	q := req.URL.Query()
	var stmt []byte
	if text := q.Get("query"); text != "" {
		// An INSERT … FORMAT Native whose blocks are the body: chDB reads them
		// from a file (data inline after the statement is cut short in large
		// batches), written beside the data and removed after.
		m := insertFormat.FindStringSubmatchIndex(text)
		if m == nil {
			return respond(req, http.StatusBadRequest, nil,
				[]byte("Code: 62. DB::Exception: the embedded ClickHouse takes data only for INSERT … FORMAT <format>")), nil
		}
		f, err := os.CreateTemp(t.Engine.Dir(), "insert-*.data")
		if err != nil {
			return nil, fmt.Errorf("chdb: insert data: %w", err)
		}
		defer os.Remove(f.Name())
		_, werr := f.Write(body)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return nil, fmt.Errorf("chdb: insert data: %w", werr)
		}
		stmt = []byte(text[:m[0]] + " FROM INFILE " + quoteString(f.Name()) + " FORMAT " + text[m[2]:m[3]])
	} else {
		stmt = body
	}
	if string(bytes.TrimSpace(stmt)) == helloQuery {
		out, err := t.hello(q.Get("client_protocol_version"))
		if err != nil {
			return respond(req, http.StatusInternalServerError, nil, []byte(err.Error())), nil
		}
		return respond(req, http.StatusOK, nil, out), nil
	}
	settings := map[string]string{}
	for k, v := range q {
		if notSettings[k] || strings.HasPrefix(k, "param_") || len(v) == 0 {
			continue
		}
		settings[k] = v[len(v)-1]
	}
	format := q.Get("default_format")
	if format == "" {
		format = "TabSeparated"
	}
	out, err := t.Engine.Query(q.Get("database"), settings, stmt, format)
	if err != nil {
		h := http.Header{}
		if m := exceptionCode.FindStringSubmatch(err.Error()); m != nil {
			h.Set("X-ClickHouse-Exception-Code", m[1])
		}
		return respond(req, http.StatusInternalServerError, h, []byte(err.Error())), nil
	}
	return respond(req, http.StatusOK, nil, out), nil
}

// hello answers helloQuery in the framing of the client's protocol version, with
// revision 0: every later answer is chDB's plain Native.
func (t Transport) hello(clientVersion string) ([]byte, error) {
	out, err := t.Engine.Query("", nil, []byte("SELECT displayName(), version(), timezone()"), "TabSeparated")
	if err != nil {
		return nil, err
	}
	f := strings.Split(strings.TrimRight(string(out), "\n"), "\t")
	if len(f) != 3 {
		return nil, fmt.Errorf("chdb: unexpected answer to the server hello: %q", out)
	}
	rev, _ := strconv.ParseUint(clientVersion, 10, 64)
	b := proto.NewBlock()
	for _, c := range [][2]string{{"displayName()", "String"}, {"version()", "String"},
		{"revision()", "UInt32"}, {"timezone()", "String"}} {
		if err := b.AddColumn(c[0], column.Type(c[1])); err != nil {
			return nil, err
		}
	}
	if err := b.Append(f[0], f[1], uint32(0), f[2]); err != nil {
		return nil, err
	}
	var buf chproto.Buffer
	if err := b.Encode(&buf, rev); err != nil {
		return nil, err
	}
	return buf.Buf, nil
}

func respond(req *http.Request, status int, h http.Header, body []byte) *http.Response {
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", status, http.StatusText(status)),
		StatusCode:    status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}
