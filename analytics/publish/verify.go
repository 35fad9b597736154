package publish

import (
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// Problem is one thing wrong in a snapshot directory, at one file.
type Problem struct {
	Path    string `json:"path"` // relative to the directory, forward slashes
	Problem string `json:"problem"`
}

func (p Problem) String() string { return p.Path + ": " + p.Problem }

// Report is what Verify found.
type Report struct {
	Dir      string    `json:"dir"`
	Days     int       `json:"days"`     // day versions checked
	Files    int       `json:"files"`    // data files checked
	Rows     Rows      `json:"rows"`     // rows of every version checked
	Problems []Problem `json:"problems"` // none when the directory is intact
}

// VerifyOptions are what Verify checks beyond the hashes a snapshot holds.
type VerifyOptions struct {
	// Key, when set, is the publisher's public key: the catalog and every manifest
	// must be signed with it (publish --sign).
	Key *PublicKey
	// Expect, when set, is a SHA-256 (hex) the reader got from the publisher: the
	// catalog_sha256 or a manifest_sha256 must be it.
	Expect string
}

// OK reports whether the directory is intact.
func (r Report) OK() bool { return len(r.Problems) == 0 }

// Verify checks a snapshot directory: the catalog's own hash; for every version of
// every day, its manifest's own hash and that it is the one the catalog lists; for
// every file, its size, SHA-256, row count (the Parquet footer's and every row read
// back, the CSV's records) and, for prices, the content hash; the chain of
// versions; and that no file lies in the directory that no manifest lists (a
// dataset reader would read it). Each problem names the file at fault. The error is
// for a directory that cannot be read at all.
//
// Verify reads only regular files inside dir (a symbolic link, device, FIFO or
// socket is a problem, never opened for reading), streams the data files, caps the
// catalog and manifests at 64 MiB, and stops when ctx is done (SIGINT, SIGTERM).
// With o.Key every manifest and the catalog must carry a signature by that key;
// with o.Expect the catalog or one of the manifests must have that SHA-256.
func Verify(ctx context.Context, dir string, o VerifyOptions) (Report, error) {
	r := Report{Dir: dir, Problems: []Problem{}}
	if st, err := os.Stat(dir); err != nil {
		return r, fmt.Errorf("verify: %w", err)
	} else if !st.IsDir() {
		return r, fmt.Errorf("verify: %s is not a directory", dir)
	}
	bad := func(path, format string, args ...any) {
		r.Problems = append(r.Problems, Problem{Path: path, Problem: fmt.Sprintf(format, args...)})
	}
	cat, catBytes, err := readCatalog(dir)
	if err != nil {
		bad(CatalogFile, "%v", err)
		return r, nil
	}
	if o.Key != nil {
		if msg := checkSig(dir, CatalogFile, catBytes, *o.Key); msg != "" {
			bad(CatalogFile, "%s", msg)
		}
	}
	expected := o.Expect == "" || strings.EqualFold(o.Expect, cat.CatalogSHA256)
	listed := map[string]bool{CatalogFile: true, CatalogFile + SigSuffix: true}
	prevHash := map[string]string{} // day → the manifest_sha256 of its version before
	for _, e := range cat.Days {
		if err := ctx.Err(); err != nil {
			return r, fmt.Errorf("verify: %w", err)
		}
		r.Days++
		if !cleanRel(e.Manifest) {
			bad(CatalogFile, "%s v%d: manifest path %q is outside the directory", e.Day, e.Version, e.Manifest)
			continue
		}
		listed[e.Manifest] = true
		listed[e.Manifest+SigSuffix] = true
		day, err := ParseDay(e.Day)
		if err != nil {
			bad(CatalogFile, "%v", err)
			continue
		}
		if want := ManifestPath(day, e.Version); e.Manifest != want {
			bad(CatalogFile, "%s v%d: manifest at %s, expected %s", e.Day, e.Version, e.Manifest, want)
		}
		m, mb, err := readManifest(dir, e.Manifest)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				err = errors.New("missing")
			}
			bad(e.Manifest, "%v", err)
			continue
		}
		if o.Key != nil {
			if msg := checkSig(dir, e.Manifest, mb, *o.Key); msg != "" {
				bad(e.Manifest, "%s", msg)
			}
		}
		if strings.EqualFold(o.Expect, m.ManifestSHA256) {
			expected = true
		}
		switch {
		case m.ManifestSHA256 != e.ManifestSHA256:
			bad(e.Manifest, "manifest_sha256 %s, the catalog lists %s", m.ManifestSHA256, e.ManifestSHA256)
		case m.Day != e.Day || m.Version != e.Version:
			bad(e.Manifest, "is %s v%d, the catalog lists %s v%d", m.Day, m.Version, e.Day, e.Version)
		case m.Rows != e.Rows:
			bad(e.Manifest, "rows %+v, the catalog lists %+v", m.Rows, e.Rows)
		}
		if want := prevHash[e.Day]; m.Supersedes != want {
			bad(e.Manifest, "supersedes %q, the version before is %q", m.Supersedes, want)
		}
		prevHash[e.Day] = m.ManifestSHA256
		var rows Rows
		filesOK := true
		for _, f := range m.Files {
			if !cleanRel(f.Path) {
				bad(e.Manifest, "file path %q is outside the directory", f.Path)
				continue
			}
			listed[f.Path] = true
			if want := FilePath(f.Kind, day, m.Version); f.Path != want {
				bad(e.Manifest, "%s file at %s, expected %s", f.Kind, f.Path, want)
			}
			r.Files++
			n, msg := checkFile(ctx, dir, f, m.PricesSchema)
			if err := ctx.Err(); err != nil {
				return r, fmt.Errorf("verify: %w", err)
			}
			if msg != "" {
				bad(f.Path, "%s", msg)
				filesOK = false
			}
			switch f.Kind {
			case KindPrices:
				rows.Prices += n
			case KindIndex:
				rows.Index += n
			case KindSpreads:
				rows.Spreads += n
			}
		}
		if filesOK && rows != m.Rows {
			bad(e.Manifest, "rows %+v, its files hold %+v", m.Rows, rows)
		}
		r.Rows.Prices += rows.Prices
		r.Rows.Index += rows.Index
		r.Rows.Spreads += rows.Spreads
	}
	if !expected {
		bad(CatalogFile, "neither the catalog nor any manifest has sha256 %s (--expect): not the snapshot expected", o.Expect)
	}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel != "." && !strings.Contains(rel, "/") && strings.HasPrefix(rel, ".tmp-publish-") {
				return fs.SkipDir // a running (or killed) publish's work
			}
			return nil
		}
		if rel == LockFile || listed[rel] {
			return nil
		}
		if !d.Type().IsRegular() {
			bad(rel, "is a %s listed in no manifest (verify reads only regular files inside the directory)",
				modeName(d.Type()))
			return nil
		}
		bad(rel, "is listed in no manifest (a reader of the dataset would read it)")
		return nil
	})
	if err != nil {
		return r, fmt.Errorf("verify: %w", err)
	}
	slices.SortStableFunc(r.Problems, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	return r, nil
}

// checkFile checks one data file against its manifest entry and returns the rows it
// holds and what is wrong ("" when nothing is). The file is streamed, never held in
// memory, and must be a regular file inside dir of the manifest's size.
func checkFile(ctx context.Context, dir string, f File, schema string) (int64, string) {
	fh, st, err := openInside(dir, f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, "missing"
	}
	if err != nil {
		return 0, err.Error()
	}
	defer fh.Close()
	if st.Size() != f.Bytes {
		return 0, fmt.Sprintf("%d bytes, the manifest says %d: the file was changed", st.Size(), f.Bytes)
	}
	h := sha256.New()
	if _, err := io.Copy(h, ctxReader{ctx, io.LimitReader(fh, f.Bytes)}); err != nil {
		return 0, err.Error()
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != f.SHA256 {
		return 0, fmt.Sprintf("sha256 %s, the manifest says %s: the file was changed", got, f.SHA256)
	}
	var n int64
	var content string
	switch f.Format {
	case "parquet":
		n, content, err = readPrices(ctxReaderAt{ctx, fh}, f.Bytes, schema)
	case "csv":
		n, err = countCSV(ctxReader{ctx, io.NewSectionReader(fh, 0, f.Bytes)}, f.Kind)
	default:
		err = fmt.Errorf("format %q is not parquet or csv", f.Format)
	}
	if err != nil {
		return n, err.Error()
	}
	if n != f.Rows {
		return n, fmt.Sprintf("%d rows, the manifest says %d", n, f.Rows)
	}
	if f.Kind == KindPrices && content != f.ContentSHA256 {
		return n, fmt.Sprintf("content sha256 %s, the manifest says %s", content, f.ContentSHA256)
	}
	return n, ""
}

// readPrices reads every row of a prices file of the given schema back, and returns
// their number (the same in the footer and read) and their content hash.
func readPrices(ra io.ReaderAt, size int64, schema string) (n int64, content string, err error) {
	defer func() {
		if p := recover(); p != nil { // a damaged file the reader chokes on
			err = fmt.Errorf("unreadable Parquet: %v", p)
		}
	}()
	pf, err := parquet.OpenFile(ra, size)
	if err != nil {
		return 0, "", fmt.Errorf("unreadable Parquet: %w", err)
	}
	if got := pf.Schema().String(); got != schema {
		return 0, "", fmt.Errorf("schema differs from the manifest's prices_schema:\n%s", got)
	}
	rd := parquet.NewReader(pf)
	defer rd.Close()
	h := NewContentHash(pf.Schema())
	buf := make([]parquet.Row, 256)
	for {
		k, rerr := rd.ReadRows(buf)
		for _, row := range buf[:k] {
			h.Add(row)
		}
		n += int64(k)
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return n, "", fmt.Errorf("reading rows: %w", rerr)
		}
	}
	if n != pf.NumRows() {
		return n, "", fmt.Errorf("%d rows read, the Parquet footer says %d", n, pf.NumRows())
	}
	return n, h.Sum(), nil
}

// countCSV counts the records of a series file after its header, which must be
// the kind's.
func countCSV(r io.Reader, kind string) (int64, error) {
	want := IndexColumns
	if kind == KindSpreads {
		want = SpreadsColumns
	}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = len(want)
	header, err := cr.Read()
	if err != nil {
		return 0, fmt.Errorf("unreadable CSV: %w", err)
	}
	if !slices.Equal(header, want) {
		return 0, fmt.Errorf("header %v, expected %v", header, want)
	}
	var n int64
	for {
		_, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("unreadable CSV: %w", err)
		}
		n++
	}
}
