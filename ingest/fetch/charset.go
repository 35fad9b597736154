package fetch

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"golang.org/x/net/html/charset"
)

// UTF8 returns an HTML body decoded to UTF-8 and the name of the encoding it was in.
// A charset in the Content-Type header or a byte-order mark is obeyed. Otherwise a body
// that is valid UTF-8 is returned as it is (pages are UTF-8 far more often than they
// say), and one that is not is decoded from its <meta charset> or, when it declares
// none, from windows-1252, as browsers do.
func UTF8(body []byte, contentType string) ([]byte, string, error) {
	enc, name, certain := charset.DetermineEncoding(body, contentType)
	if name == "utf-8" || (!certain && utf8.Valid(body)) {
		return body, "utf-8", nil
	}
	out, err := enc.NewDecoder().Bytes(body)
	if err != nil {
		return nil, name, fmt.Errorf("fetch: decoding %s: %w", name, err)
	}
	return out, name, nil
}

// ErrBomb is returned when decompressed data exceeds its limit.
var ErrBomb = errors.New("fetch: decompressed data exceeds the limit")

// Gunzip decompresses a gzip body (a .gz file served as is, not a Content-Encoding the
// transport already undid), refusing to produce more than max bytes. Nested archives
// are not opened: a .gz inside comes back compressed, and a caller that opens it
// again calls Gunzip with the same limit.
func Gunzip(data []byte, max int64) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("fetch: gunzip: %w", err)
	}
	defer zr.Close()
	out, err := io.ReadAll(io.LimitReader(zr, max+1))
	if err != nil {
		return nil, fmt.Errorf("fetch: gunzip: %w", err)
	}
	if int64(len(out)) > max {
		return nil, fmt.Errorf("%w (%d bytes)", ErrBomb, max)
	}
	return out, nil
}

// toUTF8 returns r with its body decoded to UTF-8 (see UTF8) and, when it was in
// another encoding, a copy of its header saying charset=utf-8.
func toUTF8(r *Response) (*Response, error) {
	body, name, err := UTF8(r.Body, r.Header.Get("Content-Type"))
	if err != nil {
		return nil, fmt.Errorf("fetch: %s: %w", RedactURL(r.URL), err)
	}
	if name == "utf-8" {
		return r, nil
	}
	out := *r
	out.Body = body
	out.Header = r.Header.Clone()
	out.Header.Set("Content-Type", "text/html; charset=utf-8")
	return &out, nil
}
