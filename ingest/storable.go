package ingest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// What every store can hold. ClickHouse's DateTime is seconds since the epoch in a
// UInt32 (1970-01-01 to 2106-02-07); DuckDB binds only valid UTF-8 into VARCHAR.
// Field lengths are capped so that one hostile row cannot take a store's memory.
var (
	// MinStorableTime and MaxStorableTime bound every stored time (DateTime's range).
	MinStorableTime = time.Unix(0, 0).UTC()
	MaxStorableTime = time.Unix(1<<32-1, 0).UTC()
)

const (
	// MaxFutureSkew is how far past now a row's time may lie: a price dated later is
	// a clock or parse error and would become its series' "latest" price for good.
	MaxFutureSkew = 24 * time.Hour
	// MaxFieldBytes caps one text field of an observation (source_url included).
	MaxFieldBytes = 4 << 10
	// MaxAttrsBytes caps the attributes of an observation, keys and values together.
	MaxAttrsBytes = 64 << 10
	// MaxRawBytes caps the raw text kept with a quarantined row (the rest is cut, with
	// a note of how much).
	MaxRawBytes = 64 << 10
)

// Storable reports why o cannot be stored by every backend, nil when it can: its
// times outside DateTime's range or more than MaxFutureSkew past now, text that is not
// valid UTF-8, a field longer than MaxFieldBytes or attributes longer than
// MaxAttrsBytes. now zero skips the future check.
func Storable(o schemas.Observation, now time.Time) error {
	for _, t := range []struct {
		name string
		at   time.Time
	}{{"observed_at", o.ObservedAt}, {"effective_at", o.EffectiveAt}} {
		if t.at.Before(MinStorableTime) || t.at.After(MaxStorableTime) {
			return fmt.Errorf(
				"%s %s is outside the storable range 1970-01-01..2106-02-07",
				t.name,
				t.at.UTC().Format(time.RFC3339),
			)
		}
		if !now.IsZero() && t.at.After(now.Add(MaxFutureSkew)) {
			return fmt.Errorf("%s %s is more than a day in the future", t.name, t.at.UTC().Format(time.RFC3339))
		}
	}
	if plainFields(&o) {
		return nil
	}
	fields := []struct{ name, v string }{
		{"provider", o.Provider}, {"tier", o.Tier}, {"sku", o.SKU}, {"region", o.Region}, {"zone", o.Zone},
		{"gpu", o.GPU}, {"gpu_name", o.GPUName}, {"pricing", o.Pricing}, {"currency", o.Currency},
		{"unit", o.Unit}, {"interconnect", o.Interconnect}, {"source_kind", o.SourceKind},
		{"source_url", o.SourceURL}, {"run_id", o.RunID}, {"price_scope", o.PriceScope}, {"price_basis", o.PriceBasis},
	}
	for _, f := range fields {
		if err := storableText(f.name, f.v, MaxFieldBytes); err != nil {
			return err
		}
	}
	n := 0
	for k, v := range o.Attrs {
		if err := storableText("attribute name", k, MaxFieldBytes); err != nil {
			return err
		}
		if err := storableText("attribute "+k, v, MaxAttrsBytes); err != nil {
			return err
		}
		n += len(k) + len(v)
	}
	if n > MaxAttrsBytes {
		return fmt.Errorf("attributes take %d bytes, more than %d", n, MaxAttrsBytes)
	}
	return nil
}

// plainFields reports whether every text field and attribute of o is ASCII
// without a NUL and within its length bounds: what nearly every row is, checked
// in one pass without building the error each check could give (Storable finds
// which field fails, and why, when this says no).
func plainFields(o *schemas.Observation) bool {
	for _, v := range [...]string{o.Provider, o.Tier, o.SKU, o.Region, o.Zone, o.GPU, o.GPUName, o.Pricing,
		o.Currency, o.Unit, o.Interconnect, o.SourceKind, o.SourceURL, o.RunID, o.PriceScope, o.PriceBasis} {
		if len(v) > MaxFieldBytes || !plainText(v) {
			return false
		}
	}
	n := 0
	for k, v := range o.Attrs {
		if len(k) > MaxFieldBytes || len(v) > MaxAttrsBytes || !plainText(k) || !plainText(v) {
			return false
		}
		n += len(k) + len(v)
	}
	return n <= MaxAttrsBytes
}

// plainText reports whether s is ASCII without a NUL byte, eight bytes at a time
// (the compiler makes one load of the eight byte loads).
func plainText(s string) bool {
	const high, ones = 0x8080808080808080, 0x0101010101010101
	for len(s) >= 8 {
		x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		// No byte has its high bit set, and none is zero (with no high bit set,
		// (x-ones)&^x&high marks exactly the zero bytes).
		if x&high != 0 || (x-ones)&^x&high != 0 {
			return false
		}
		s = s[8:]
	}
	for i := 0; i < len(s); i++ {
		if s[i] == 0 || s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

func storableText(name, v string, max int) error {
	if len(v) > max {
		return fmt.Errorf("%s is %d bytes long, more than %d", name, len(v), max)
	}
	if !utf8.ValidString(v) {
		return fmt.Errorf("%s is not valid UTF-8", name)
	}
	if strings.IndexByte(v, 0) >= 0 {
		return fmt.Errorf("%s holds a NUL byte", name)
	}
	return nil
}

// storableQuarantine makes q storable by every backend: reason and raw text in valid
// UTF-8 (invalid bytes replaced), raw cut at MaxRawBytes with a note of the length.
func storableQuarantine(q schemas.Quarantined) schemas.Quarantined {
	q.Reason = clipText(q.Reason, MaxFieldBytes)
	q.Raw = clipText(q.Raw, MaxRawBytes)
	q.Source = clipText(q.Source, MaxFieldBytes)
	return q
}

// storableRun makes r's text storable by every backend (an error message quoting a
// provider's answer may hold invalid UTF-8, which DuckDB refuses): valid UTF-8, no
// NUL, cut at MaxRawBytes (error) and MaxFieldBytes (the rest).
func storableRun(r schemas.Run) schemas.Run {
	r.Error = clipText(r.Error, MaxRawBytes)
	r.RunID = clipText(r.RunID, MaxFieldBytes)
	r.Source = clipText(r.Source, MaxFieldBytes)
	r.Status = clipText(r.Status, MaxFieldBytes)
	return r
}

func clipText(s string, max int) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "\uFFFD")
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + fmt.Sprintf("… [%d bytes cut]", len(s)-cut)
}

// screenStorable splits rows into those Storable at now and the others, as bad rows
// with the reason.
func screenStorable(rows []schemas.Observation, now time.Time) (ok []schemas.Observation, bad []badRow) {
	ok = make([]schemas.Observation, 0, len(rows))
	for _, o := range rows {
		if err := Storable(o, now); err != nil {
			bad = append(bad, badRow{Row: o, Reason: "not storable: " + err.Error(), Err: err})
			continue
		}
		ok = append(ok, o)
	}
	return ok, bad
}

// badRow is a row a store refused on its own (not the store being away), with why.
type badRow struct {
	Row    schemas.Observation
	Reason string
	Err    error
}

// split is what writeSplit did with a batch.
type split struct {
	stored int
	bad    []badRow
	rest   []schemas.Observation // not written: the store became unavailable (err)
	err    error                 // the unavailability met, nil when none
}

// writeSplit writes rows to w. When a write fails for a reason other than the store
// being unavailable, the batch is split in halves until the rows at fault are found
// alone: they are returned as bad with the store's error, the others are written.
// When the store is unavailable (or ctx ends), the rows not yet written are returned
// in rest with that error.
func writeSplit(ctx context.Context, w store.Writer, rows []schemas.Observation) split {
	var s split
	s.write(ctx, w, rows)
	return s
}

func (s *split) write(ctx context.Context, w store.Writer, rows []schemas.Observation) {
	if len(rows) == 0 {
		return
	}
	if s.err != nil {
		s.rest = append(s.rest, rows...)
		return
	}
	err := w.WriteObservations(ctx, rows)
	switch {
	case err == nil:
		s.stored += len(rows)
		return
	case errors.Is(err, store.ErrUnavailable) || ctx.Err() != nil:
		s.err = err
		s.rest = append(s.rest, rows...)
		return
	case len(rows) == 1:
		s.bad = append(s.bad, badRow{Row: rows[0], Reason: "store refused the row: " + err.Error(), Err: err})
		return
	}
	mid := len(rows) / 2
	s.write(ctx, w, rows[:mid])
	s.write(ctx, w, rows[mid:])
}
