package ingest

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
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
	r := csv.NewReader(rc)
	r.FieldsPerRecord = -1
	r.ReuseRecord = false
	header, err := r.Read()
	if err != nil {
		return fmt.Errorf("ingest: csv: reading header: %w", err)
	}
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
	line := 1
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := r.Read()
		line++
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) && !errors.Is(pe.Err, csv.ErrBareQuote) && !errors.Is(pe.Err, csv.ErrQuote) {
				return fmt.Errorf("ingest: csv: %w", err)
			}
			scrapers.Reject(e, strings.Join(rec, ","), fmt.Sprintf("csv line %d: %v", line, err))
			continue
		}
		get := func(name string) string {
			if i, ok := col[name]; ok && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		o, perr := s.row(get)
		if perr != nil {
			raw, _ := json.Marshal(rec)
			scrapers.Reject(e, string(raw), fmt.Sprintf("csv line %d: %v", line, perr))
			continue
		}
		e.Emit(o)
	}
}

func (s *CSVSource) row(get func(string) string) (schemas.Observation, error) {
	var o schemas.Observation
	var err error
	if o.ObservedAt, err = parseTime(get("observed_at")); err != nil {
		return o, fmt.Errorf("observed_at: %w", err)
	}
	o.EffectiveAt = o.ObservedAt
	if v := get("effective_at"); v != "" {
		if o.EffectiveAt, err = parseTime(v); err != nil {
			return o, fmt.Errorf("effective_at: %w", err)
		}
	}
	o.Provider, o.SKU, o.Region, o.Zone, o.Pricing = get("provider"), get("sku"), get("region"), get("zone"), get("pricing")
	o.Tier, o.Interconnect = get("tier"), get("interconnect")
	if o.Tier != "" && !schemas.ValidTier(o.Tier) {
		return o, fmt.Errorf("tier %q is not hyperscaler, specialist or marketplace", o.Tier)
	}
	if o.Interconnect != "" && !schemas.ValidInterconnect(o.Interconnect) {
		return o, fmt.Errorf("interconnect %q is not known", o.Interconnect)
	}
	if o.GPUCount, err = schemas.ParseNumber(get("gpu_count")); err != nil {
		return o, fmt.Errorf("gpu_count: %w", err)
	}
	if v := get("gpu_memory_gb"); v != "" {
		if o.GPUMemoryGB, err = schemas.ParseNumber(v); err != nil {
			return o, fmt.Errorf("gpu_memory_gb: %w", err)
		}
	}
	o.GPUName = get("gpu_name")
	if g := get("gpu"); g != "" && g != schemas.UnknownGPU && s.Known != nil && s.Known(g) {
		o.GPU = g
	} else if o.GPUName == "" {
		o.GPUName = g
	}
	switch {
	case get("price_native") != "" && get("unit") != "" && get("currency") != "":
		if o.PriceNative, err = schemas.ParseNumber(get("price_native")); err != nil {
			return o, fmt.Errorf("price_native: %w", err)
		}
		o.Currency, o.Unit = get("currency"), get("unit")
	case get("price_usd_hour") != "":
		if o.PriceNative, err = schemas.ParseNumber(get("price_usd_hour")); err != nil {
			return o, fmt.Errorf("price_usd_hour: %w", err)
		}
		o.Currency, o.Unit = "USD", schemas.UnitHour
	case get("price_usd_gpu_hour") != "":
		if o.PriceNative, err = schemas.ParseNumber(get("price_usd_gpu_hour")); err != nil {
			return o, fmt.Errorf("price_usd_gpu_hour: %w", err)
		}
		o.Currency, o.Unit = "USD", schemas.UnitGPUHour
	default:
		return o, errors.New("no price")
	}
	// A row exported by gpuprice carries the rate it was converted at: importing it
	// anywhere reproduces the same USD price, whether or not that store has the day's
	// ECB rate (Normalize prefers a carried rate).
	if v := get("fx_rate"); v != "" && !strings.EqualFold(o.Currency, "USD") {
		if o.FXRate, err = schemas.ParseNumber(v); err != nil || o.FXRate <= 0 || math.IsInf(o.FXRate, 0) {
			return o, fmt.Errorf("fx_rate %q is not a positive number", v)
		}
	}
	o.PriceScope, o.PriceBasis = get("price_scope"), get("price_basis")
	if !schemas.ValidScope(o.PriceScope) {
		return o, fmt.Errorf("price_scope %q is not instance or gpu_only", o.PriceScope)
	}
	if !schemas.ValidBasis(o.PriceBasis) {
		return o, fmt.Errorf("price_basis %q is not listed, derived or floor", o.PriceBasis)
	}
	o.SourceURL = s.Origin
	o.Attrs = map[string]string{}
	if v := get("source_kind"); v != "" {
		o.Attrs["original_source_kind"] = v
	}
	if v := get("source_url"); v != "" {
		o.Attrs["original_source_url"] = v
	}
	return o, nil
}

var timeLayouts = []string{time.RFC3339Nano, "2006-01-02 15:04:05Z07:00", "2006-01-02 15:04:05", "2006-01-02T15:04:05", "2006-01-02"}

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
