package publish

import (
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/gpuprice/gpuprice/schemas/textsafe"
	"hash"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/ingest/parquetio"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// Source is what Publish reads: the observations and the daily bars of a store
// (both backends have them).
type Source interface {
	Each(ctx context.Context, f store.Filter, fn func(schemas.Observation) error) error
	Bars(ctx context.Context, q store.BarQuery) ([]store.Bar, error)
}

// What Publish did with a day.
const (
	// StatusPublished: the day was not published; version 1 is written.
	StatusPublished = "published"
	// StatusUnchanged: the day is published with the same data; nothing written.
	StatusUnchanged = "unchanged"
	// StatusChanged: the store's data for the day differs from the published
	// version; nothing written (Options.Republish writes a new version).
	StatusChanged = "changed"
	// StatusRepublished: the day's data changed and a new version was written
	// beside the old one.
	StatusRepublished = "republished"
	// StatusEmpty: the store has no observation and no price in force on the day;
	// nothing written.
	StatusEmpty = "empty"
	// StatusNotObserved: prices are in force on the day only as carried from an
	// earlier (or later-effective) sighting: nothing was observed on it (no
	// observation effective on the day, no series in force last seen on it, no live
	// collection on it). Nothing written: a citable day holds a fresh observation.
	// DayResult.LastSeen says when the prices in force were last seen.
	StatusNotObserved = "not_observed"
)

// recordedRunPrefix starts the run id of a reparse of a recorded example
// (query.RecordedRunPrefix): such a run collects nothing on the day it ran.
const recordedRunPrefix = "recorded-"

// RunLister is the optional ability of a Source to list its collection runs (both
// stores have it): a day with a live collection that stored rows was observed, even
// when every price it saw keeps an earlier effective_at (a list price).
type RunLister interface {
	Runs(ctx context.Context, source string, limit int) ([]schemas.Run, error)
}

// ErrChanged is returned (wrapped) by Publish when some days' data changed since
// they were published and they were left as published.
var ErrChanged = errors.New(
	"the data of some published days changed since; they were left as published (--republish writes a new version " +
		"beside the old)")

// Options tune Publish.
type Options struct {
	// Republish writes a new version of a day whose data changed since it was
	// published, beside the old one, instead of reporting it only.
	Republish bool
	// Progress, when set, is called with each day's result as soon as it is known.
	Progress func(DayResult)
	// Sign, when set, signs every manifest written and the catalog (minisign
	// signatures beside them, FILE.minisig), so `verify --key` ties the snapshot
	// to its publisher.
	Sign *PrivateKey
}

// DayResult is what Publish did with one day.
type DayResult struct {
	Day            string `json:"day"`
	Status         string `json:"status"`
	Version        int    `json:"version,omitempty"` // the version written, or the published one
	Manifest       string `json:"manifest,omitempty"`
	ManifestSHA256 string `json:"manifest_sha256,omitempty"`
	Rows           Rows   `json:"rows"` // the rows of the store's data for the day
	// LastSeen is, for a day not observed (StatusNotObserved), when the prices in
	// force on it were last seen (RFC 3339; "" when unknown).
	LastSeen string `json:"last_seen,omitempty"`
	// Changes say what differs from the published version (changed, republished).
	Changes []string `json:"changes,omitempty"`
}

// Days lists the UTC days from from through to (inclusive).
func Days(from, to time.Time) []time.Time {
	var out []time.Time
	for d := from.UTC().Truncate(store.Daily); !d.After(to.UTC()); d = d.Add(store.Daily) {
		out = append(out, d)
	}
	return out
}

// Publish writes the given UTC days of src to the snapshot directory dir (created
// when missing), in day order, and returns what it did with each. A day already
// published with the same data is left as it is (StatusUnchanged). A day whose data
// differs from its newest published version is left as it is and reported
// (StatusChanged, and ErrChanged once every day is done) unless o.Republish, which
// writes version N+1 under revisions/vN+1. The catalog is rewritten after each day
// written, so an interrupted run loses at most the day it was writing. Only one
// Publish at a time may write to a directory; another is refused.
func Publish(ctx context.Context, src Source, dir string, days []time.Time, o Options) ([]DayResult, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	unlock, err := lock(dir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	cat, err := loadCatalog(dir, o.Sign)
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp(dir, ".tmp-publish-")
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	defer os.RemoveAll(tmp)

	days = slices.Clone(days)
	for i := range days {
		days[i] = days[i].UTC().Truncate(store.Daily)
	}
	slices.SortFunc(days, func(a, b time.Time) int { return a.Compare(b) })
	days = slices.CompactFunc(days, func(a, b time.Time) bool { return a.Equal(b) })

	collected, err := collectionDays(ctx, src)
	if err != nil {
		return nil, err
	}
	var out []DayResult
	changed := 0
	for _, day := range days {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		r, err := publishDay(ctx, src, dir, tmp, cat, day, collected[day.Unix()], o)
		if err != nil {
			return out, fmt.Errorf("publish %s: %w", DayString(day), err)
		}
		if r.Status == StatusChanged {
			changed++
		}
		out = append(out, r)
		if o.Progress != nil {
			o.Progress(r)
		}
	}
	if changed > 0 {
		return out, fmt.Errorf("%d day(s): %w", changed, ErrChanged)
	}
	return out, nil
}

// loadCatalog reads the catalog of dir, or starts one when dir has none. A
// manifest not in the catalog (a run stopped between writing a day's manifest and
// the catalog) is taken in when its own hash holds.
func loadCatalog(dir string, key *PrivateKey) (*Catalog, error) {
	cat, err := ReadCatalog(dir)
	if errors.Is(err, ErrNoCatalog) {
		cat, err = &Catalog{Format: Format}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("publish: %w (run `gpuprice verify %s`)", err, dir)
	}
	listed := map[string]bool{}
	for _, e := range cat.Days {
		listed[e.Manifest] = true
	}
	names, err := filepath.Glob(filepath.Join(dir, "manifests", "*.json"))
	if err != nil {
		return nil, fmt.Errorf("publish: %w", err)
	}
	adopted := false
	for _, n := range names {
		rel := "manifests/" + filepath.Base(n)
		if listed[rel] {
			continue
		}
		m, err := ReadManifest(dir, rel)
		if err != nil {
			return nil, fmt.Errorf("publish: %s is not in the catalog and cannot be read: %w (run `gpuprice verify %s`)", rel,
				err, dir)
		}
		day, err := ParseDay(m.Day)
		if err != nil || ManifestPath(day, m.Version) != rel {
			return nil, fmt.Errorf("publish: %s is not in the catalog and names day %q version %d (run `gpuprice verify %s`)",
				rel, m.Day, m.Version, dir)
		}
		cat.Days = append(cat.Days, Entry{Day: m.Day, Version: m.Version, Manifest: rel, ManifestSHA256: m.ManifestSHA256,
			Rows: m.Rows})
		adopted = true
	}
	if adopted {
		cat.sort()
		if err := writeCatalog(dir, cat, key); err != nil {
			return nil, err
		}
	}
	return cat, nil
}

// writeCatalog writes the catalog, sorted, with its own hash, and its signature
// with key (an unsigned catalog's old signature is removed: it no longer holds).
func writeCatalog(dir string, cat *Catalog, key *PrivateKey) error {
	cat.sort()
	b, h, err := selfHashed(cat, func(h string) { cat.CatalogSHA256 = h })
	if err != nil {
		return fmt.Errorf("publish: catalog: %w", err)
	}
	if err := writeFileAtomic(dir, CatalogFile, b); err != nil {
		return err
	}
	if key == nil {
		if err := os.Remove(filepath.Join(dir, CatalogFile+SigSuffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("publish: %w", err)
		}
		return nil
	}
	return writeFileAtomic(dir, CatalogFile+SigSuffix, sign(key, b, "catalog sha256:"+h))
}

// writeFileAtomic writes b to dir/rel through a temporary file renamed into place.
func writeFileAtomic(dir, rel string, b []byte) error {
	parent, err := mkdirInside(dir, path.Dir(rel))
	if err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	dst := filepath.Join(parent, path.Base(rel))
	f, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".*.tmp")
	if err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("publish: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("publish: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	if err := os.Chmod(f.Name(), 0o644); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	if err := os.Rename(f.Name(), dst); err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	return nil
}

// builtFile is a day's file written to the temporary directory.
type builtFile struct {
	File
	tmp string
}

// publishDay builds the files of one day in tmp, compares them with the day's
// newest published version and writes what the comparison calls for.
func publishDay(ctx context.Context, src Source, dir, tmp string, cat *Catalog, day time.Time, collected bool,
	o Options) (DayResult, error) {
	r := DayResult{Day: DayString(day)}
	m := Manifest{Format: Format, Day: r.Day, Method: CurrentMethod(),
		EffectiveFrom: day.Format(time.RFC3339), EffectiveUntil: day.Add(store.Daily).Format(time.RFC3339),
		PricesSchema: PricesSchema()}
	prices, through, err := buildPrices(ctx, src, tmp, day)
	if err != nil {
		return r, err
	}
	if !through.IsZero() {
		m.ObservedThrough = through.UTC().Format(time.RFC3339Nano)
	}
	index, spreads, seen, err := buildSeries(ctx, src, tmp, day)
	if err != nil {
		return r, err
	}
	files := []builtFile{prices, index, spreads}
	m.Rows = Rows{Prices: prices.Rows, Index: index.Rows, Spreads: spreads.Rows}
	r.Rows = m.Rows
	defer func() {
		for _, f := range files {
			os.Remove(f.tmp)
		}
	}()

	prev, published := cat.Latest(r.Day)
	if !published && m.Rows.Prices == 0 && m.Rows.Index == 0 && m.Rows.Spreads == 0 {
		r.Status = StatusEmpty
		return r, nil
	}
	if !published && m.Rows.Prices == 0 && !collected && !seen.onDay {
		r.Status = StatusNotObserved
		if !seen.last.IsZero() {
			r.LastSeen = seen.last.UTC().Format(time.RFC3339)
		}
		return r, nil
	}
	if published {
		old, err := ReadManifest(dir, prev.Manifest)
		if err != nil {
			return r, fmt.Errorf("the published version cannot be read: %w (run `gpuprice verify %s`)", err, dir)
		}
		if old.ManifestSHA256 != prev.ManifestSHA256 {
			return r, fmt.Errorf("%s is not the manifest the catalog lists (run `gpuprice verify %s`)", prev.Manifest, dir)
		}
		r.Version, r.Manifest, r.ManifestSHA256 = prev.Version, prev.Manifest, prev.ManifestSHA256
		r.Changes = differences(old, &m, files)
		if len(r.Changes) == 0 {
			r.Status = StatusUnchanged
			return r, nil
		}
		if !o.Republish {
			r.Status = StatusChanged
			return r, nil
		}
		m.Version, m.Supersedes = prev.Version+1, prev.ManifestSHA256
		r.Status = StatusRepublished
	} else {
		m.Version = 1
		r.Status = StatusPublished
	}

	// Data files first, then the manifest, then the catalog: a day is published
	// once its manifest is written.
	for i := range files {
		f := &files[i]
		f.Path = FilePath(f.Kind, day, m.Version)
		parent, err := mkdirInside(dir, path.Dir(f.Path))
		if err != nil {
			return r, err
		}
		dst := filepath.Join(parent, path.Base(f.Path))
		if err := os.Chmod(f.tmp, 0o644); err != nil {
			return r, err
		}
		if err := os.Rename(f.tmp, dst); err != nil {
			return r, err
		}
		m.Files = append(m.Files, f.File)
	}
	b, h, err := selfHashed(&m, func(h string) { m.ManifestSHA256 = h })
	if err != nil {
		return r, err
	}
	rel := ManifestPath(day, m.Version)
	if err := writeFileAtomic(dir, rel, b); err != nil {
		return r, err
	}
	if o.Sign != nil {
		what := fmt.Sprintf("manifest %s v%d sha256:%s", r.Day, m.Version, h)
		if err := writeFileAtomic(dir, rel+SigSuffix, sign(o.Sign, b, what)); err != nil {
			return r, err
		}
	}
	cat.Days = append(cat.Days, Entry{Day: r.Day, Version: m.Version, Manifest: rel, ManifestSHA256: h, Rows: m.Rows})
	if err := writeCatalog(dir, cat, o.Sign); err != nil {
		return r, err
	}
	r.Version, r.Manifest, r.ManifestSHA256 = m.Version, rel, h
	return r, nil
}

// differences says how a day's new files and method differ from a published
// manifest; none when they are the same data.
func differences(old, m *Manifest, files []builtFile) []string {
	var out []string
	if old.PricesSchema != m.PricesSchema {
		out = append(out, "prices: the columns changed (a new gpuprice writes other columns)")
	}
	if old.Method != m.Method {
		out = append(out, fmt.Sprintf("method %+v, published with %+v", m.Method, old.Method))
	}
	byKind := map[string]File{}
	for _, f := range old.Files {
		byKind[f.Kind] = f
	}
	for _, f := range files {
		p, ok := byKind[f.Kind]
		switch {
		case !ok:
			out = append(out, f.Kind+": not in the published version")
		case f.Rows != p.Rows:
			out = append(out, fmt.Sprintf("%s: %d rows, published %d", f.Kind, f.Rows, p.Rows))
		case f.Kind == KindPrices && f.ContentSHA256 != p.ContentSHA256:
			out = append(out, fmt.Sprintf("%s: rows differ (content sha256 %.12s…, published %.12s…)", f.Kind, f.ContentSHA256,
				p.ContentSHA256))
		case f.Kind != KindPrices && f.SHA256 != p.SHA256:
			out = append(out, fmt.Sprintf("%s: values differ (sha256 %.12s…, published %.12s…)", f.Kind, f.SHA256, p.SHA256))
		}
	}
	return out
}

// hashingFile is a temporary file whose bytes are counted and hashed as written.
type hashingFile struct {
	f *os.File
	h hash.Hash
	n int64
}

func newHashingFile(tmp, pattern string) (*hashingFile, error) {
	f, err := os.CreateTemp(tmp, pattern)
	if err != nil {
		return nil, err
	}
	return &hashingFile{f: f, h: sha256.New()}, nil
}

func (w *hashingFile) Write(p []byte) (int, error) {
	n, err := w.f.Write(p)
	w.h.Write(p[:n])
	w.n += int64(n)
	return n, err
}

// close syncs and closes the file and fills f's size and hash.
func (w *hashingFile) close(f *builtFile) error {
	f.tmp = w.f.Name()
	if err := w.f.Sync(); err != nil {
		w.f.Close()
		return err
	}
	if err := w.f.Close(); err != nil {
		return err
	}
	f.Bytes, f.SHA256 = w.n, hex.EncodeToString(w.h.Sum(nil))
	return nil
}

// rowOrder compares two rows by identity: series key, then effective_at (the
// order of store.Store.Each).
func rowOrder(a, b *parquetio.Row) int {
	for _, c := range [][2]string{{a.Provider, b.Provider}, {a.SKU, b.SKU}, {a.Region, b.Region}, {a.Zone, b.Zone},
		{a.Pricing, b.Pricing}} {
		if c := strings.Compare(c[0], c[1]); c != 0 {
			return c
		}
	}
	return a.EffectiveAt.Compare(b.EffectiveAt)
}

// buildPrices writes the day's observations as Parquet (the writer of `export
// --format parquet`, at its fixed settings), in the store's identity order, and
// returns the file and the latest observed_at.
func buildPrices(ctx context.Context, src Source, tmp string, day time.Time) (builtFile, time.Time, error) {
	bf := builtFile{File: File{Kind: KindPrices, Format: "parquet"}}
	hf, err := newHashingFile(tmp, "prices-*")
	if err != nil {
		return bf, time.Time{}, err
	}
	pw := parquetio.NewWriter(hf, parquetio.DefaultRowGroupRows)
	content := NewContentHash(pricesSchema)
	var values parquet.Row
	var prev parquetio.Row
	var through time.Time
	err = src.Each(ctx, store.Filter{Since: day, Until: day.Add(store.Daily)}, func(o schemas.Observation) error {
		row := parquetio.RowOf(o)
		if bf.Rows > 0 && rowOrder(&prev, &row) >= 0 {
			return fmt.Errorf(
				"the store returned %s|%s|%s|%s|%s at %s out of identity order: a published file must be reproducible",
				row.Provider, row.SKU, row.Region, row.Zone, row.Pricing, row.EffectiveAt.Format(time.RFC3339))
		}
		prev = row
		bf.Rows++
		if o.ObservedAt.After(through) {
			through = o.ObservedAt
		}
		values = pricesSchema.Deconstruct(values[:0], &row)
		content.Add(values)
		return pw.Write(o)
	})
	if err == nil {
		err = pw.Close()
	}
	if cerr := hf.close(&bf); err == nil {
		err = cerr
	}
	if err != nil {
		return bf, time.Time{}, fmt.Errorf("prices: %w", err)
	}
	bf.ContentSHA256 = content.Sum()
	return bf, through, nil
}

// pricesSchema is the Parquet schema of the prices files this build writes.
var pricesSchema = parquet.SchemaOf(parquetio.Row{})

// PricesSchema is the Parquet schema of the prices files this build writes, as
// manifests record it.
func PricesSchema() string { return pricesSchema.String() }

// ContentHash hashes the rows of a prices file without observed_at: one CSV record
// per row (RFC 4180, "\n" line ends, no header) of every other column in file
// order, each value as text: strings as they are, doubles in the shortest form that
// reads back as the same double, integers and timestamps (microseconds since the
// epoch) in decimal, nulls empty. It is defined on the file's own columns, so it can
// be recomputed from any prices file, whatever columns a later format adds.
type ContentHash struct {
	h    hash.Hash
	w    *csv.Writer
	skip int // the column of observed_at
	rec  []string
}

// NewContentHash starts a content hash of rows of the Parquet schema s.
func NewContentHash(s *parquet.Schema) *ContentHash {
	h := sha256.New()
	c := &ContentHash{h: h, w: csv.NewWriter(h), skip: -1}
	for i, p := range s.Columns() {
		if len(p) == 1 && p[0] == "observed_at" {
			c.skip = i
		}
	}
	c.rec = make([]string, len(s.Columns()))
	return c
}

// Add hashes one row.
func (c *ContentHash) Add(row parquet.Row) {
	clear(c.rec)
	for _, v := range row {
		i := v.Column()
		if i < 0 || i >= len(c.rec) || v.IsNull() {
			continue
		}
		switch v.Kind() {
		case parquet.Boolean:
			c.rec[i] = strconv.FormatBool(v.Boolean())
		case parquet.Int32:
			c.rec[i] = strconv.FormatInt(int64(v.Int32()), 10)
		case parquet.Int64:
			c.rec[i] = strconv.FormatInt(v.Int64(), 10)
		case parquet.Float:
			c.rec[i] = strconv.FormatFloat(float64(v.Float()), 'g', -1, 32)
		case parquet.Double:
			c.rec[i] = strconv.FormatFloat(v.Double(), 'g', -1, 64)
		default:
			c.rec[i] = string(v.ByteArray())
		}
	}
	rec := c.rec
	if c.skip >= 0 {
		rec = append(append(make([]string, 0, len(rec)-1), rec[:c.skip]...), rec[c.skip+1:]...)
	}
	c.w.Write(rec) // writes to a hash never fail
}

// Sum returns the hash, hex.
func (c *ContentHash) Sum() string {
	c.w.Flush()
	return hex.EncodeToString(c.h.Sum(nil))
}

// Column headers of the series files.
var (
	IndexColumns = []string{"gpu", "pricing", "group", "day", "usd_gpu_hour", "offers", "dropped", "method",
		"chain_link", "chained_matched", "chained_method"}
	SpreadsColumns = []string{"gpu", "pricing", "day", "hyperscaler", "specialist", "marketplace", "ratio", "premium_pct",
		"n_hyperscaler", "n_specialist", "n_marketplace", "method"}
)

// fcsv writes a number of the series files: rounded to 9 decimals (below any price's
// precision, above float noise such as 4.140000000000001), in plain notation.
func fcsv(v float64) string { return strconv.FormatFloat(analytics.Round(v, 9), 'f', -1, 64) }

func optcsv(v *float64) string {
	if v == nil {
		return ""
	}
	return fcsv(*v)
}

// buildSeries writes the day's index and spreads as CSV, computed as `gpuprice
// index` and `gpuprice spreads` compute them: from the day prices of every
// comparable series (the last daily close in force, withdrawn series ended),
// judged from the bars up to the end of the day. The index's chain link is the
// day's factor of the chained index (the geometric mean of the price relatives of
// the series priced on this day and the day before; empty when none is): the
// chained level from any anchor day is that day's usd_gpu_hour times the product
// of the links after it.
func buildSeries(ctx context.Context, src Source, tmp string, day time.Time) (builtFile, builtFile, sighting, error) {
	idx := builtFile{File: File{Kind: KindIndex, Format: "csv"}}
	spr := builtFile{File: File{Kind: KindSpreads, Format: "csv"}}
	var seen sighting
	from, to := day.Add(-store.Daily), day.Add(store.Daily)
	prices, err := query.DayPrices(ctx, src, query.Selection{}, from, to)
	if err != nil {
		return idx, spr, seen, fmt.Errorf("daily bars: %w", err)
	}
	for _, p := range prices {
		if !p.Day.Equal(day) {
			continue
		}
		if p.LastSeen.After(seen.last) {
			seen.last = p.LastSeen
		}
		if !p.LastSeen.Before(day) && p.LastSeen.Before(to) {
			seen.onDay = true
		}
	}

	// The index of the day before anchors the day's chained level there, so the
	// link is the ratio of the two levels.
	type line struct{ gpu, pricing, group string }
	before := map[line]float64{}
	var points []analytics.IndexPoint
	for _, p := range analytics.Index(prices) {
		if p.Day.Equal(day) {
			points = append(points, p)
		} else {
			before[line{p.GPU, p.Pricing, p.Group}] = p.Chained
		}
	}
	err = writeCSV(tmp, "index-*", &idx, IndexColumns, func(write func([]string) error) error {
		for _, p := range points {
			link := ""
			if b := before[line{p.GPU, p.Pricing, p.Group}]; p.Matched > 0 && b > 0 {
				link = fcsv(analytics.Round(p.Chained/b, 6))
			}
			if err := write([]string{p.GPU, p.Pricing, p.Group, DayString(p.Day), fcsv(p.Price), strconv.Itoa(p.Offers),
				strconv.Itoa(p.Dropped), p.Method, link, strconv.Itoa(p.Matched), p.ChainedMethod}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return idx, spr, seen, fmt.Errorf("index: %w", err)
	}
	err = writeCSV(tmp, "spreads-*", &spr, SpreadsColumns, func(write func([]string) error) error {
		for _, d := range analytics.Spreads(prices) {
			if !d.Day.Equal(day) {
				continue
			}
			if err := write([]string{d.GPU, d.Pricing, DayString(d.Day), optcsv(d.Hyperscaler), optcsv(d.Specialist),
				optcsv(d.Marketplace), optcsv(d.Ratio), optcsv(d.PremiumPct), strconv.Itoa(d.NHyperscaler),
				strconv.Itoa(d.NSpecialist), strconv.Itoa(d.NMarketplace), analytics.SpreadsVersion}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return idx, spr, seen, fmt.Errorf("spreads: %w", err)
	}
	return idx, spr, seen, nil
}

// sighting is when the prices in force on a day were seen: the latest sighting
// among them, and whether one was seen on the day itself.
type sighting struct {
	last  time.Time
	onDay bool
}

// collectionDays are the UTC days (Unix seconds) on which a live collection of src
// stored rows (RunLister; none when src cannot list its runs): a reparse of a
// recorded example observes nothing on the day it runs.
func collectionDays(ctx context.Context, src Source) (map[int64]bool, error) {
	out := map[int64]bool{}
	rl, ok := src.(RunLister)
	if !ok {
		return out, nil
	}
	runs, err := rl.Runs(ctx, "", 0)
	if err != nil {
		return nil, fmt.Errorf("publish: runs: %w", err)
	}
	for _, r := range runs {
		if r.RowsAccepted > 0 && r.Status != schemas.RunFailed && r.Status != schemas.RunStarted &&
			!strings.HasPrefix(r.RunID, recordedRunPrefix) {
			out[r.FinishedAt.UTC().Truncate(store.Daily).Unix()] = true
		}
	}
	return out, nil
}

// writeCSV writes a CSV file with a header and the records fill gives, counting them.
func writeCSV(tmp, pattern string, bf *builtFile, header []string, fill func(write func([]string) error) error) error {
	hf, err := newHashingFile(tmp, pattern)
	if err != nil {
		return err
	}
	w := csv.NewWriter(hf)
	err = w.Write(header)
	if err == nil {
		err = fill(func(rec []string) error {
			bf.Rows++
			// A spreadsheet opens these files too: a cell a formula could start is
			// guarded as every CSV writer of gpuprice guards it (numbers unchanged).
			return w.Write(textsafe.CSVRecord(rec))
		})
	}
	if err == nil {
		w.Flush()
		err = w.Error()
	}
	if cerr := hf.close(bf); err == nil {
		err = cerr
	}
	return err
}
