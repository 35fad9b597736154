package ingest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/schemas/textsafe"
	"github.com/gpuprice/gpuprice/scrapers"
)

// CSVSource reads observations from a CSV with the header `gpuprice prices --format csv`
// writes (observed_at, provider, tier, sku, gpu, gpu_count, region, zone, pricing,
// price_usd_hour, price_usd_gpu_hour, source_kind, and optionally effective_at,
// gpu_name, gpu_memory_gb, currency, price_native, unit, fx_rate, interconnect,
// source_url). Rows go through the same normalisation and gates as collected ones;
// a row that cannot be read is quarantined with the reason.
type CSVSource struct {
	Open   func() (io.ReadCloser, error)
	Origin string                // where the rows came from, e.g. file:///abs/path.csv
	Known  func(gpu string) bool // whether a gpu id is in the catalog
}

// ErrCSVHeader is returned for a CSV whose header lacks required columns.
var ErrCSVHeader = errors.New("ingest: csv header")

// Collect implements scrapers.Source.
func (s *CSVSource) Collect(ctx context.Context, e scrapers.Emitter) error {
	rc, err := s.Open()
	if err != nil {
		return fmt.Errorf("ingest: csv: %w", err)
	}
	defer rc.Close()
	r := newCSVRecords(rc)
	header, _, err := r.Read()
	if err != nil {
		return fmt.Errorf("ingest: csv: reading header: %w", err)
	}
	header = append([]string(nil), header...)
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	for _, need := range []string{"observed_at", "provider", "sku", "pricing", "gpu_count"} {
		if _, ok := col[need]; !ok {
			return fmt.Errorf("%w: missing column %q", ErrCSVHeader, need)
		}
	}
	_, hasNative := col["price_native"]
	_, hasHour := col["price_usd_hour"]
	_, hasGPUHour := col["price_usd_gpu_hour"]
	if !hasNative && !hasHour && !hasGPUHour {
		return fmt.Errorf("%w: no price column (price_native, price_usd_hour or price_usd_gpu_hour)", ErrCSVHeader)
	}
	rd := newCSVRow(col)
	for i := 1; ; i++ {
		if i&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		rec, line, err := r.Read()
		if errors.Is(err, io.EOF) {
			return ctx.Err()
		}
		if err != nil {
			var bad *csvBadRecord
			if !errors.As(err, &bad) {
				return fmt.Errorf("ingest: csv: line %d: %w", line, err)
			}
			// One broken record is quarantined with its line number; reading goes on.
			scrapers.Reject(e, bad.Raw, bad.Error())
			continue
		}
		rd.rec = rec
		o, perr := s.row(rd)
		if perr != nil {
			raw, _ := json.Marshal(rec)
			scrapers.Reject(e, string(raw), fmt.Sprintf("csv line %d: %v", line, perr))
			continue
		}
		e.Emit(o)
	}
}

// The columns CSVSource reads, by position in csvRow.idx.
const (
	cObservedAt = iota
	cEffectiveAt
	cProvider
	cSKU
	cRegion
	cZone
	cPricing
	cTier
	cInterconnect
	cGPUCount
	cGPUMemoryGB
	cGPUName
	cGPU
	cPriceNative
	cUnit
	cCurrency
	cPriceUSDHour
	cPriceUSDGPUHour
	cSourceKind
	cSourceURL
	cFXRate
	cPriceScope
	cPriceBasis
	cOrigin
	nColumns
)

var csvColumns = [nColumns]string{"observed_at", "effective_at", "provider", "sku", "region", "zone",
	"pricing", "tier", "interconnect", "gpu_count", "gpu_memory_gb", "gpu_name", "gpu", "price_native",
	"unit", "currency", "price_usd_hour", "price_usd_gpu_hour", "source_kind", "source_url", "fx_rate", "price_scope",
	"price_basis", "origin"}

// csvRow reads the fields of one record by column, with what repeats from row to
// row kept: the last times parsed and the last attrs made (rows of one export share
// them, and parsing or allocating them again is most of a row's cost).
type csvRow struct {
	idx [nColumns]int // position of each column in the record, -1 when absent
	rec []string

	times [2]struct {
		text string
		t    time.Time
	} // the last observed_at and effective_at
	attrs    map[string]string // the last attrs made, shared by rows with the same
	known    map[string]bool   // CSVSource.Known's answer per gpu id seen
	kind     string
	srcURL   string
	recorded bool
}

func newCSVRow(col map[string]int) *csvRow {
	r := &csvRow{}
	for i, name := range csvColumns {
		r.idx[i] = -1
		if j, ok := col[name]; ok {
			r.idx[i] = j
		}
	}
	return r
}

// get is the trimmed field of column c, "" when the record lacks it; a cell the
// formula guard of gpuprice's CSV prefixed ('=…) reads as the value (textsafe.UnCSV).
func (r *csvRow) get(c int) string {
	if i := r.idx[c]; i >= 0 && i < len(r.rec) {
		// The reader reuses its record, not the strings in it: keeping them is safe.
		return textsafe.UnCSV(strings.TrimSpace(r.rec[i]))
	}
	return ""
}

// time parses column c (cObservedAt or cEffectiveAt), reusing the last result for
// the same text.
func (r *csvRow) time(c int, v string) (time.Time, error) {
	last := &r.times[c]
	if last.text == v && v != "" {
		return last.t, nil
	}
	t, err := parseTime(v)
	if err != nil {
		return t, err
	}
	last.text, last.t = v, t
	return t, nil
}

// attrsFor returns the attrs of a row with these original source kind and URL: the
// last map made when they are the same (rows share it; nothing downstream writes to
// an observation's attrs).
func (r *csvRow) attrsFor(kind, srcURL, origin string) map[string]string {
	recorded := origin == schemas.OriginRecorded // an export of a recorded example stays marked
	if r.attrs != nil && kind == r.kind && srcURL == r.srcURL && recorded == r.recorded {
		return r.attrs
	}
	a := make(map[string]string, 3)
	if recorded {
		a[schemas.AttrOrigin] = schemas.OriginRecorded
	}
	if kind != "" {
		a["original_source_kind"] = kind
	}
	if srcURL != "" {
		a["original_source_url"] = srcURL
	}
	r.attrs, r.kind, r.srcURL, r.recorded = a, kind, srcURL, recorded
	return a
}

// parseNumber is schemas.ParseNumber with a fast path for plain decimals
// ("12.5"), which is what exports write and what it would read the same.
func parseNumber(s string) (float64, error) {
	plain := s != "" && s[0] != '.' && s[len(s)-1] != '.'
	dots := 0
	for i := 0; plain && i < len(s); i++ {
		switch c := s[i]; {
		case c == '.':
			dots++
			plain = dots == 1
		case c < '0' || c > '9':
			plain = false
		}
	}
	if plain {
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			return v, nil
		}
	}
	return schemas.ParseNumber(s)
}

func (s *CSVSource) row(r *csvRow) (schemas.Observation, error) {
	var o schemas.Observation
	var err error
	if o.ObservedAt, err = r.time(cObservedAt, r.get(cObservedAt)); err != nil {
		return o, fmt.Errorf("observed_at: %w", err)
	}
	o.EffectiveAt = o.ObservedAt
	if v := r.get(cEffectiveAt); v != "" {
		if o.EffectiveAt, err = r.time(cEffectiveAt, v); err != nil {
			return o, fmt.Errorf("effective_at: %w", err)
		}
	}
	o.Provider, o.SKU, o.Region, o.Zone, o.Pricing = r.get(
		cProvider,
	), r.get(
		cSKU,
	), r.get(
		cRegion,
	), r.get(
		cZone,
	), r.get(
		cPricing,
	)
	o.Tier, o.Interconnect = r.get(cTier), r.get(cInterconnect)
	if o.Tier != "" && !schemas.ValidTier(o.Tier) {
		return o, fmt.Errorf("tier %q is not hyperscaler, specialist or marketplace", o.Tier)
	}
	if o.Interconnect != "" && !schemas.ValidInterconnect(o.Interconnect) {
		return o, fmt.Errorf("interconnect %q is not known", o.Interconnect)
	}
	if o.GPUCount, err = parseNumber(r.get(cGPUCount)); err != nil {
		return o, fmt.Errorf("gpu_count: %w", err)
	}
	if v := r.get(cGPUMemoryGB); v != "" {
		if o.GPUMemoryGB, err = parseNumber(v); err != nil {
			return o, fmt.Errorf("gpu_memory_gb: %w", err)
		}
	}
	o.GPUName = r.get(cGPUName)
	if g := r.get(cGPU); g != "" && g != schemas.UnknownGPU && s.known(r, g) {
		o.GPU = g
	} else if o.GPUName == "" {
		o.GPUName = g
	}
	native, unit, currency := r.get(cPriceNative), r.get(cUnit), r.get(cCurrency)
	switch {
	case native != "" && unit != "" && currency != "":
		if o.PriceNative, err = parseNumber(native); err != nil {
			return o, fmt.Errorf("price_native: %w", err)
		}
		o.Currency, o.Unit = currency, unit
	case r.get(cPriceUSDHour) != "":
		if o.PriceNative, err = parseNumber(r.get(cPriceUSDHour)); err != nil {
			return o, fmt.Errorf("price_usd_hour: %w", err)
		}
		o.Currency, o.Unit = "USD", schemas.UnitHour
	case r.get(cPriceUSDGPUHour) != "":
		if o.PriceNative, err = parseNumber(r.get(cPriceUSDGPUHour)); err != nil {
			return o, fmt.Errorf("price_usd_gpu_hour: %w", err)
		}
		o.Currency, o.Unit = "USD", schemas.UnitGPUHour
	default:
		return o, errors.New("no price")
	}
	// A row exported by gpuprice carries the rate it was converted at: importing it
	// anywhere reproduces the same USD price, whether or not that store has the day's
	// ECB rate (Normalize prefers a carried rate).
	if v := r.get(cFXRate); v != "" && !strings.EqualFold(o.Currency, "USD") {
		if o.FXRate, err = parseNumber(v); err != nil || o.FXRate <= 0 || math.IsInf(o.FXRate, 0) {
			return o, fmt.Errorf("fx_rate %q is not a positive number", v)
		}
	}
	o.PriceScope, o.PriceBasis = r.get(cPriceScope), r.get(cPriceBasis)
	if !schemas.ValidScope(o.PriceScope) {
		return o, fmt.Errorf("price_scope %q is not instance or gpu_only", o.PriceScope)
	}
	if !schemas.ValidBasis(o.PriceBasis) {
		return o, fmt.Errorf("price_basis %q is not listed, derived or floor", o.PriceBasis)
	}
	o.SourceURL = s.Origin
	o.Attrs = r.attrsFor(r.get(cSourceKind), r.get(cSourceURL), r.get(cOrigin))
	return o, nil
}

// known is s.Known(g), asked once per distinct id (a file holds a few dozen GPUs
// over millions of rows; at most maxKnownCache ids are kept).
func (s *CSVSource) known(r *csvRow, g string) bool {
	if s.Known == nil {
		return false
	}
	if k, ok := r.known[g]; ok {
		return k
	}
	k := s.Known(g)
	if r.known == nil {
		r.known = map[string]bool{}
	}
	if len(r.known) < maxKnownCache {
		r.known[strings.Clone(g)] = k // g is a slice of the line: keep only the id
	}
	return k
}

const maxKnownCache = 10_000

var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05",
	"2006-01-02T15:04:05",
	"2006-01-02",
}

func parseTime(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, errors.New("empty")
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, v); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time (use RFC 3339, e.g. 2026-11-01T12:00:00Z)", v)
}
