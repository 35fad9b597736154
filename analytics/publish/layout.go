// Package publish writes and checks citable snapshots of a gpuprice store: immutable
// daily snapshots in a directory that anyone can read without gpuprice, and that
// `gpuprice verify` (Verify) checks byte for byte.
// The long story (modes, rules, limits) is in its README.md.
package publish

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
)

// Format names the layout of a snapshot directory; it changes when the layout or the
// files' columns do.
const Format = "gpuprice-snapshot/1"

// CatalogFile is the name of the catalog at the top of a snapshot directory.
const CatalogFile = "catalog.json"

// File kinds.
const (
	KindPrices  = "prices"
	KindIndex   = "index"
	KindSpreads = "spreads"
)

// Kinds are the files of every published day, in manifest order.
var Kinds = []string{KindPrices, KindIndex, KindSpreads}

// dayLayout is how days are written in paths and files.
const dayLayout = time.DateOnly

// DayString formats a day as the snapshot's paths and files write it.
func DayString(day time.Time) string { return day.UTC().Format(dayLayout) }

// ParseDay reads a day written YYYY-MM-DD.
func ParseDay(s string) (time.Time, error) {
	t, err := time.Parse(dayLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not a day (YYYY-MM-DD)", s)
	}
	return t, nil
}

// FilePath is the path, relative to the snapshot directory and with forward
// slashes, of a day's file of one kind in one version.
func FilePath(kind string, day time.Time, version int) string {
	ext := "csv"
	if kind == KindPrices {
		ext = "parquet"
	}
	p := fmt.Sprintf("%s/dt=%s/part-00000.%s", kind, DayString(day), ext)
	if version > 1 {
		p = fmt.Sprintf("revisions/v%d/%s", version, p)
	}
	return p
}

// ManifestPath is the path of a day's manifest in one version.
func ManifestPath(day time.Time, version int) string {
	if version > 1 {
		return fmt.Sprintf("manifests/%s.v%d.json", DayString(day), version)
	}
	return fmt.Sprintf("manifests/%s.json", DayString(day))
}

// Method names the methods the day's files were computed with.
type Method struct {
	Snapshot string `json:"snapshot"` // Format
	Index    string `json:"index"`    // analytics.IndexVersion
	Chained  string `json:"chained"`  // analytics.ChainedVersion
	Spreads  string `json:"spreads"`  // analytics.SpreadsVersion
}

// CurrentMethod is the method this build publishes with.
func CurrentMethod() Method {
	return Method{Snapshot: Format, Index: analytics.IndexVersion, Chained: analytics.ChainedVersion,
		Spreads: analytics.SpreadsVersion}
}

// Rows counts the data rows of a day's files (CSV headers not counted).
type Rows struct {
	Prices  int64 `json:"prices"`
	Index   int64 `json:"index"`
	Spreads int64 `json:"spreads"`
}

// File is one file of a day.
type File struct {
	Path   string `json:"path"` // relative to the snapshot directory, forward slashes
	Kind   string `json:"kind"`
	Format string `json:"format"` // parquet or csv
	Rows   int64  `json:"rows"`
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"` // of the file's bytes, hex
	// ContentSHA256 (prices only) is the SHA-256 of the rows without observed_at
	// (see ContentHash): what tells whether the day's prices changed, since
	// observed_at, the last time a collection saw a price, moves each time a
	// source lists an unchanged price again.
	ContentSHA256 string `json:"content_sha256,omitempty"`
}

// Manifest describes one version of one published day.
type Manifest struct {
	Format  string `json:"format"`
	Day     string `json:"day"`
	Version int    `json:"version"`
	// Supersedes is the manifest_sha256 of the version before (version > 1).
	Supersedes string `json:"supersedes,omitempty"`
	Method     Method `json:"method"`
	// EffectiveFrom and EffectiveUntil bound the effective_at of the day's prices:
	// [from, until).
	EffectiveFrom  string `json:"effective_from"`
	EffectiveUntil string `json:"effective_until"`
	// ObservedThrough is the latest observed_at among the day's prices ("" when
	// the day has none).
	ObservedThrough string `json:"observed_through,omitempty"`
	Rows            Rows   `json:"rows"`
	Files           []File `json:"files"`
	// PricesSchema is the Parquet schema of the prices file (verify reads the file
	// against it).
	PricesSchema string `json:"prices_schema"`
	// ManifestSHA256 is the SHA-256 of this file's bytes with this value emptied
	// (`"manifest_sha256": ""`): the manifest's identity, which the catalog and
	// citations name.
	ManifestSHA256 string `json:"manifest_sha256"`
}

// Entry is one version of one day in the catalog.
type Entry struct {
	Day            string `json:"day"`
	Version        int    `json:"version"`
	Manifest       string `json:"manifest"` // path
	ManifestSHA256 string `json:"manifest_sha256"`
	Rows           Rows   `json:"rows"`
}

// Catalog lists every published day and version, by day then version.
type Catalog struct {
	Format string  `json:"format"`
	Days   []Entry `json:"days"`
	// CatalogSHA256 is the SHA-256 of this file's bytes with this value emptied.
	CatalogSHA256 string `json:"catalog_sha256"`
}

// Latest returns the newest version of a day, and whether the day is published.
func (c *Catalog) Latest(day string) (Entry, bool) {
	var e Entry
	ok := false
	for _, d := range c.Days {
		if d.Day == day && (!ok || d.Version > e.Version) {
			e, ok = d, true
		}
	}
	return e, ok
}

func (c *Catalog) sort() {
	sort.Slice(c.Days, func(i, j int) bool {
		if c.Days[i].Day != c.Days[j].Day {
			return c.Days[i].Day < c.Days[j].Day
		}
		return c.Days[i].Version < c.Days[j].Version
	})
}

// selfHashed writes v with its hash field emptied (set fills the field) as indented
// JSON, hashes those bytes, and returns the JSON with the hash filled in, and the hash.
func selfHashed(v any, set func(string)) ([]byte, string, error) {
	set("")
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, "", err
	}
	b = append(b, '\n')
	sum := sha256.Sum256(b)
	h := hex.EncodeToString(sum[:])
	set(h)
	out, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, "", err
	}
	return append(out, '\n'), h, nil
}

// checkSelfHash checks that b, a file holding `"field": "<hash>"` once, hashes to
// <hash> with that value emptied.
func checkSelfHash(b []byte, field string, hash string) error {
	if len(hash) != sha256.Size*2 {
		return fmt.Errorf("%s %q is not a SHA-256", field, hash)
	}
	full := []byte(fmt.Sprintf("%q: %q", field, hash))
	if bytes.Count(b, full) != 1 {
		return fmt.Errorf("%s is not written once as %s", field, full)
	}
	empty := bytes.Replace(b, full, []byte(fmt.Sprintf("%q: \"\"", field)), 1)
	sum := sha256.Sum256(empty)
	if got := hex.EncodeToString(sum[:]); got != hash {
		return fmt.Errorf("the file hashes to %s, not its %s %s: it was changed", got, field, hash)
	}
	return nil
}

// ErrNoCatalog is returned for a directory that holds no catalog.
var ErrNoCatalog = errors.New("no " + CatalogFile +
	": not a gpuprice snapshot directory (write one with `gpuprice publish --out DIR`)")

// ReadCatalog reads and checks the catalog of a snapshot directory (its format and
// its own hash; not the manifests it lists: see Verify).
func ReadCatalog(dir string) (*Catalog, error) {
	c, _, err := readCatalog(dir)
	return c, err
}

// readCatalog is ReadCatalog that also returns the file's bytes (what a signature signs).
func readCatalog(dir string) (*Catalog, []byte, error) {
	b, err := readInside(dir, CatalogFile, maxJSONBytes)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%s: %w", dir, ErrNoCatalog)
	}
	if err != nil {
		return nil, nil, err
	}
	var c Catalog
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", CatalogFile, err)
	}
	if c.Format != Format {
		return nil, nil, fmt.Errorf("%s: format %q, this gpuprice reads %q", CatalogFile, c.Format, Format)
	}
	if err := checkSelfHash(b, "catalog_sha256", c.CatalogSHA256); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", CatalogFile, err)
	}
	return &c, b, nil
}

// ReadManifest reads and checks the manifest at rel (relative to dir): its format and
// its own hash (not its files: see Verify).
func ReadManifest(dir, rel string) (*Manifest, error) {
	m, _, err := readManifest(dir, rel)
	return m, err
}

// readManifest is ReadManifest that also returns the file's bytes (what a signature signs).
func readManifest(dir, rel string) (*Manifest, []byte, error) {
	b, err := readInside(dir, rel, maxJSONBytes)
	if err != nil {
		return nil, nil, err
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", rel, err)
	}
	if m.Format != Format {
		return nil, nil, fmt.Errorf("%s: format %q, this gpuprice reads %q", rel, m.Format, Format)
	}
	if err := checkSelfHash(b, "manifest_sha256", m.ManifestSHA256); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", rel, err)
	}
	return &m, b, nil
}

// cleanRel reports whether rel is a clean relative path inside the directory.
func cleanRel(rel string) bool {
	return rel != "" && path.Clean(rel) == rel && !path.IsAbs(rel) && rel != ".." && !bytes.HasPrefix([]byte(rel),
		[]byte("../"))
}
