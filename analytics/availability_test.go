package analytics

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

func stockAt(sku string, at time.Time, v float64) schemas.Signal {
	return schemas.Signal{Provider: "runpod", SKU: sku, GPU: "H100-SXM-80GB", Kind: schemas.SignalStock,
		EffectiveAt: at, Value: v, Label: "x"}
}

// TestStockAvailability: one series observed hourly with a gap, checked by hand.
func TestStockAvailability(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	h := func(n float64) time.Time { return t0.Add(time.Duration(n * float64(time.Hour))) }
	sigs := []schemas.Signal{
		stockAt("a", h(-2), 8), // in force when the window begins (00:00): in stock 00:00–01:00
		stockAt("a", h(1), 0),  // out 01:00–03:00
		stockAt("a", h(3), 0),  // out 03:00–06:00 (StockHold: the next comes at 10:00)
		stockAt("a", h(10), 4), // in 10:00–11:00
		stockAt("a", h(11), 0), // out 11:00–12:00 (the window ends)
	}
	got := StockAvailability(sigs, t0, h(12))
	if len(got) != 1 {
		t.Fatalf("%d series, want 1", len(got))
	}
	a := got[0]
	// Observed: 1 + 2 + 3 + 1 + 1 = 8 h; in stock 2 h; outages 01:00–06:00 (5 h)
	// and 11:00–12:00; 06:00–10:00 not observed.
	if a.Observed != 8*time.Hour || a.InStock != 2*time.Hour || a.InStockShare != 0.25 {
		t.Errorf("observed %v in stock %v share %v, want 8h 2h 0.25", a.Observed, a.InStock, a.InStockShare)
	}
	if a.Outages != 2 || a.LongestOutage != 5*time.Hour || !a.OutageFrom.Equal(h(1)) || !a.OutageTo.Equal(h(6)) {
		t.Errorf("outages %d longest %v %v–%v, want 2, 5h 01:00–06:00", a.Outages, a.LongestOutage, a.OutageFrom,
			a.OutageTo)
	}
	if a.Signals != 5 || a.Last != 0 || !a.LastAt.Equal(h(11)) || a.Unit != "gpus" {
		t.Errorf("signals %d last %v at %v unit %s", a.Signals, a.Last, a.LastAt, a.Unit)
	}
	// A window after every signal's hold: nothing observed, the series left out.
	if got := StockAvailability(sigs, h(20), h(30)); len(got) != 0 {
		t.Errorf("window after the signals: %+v", got)
	}
}

// TestGroupAvailability: a GPU is in stock while any of its offers is.
func TestGroupAvailability(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	h := func(n float64) time.Time { return t0.Add(time.Duration(n * float64(time.Hour))) }
	sigs := []schemas.Signal{
		stockAt("a", h(0), 2), stockAt("a", h(2), 0), stockAt("a", h(4), 0), // a: in 0–2, out 2–7
		stockAt("b", h(1), 0), stockAt("b", h(3), 3), stockAt("b", h(5), 0), // b: out 1–3, in 3–5, out 5–8
	}
	got := GroupAvailability(sigs, t0, h(10))
	if len(got) != 1 {
		t.Fatalf("%d groups, want 1: %+v", len(got), got)
	}
	g := got[0]
	// Observed 0–8 h; in stock 0–2 (a) and 3–5 (b); out 2–3 and 5–8.
	if g.Observed != 8*time.Hour || g.InStock != 4*time.Hour || g.InStockShare != 0.5 {
		t.Errorf("observed %v in stock %v share %v, want 8h 4h 0.5", g.Observed, g.InStock, g.InStockShare)
	}
	if g.Outages != 2 || g.LongestOutage != 3*time.Hour || !g.OutageFrom.Equal(h(5)) {
		t.Errorf("outages %d longest %v from %v, want 2, 3h from 05:00", g.Outages, g.LongestOutage, g.OutageFrom)
	}
	if g.Series != 2 || g.Signals != 6 || g.Last != 0 || g.SKU != "" {
		t.Errorf("series %d signals %d last %v sku %q", g.Series, g.Signals, g.Last, g.SKU)
	}
}

func TestGPUsAvailable(t *testing.T) {
	for _, tc := range []struct {
		unit, count string
		per         int
		v           float64
		want        float64
		known       bool
	}{
		{"", "", 0, 8, 8, true},
		{"gpus", "", 0, 3, 3, true},
		{"instances", "8", 0, 3, 24, true},
		{"instances", "", 8, 2, 16, true},
		{"instances", "", 0, 2, 0, false},
		{"regions", "", 0, 2, 0, false},
	} {
		s := schemas.Signal{Kind: schemas.SignalStock, Value: tc.v, Attrs: map[string]string{"unit": tc.unit,
			"gpu_count": tc.count}}
		got, known := GPUsAvailable(s, tc.per)
		if got != tc.want || known != tc.known {
			t.Errorf("%+v: %v %v, want %v %v", tc, got, known, tc.want, tc.known)
		}
	}
}

// TestStockTimeline: two offers of one GPU sampled hourly: the sum of those holding
// at each hour, nil where none holds.
func TestStockTimeline(t *testing.T) {
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	h := func(n float64) time.Time { return t0.Add(time.Duration(n * float64(time.Hour))) }
	sigs := []schemas.Signal{
		stockAt("a", h(0), 2), stockAt("a", h(2), 0), // a: 2 over 0–2, 0 over 2–5
		stockAt("b", h(1), 3), // b: 3 over 1–4
	}
	lines := StockTimeline(sigs, t0, h(7), time.Hour)
	if len(lines) != 1 || lines[0].Unit != "gpus" || len(lines[0].Points) != 7 {
		t.Fatalf("lines %+v", lines)
	}
	var got []string
	for _, p := range lines[0].Points {
		if p.Value == nil {
			got = append(got, "-")
		} else {
			got = append(got, strconv.FormatFloat(*p.Value, 'f', -1, 64))
		}
	}
	if strings.Join(got, " ") != "2 5 3 3 0 - -" {
		t.Errorf("points %v, want 2 5 3 3 0 - -", got)
	}
	if n := len(StockTimeline(sigs, t0, h(24*365), time.Minute)[0].Points); n > MaxStockPoints {
		t.Errorf("%d points, at most %d", n, MaxStockPoints)
	}
}
