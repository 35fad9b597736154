// Package storetest is the conformance suite every store backend runs with the same
// assertions: migrations, round trips field for field, duplicate-safe reads, Latest's
// order, every Filter field, hostile filter values, runs, quarantine and Close.
//
// A backend's test calls Run with a function that opens a fresh, empty store (a new
// file, a new database) and arranges its own cleanup of the storage; Run migrates it
// and closes it. The figures a backend computes itself (volatility, spreads, the
// market at a time) are checked against the analytics' reference functions by
// analytics/figurestest, which a backend's test runs beside Run: this package imports
// nothing above the stores.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// Run runs the conformance suite. open must return a new, empty, unmigrated store
// each time it is called.
func Run(t *testing.T, open func(t *testing.T) store.Store) {
	t.Helper()
	s := &suite{open: open}
	t.Run("MigrateTwice", s.migrateTwice)
	t.Run("EmptyStore", s.emptyStore)
	t.Run("RoundTrip", s.roundTrip)
	t.Run("DuplicateWrites", s.duplicateWrites)
	t.Run("LastWriteWins", s.lastWriteWins)
	t.Run("OverlappingRewrite", s.overlappingRewrite)
	t.Run("Latest", s.latest)
	t.Run("Filters", s.filters)
	t.Run("HostileFilters", s.hostileFilters)
	t.Run("HostileValuesRoundTrip", s.hostileValues)
	t.Run("EpochRoundTrip", s.epochRoundTrip)
	t.Run("Runs", s.runs)
	t.Run("StartedRuns", s.startedRuns)
	t.Run("Quarantine", s.quarantine)
	t.Run("LargeBatch", s.largeBatch)
	t.Run("Each", s.each)
	t.Run("EachStopsAtError", s.eachStops)
	t.Run("FXRates", s.fxRates)
	t.Run("Rollup", s.rollup)
	t.Run("RollupIncremental", s.rollupIncremental)
	t.Run("RollupLastObserved", s.rollupLastObserved)
	t.Run("RollupFolded", s.rollupFolded)
	t.Run("RecordedSeries", s.recordedSeries)
	t.Run("BadLimits", s.badLimits)
	t.Run("AlertEpisodes", s.alertEpisodes)
	t.Run("Signals", s.signals)
	t.Run("Lease", s.lease)
	t.Run("Close", s.close)
}

type suite struct {
	open func(t *testing.T) store.Store
}

// fresh opens a new store, migrates it and closes it at cleanup.
func (s *suite) fresh(t *testing.T) store.Store {
	t.Helper()
	st := s.open(t)
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	if _, err := st.Migrate(ctx(t)); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return st
}

func ctx(t *testing.T) context.Context { return t.Context() }

// T0 is the base time of the suite's observations: the last hour of February 2025,
// so the data spans a month boundary (and a ClickHouse partition boundary).
var T0 = time.Date(2025, 2, 28, 23, 0, 0, 0, time.UTC)

// Observations is the suite's data set: eleven series from nine providers. Some times
// carry nanoseconds or a non-UTC zone; stores keep whole seconds in UTC. Prices per
// GPU-hour contain ties that Latest must break by provider, sku, region, zone, pricing.
func Observations() []schemas.Observation {
	pst := time.FixedZone("PST", -8*3600)
	cet := time.FixedZone("CET", 3600)
	awsOD := func(at time.Time, usdHour float64) schemas.Observation {
		return schemas.Observation{
			ObservedAt: at, EffectiveAt: at, Provider: "aws", Tier: schemas.TierHyperscaler,
			SKU: "p5.48xlarge", Region: "us-east-1", GPU: "H100-SXM-80GB", GPUName: "NVIDIA H100",
			GPUCount: 8, GPUMemoryGB: 80, Pricing: schemas.OnDemand, PriceUSDHour: usdHour,
			PriceUSDGPUHour: usdHour / 8, Currency: "USD", PriceNative: usdHour, Unit: schemas.UnitHour,
			FXRate: 1, Interconnect: schemas.InterconnectEFA, SourceKind: schemas.SourceAPI,
			SourceURL: "https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/AmazonEC2/current/us-east-1/index.json",
			RunID:     "run-2025-02-28T23", Attrs: map[string]string{"vcpu": "192", "memory_gib": "2048"},
			PriceScope: schemas.ScopeInstance, PriceBasis: schemas.BasisListed,
		}
	}
	awsSpot := func(effective time.Time, usdHour float64) schemas.Observation {
		o := awsOD(effective, usdHour)
		o.ObservedAt = T0.Add(35 * time.Minute)
		o.Zone = "us-east-1a"
		o.Pricing = schemas.Spot
		o.SourceURL = "https://ec2.us-east-1.amazonaws.com/?Action=DescribeSpotPriceHistory"
		o.Attrs = map[string]string{"product_description": "Linux/UNIX"}
		return o
	}
	awsRes := awsOD(T0.Add(2*time.Hour), 55.04)
	awsRes.Pricing = schemas.Reserved1Y
	awsRes.Unit = schemas.UnitTerm
	awsRes.PriceNative = 482150.4
	awsRes.Attrs = map[string]string{"offering_class": "standard", "purchase_option": "No Upfront"}

	lambda := func(sku, region, gpu, name string, count, mem, gpuHour float64) schemas.Observation {
		at := T0.Add(time.Hour + 123456789*time.Nanosecond).In(pst)
		return schemas.Observation{
			ObservedAt: at, EffectiveAt: at, Provider: "lambda", Tier: schemas.TierSpecialist,
			SKU: sku, Region: region, GPU: gpu, GPUName: name, GPUCount: count, GPUMemoryGB: mem,
			Pricing: schemas.OnDemand, PriceUSDHour: gpuHour * count, PriceUSDGPUHour: gpuHour,
			Currency: "USD", PriceNative: gpuHour * count, Unit: schemas.UnitHour, FXRate: 1,
			Interconnect: schemas.InterconnectInfiniband, SourceKind: schemas.SourceAPI,
			SourceURL: "https://cloud.lambdalabs.com/api/v1/instance-types", RunID: "run-2025-03-01T00",
		}
	}
	return []schemas.Observation{
		// aws on-demand: two points across the month boundary; the newer is cheaper.
		awsOD(T0, 98.32),
		awsOD(T0.Add(48*time.Hour), 55.04),
		// aws spot history: effective_at from the provider, observed later.
		awsSpot(T0.Add(10*time.Minute), 31.46),
		awsSpot(T0.Add(20*time.Minute), 30.12),
		awsSpot(T0.Add(30*time.Minute), 33.01),
		// aws reserved: same price per GPU-hour as the newest on-demand point (a tie).
		awsRes,
		{
			ObservedAt: T0.Add(time.Hour).In(cet), EffectiveAt: T0.Add(time.Hour).In(cet),
			Provider: "azure", Tier: schemas.TierHyperscaler, SKU: "Standard_ND96isr_H100_v5",
			Region: "eastus", GPU: "H100-SXM-80GB", GPUName: "H100", GPUCount: 8, GPUMemoryGB: 80,
			Pricing: schemas.OnDemand, PriceUSDHour: 55.04, PriceUSDGPUHour: 6.88, Currency: "USD",
			PriceNative: 55.04, Unit: schemas.UnitHour, FXRate: 1, Interconnect: schemas.InterconnectInfiniband,
			SourceKind: schemas.SourceAPI, SourceURL: "https://prices.azure.com/api/retail/prices",
			RunID: "run-2025-03-01T00", Attrs: map[string]string{"meter": "ND96isr H100 v5"},
		},
		{
			ObservedAt: T0.Add(time.Hour), EffectiveAt: T0.Add(time.Hour), Provider: "gcp",
			Tier: schemas.TierHyperscaler, SKU: "a3-highgpu-8g", Region: "us-central1",
			GPU: "H100-SXM-80GB", GPUName: "nvidia-h100-80gb", GPUCount: 8, GPUMemoryGB: 80,
			Pricing: schemas.OnDemand, PriceUSDHour: 88.25, PriceUSDGPUHour: 11.03125, Currency: "USD",
			PriceNative: 88.25, Unit: schemas.UnitHour, FXRate: 1, Interconnect: schemas.InterconnectRoCE,
			SourceKind: schemas.SourceAPI, SourceURL: "https://cloudbilling.googleapis.com/v1/services/6F81-5844-456A/skus",
			RunID: "run-2025-03-01T00", PriceScope: schemas.ScopeGPUOnly, PriceBasis: schemas.BasisListed,
		},
		lambda("gpu_8x_h100_sxm5", "us-south-1", "H100-SXM-80GB", "H100 (80 GB SXM5)", 8, 80, 2.99),
		// Two lambda series at the same price: the tie breaks on region.
		lambda("gpu_1x_a100_sxm4", "us-west-2", "A100-SXM4-40GB", "A100 (40 GB SXM4)", 1, 40, 1.29),
		lambda("gpu_1x_a100_sxm4", "us-east-1", "A100-SXM4-40GB", "A100 (40 GB SXM4)", 1, 40, 1.29),
		{
			ObservedAt: T0.Add(90 * time.Minute), EffectiveAt: T0.Add(90 * time.Minute), Provider: "runpod",
			Tier: schemas.TierMarketplace, SKU: "NVIDIA H100 80GB HBM3", Region: "", Zone: "",
			GPU: "H100-SXM-80GB", GPUName: "H100 SXM", GPUCount: 1, GPUMemoryGB: 80,
			Pricing: schemas.Spot, PriceUSDHour: 1.75, PriceUSDGPUHour: 1.75, Currency: "USD",
			PriceNative: 1.75, Unit: schemas.UnitGPUHour, FXRate: 1, Interconnect: schemas.InterconnectEthernet,
			SourceKind: schemas.SourceAPI, SourceURL: "https://api.runpod.io/graphql", RunID: "run-2025-03-01T00",
			Attrs: map[string]string{"cloud": "COMMUNITY"},
		},
		{
			ObservedAt: T0.Add(time.Hour), EffectiveAt: T0.Add(time.Hour), Provider: "ovhcloud",
			Tier: schemas.TierSpecialist, SKU: "h100-380", Region: "GRA11", GPU: "H100-PCIE-80GB",
			GPUName: "H100 PCIe", GPUCount: 1, GPUMemoryGB: 80, Pricing: schemas.OnDemand,
			PriceUSDHour: 3.2292, PriceUSDGPUHour: 3.2292, Currency: "EUR", PriceNative: 2.99,
			Unit: schemas.UnitHour, FXRate: 1.08, Interconnect: schemas.InterconnectEthernet,
			SourceKind: schemas.SourceScrape, SourceURL: "https://www.ovhcloud.com/fr/public-cloud/prices/",
			RunID: "run-2025-03-01T00", Attrs: map[string]string{"région": "Gravelines ✓", "flavor": "h100-380"},
		},
		{
			// A marketplace offer whose names carry quotes, a backslash, a semicolon and
			// non-ASCII text, all of which must survive the round trip and filtering.
			ObservedAt: T0.Add(45 * time.Minute), EffectiveAt: T0.Add(45 * time.Minute), Provider: "vast",
			Tier: schemas.TierMarketplace, SKU: `2x RTX 4090 host "m:18342" \ d'c;`, Region: "Val-d'Or, QC",
			Zone: "Québec", GPU: "RTX-4090-24GB", GPUName: "RTX 4090", GPUCount: 2, GPUMemoryGB: 24,
			Pricing: schemas.OnDemand, PriceUSDHour: 0.7, PriceUSDGPUHour: 0.35, Currency: "USD",
			PriceNative: 0.7, Unit: schemas.UnitHour, FXRate: 1, Interconnect: schemas.InterconnectEthernet,
			SourceKind: schemas.SourceAPI, SourceURL: "https://console.vast.ai/api/v0/bundles/",
			RunID: "run-2025-03-01T00", Attrs: map[string]string{"quote": `it's "fine"`, "emoji": "🚀"},
			PriceScope: schemas.ScopeInstance, PriceBasis: schemas.BasisFloor,
		},
	}
}

// Normalize returns o as a store gives it back: times in UTC truncated to whole
// seconds, and an empty Attrs as nil.
func Normalize(o schemas.Observation) schemas.Observation {
	o.ObservedAt = o.ObservedAt.UTC().Truncate(time.Second)
	o.EffectiveAt = o.EffectiveAt.UTC().Truncate(time.Second)
	if len(o.Attrs) == 0 {
		o.Attrs = nil
	}
	return o
}

// Matches is the reference meaning of a Filter.
func Matches(f store.Filter, o schemas.Observation) bool {
	eff := o.EffectiveAt.UTC().Truncate(time.Second)
	return (f.GPU == "" || f.GPU == o.GPU) &&
		(f.Provider == "" || f.Provider == o.Provider) &&
		(f.Pricing == "" || f.Pricing == o.Pricing) &&
		(f.Region == "" || f.Region == o.Region) &&
		(f.Tier == "" || f.Tier == o.Tier) &&
		(f.Since.IsZero() || !eff.Before(f.Since.UTC().Truncate(time.Second))) &&
		(f.Until.IsZero() || eff.Before(f.Until.UTC().Truncate(time.Second)))
}

func seriesLess(a, b schemas.Observation) bool {
	if a.Provider != b.Provider {
		return a.Provider < b.Provider
	}
	if a.SKU != b.SKU {
		return a.SKU < b.SKU
	}
	if a.Region != b.Region {
		return a.Region < b.Region
	}
	if a.Zone != b.Zone {
		return a.Zone < b.Zone
	}
	return a.Pricing < b.Pricing
}

// WantObservations is the reference Observations: the rows matching f, normalised,
// ordered by series key then effective_at.
func WantObservations(all []schemas.Observation, f store.Filter) []schemas.Observation {
	var out []schemas.Observation
	for _, o := range all {
		if Matches(f, o) {
			out = append(out, Normalize(o))
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].SeriesKey() != out[j].SeriesKey() {
			return seriesLess(out[i], out[j])
		}
		return out[i].EffectiveAt.Before(out[j].EffectiveAt)
	})
	return out
}

// WantLatest is the reference Latest: of the rows matching f, the newest of each
// series, cheapest per GPU-hour first, ties by provider, sku, region, zone, pricing.
func WantLatest(all []schemas.Observation, f store.Filter) []schemas.Observation {
	newest := map[string]schemas.Observation{}
	for _, o := range WantObservations(all, f) {
		newest[o.SeriesKey()] = o // ascending effective_at: the last one wins
	}
	out := make([]schemas.Observation, 0, len(newest))
	for _, o := range newest {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].PriceUSDGPUHour != out[j].PriceUSDGPUHour {
			return out[i].PriceUSDGPUHour < out[j].PriceUSDGPUHour
		}
		return seriesLess(out[i], out[j])
	})
	return out
}

func write(t *testing.T, st store.Store, obs []schemas.Observation) {
	t.Helper()
	if err := st.WriteObservations(ctx(t), obs); err != nil {
		t.Fatalf("WriteObservations: %v", err)
	}
}

func latest(t *testing.T, st store.Store, f store.Filter) []schemas.Observation {
	t.Helper()
	got, err := st.Latest(ctx(t), f)
	if err != nil {
		t.Fatalf("Latest(%+v): %v", f, err)
	}
	return got
}

func observations(t *testing.T, st store.Store, f store.Filter) []schemas.Observation {
	t.Helper()
	got, err := st.Observations(ctx(t), f)
	if err != nil {
		t.Fatalf("Observations(%+v): %v", f, err)
	}
	return got
}

// diff reports the first difference between two observation lists, field by field.
func diff(got, want []schemas.Observation) string {
	for i := 0; i < len(got) || i < len(want); i++ {
		switch {
		case i >= len(got):
			return fmt.Sprintf("row %d missing: want %s @ %s", i, want[i].SeriesKey(), want[i].EffectiveAt)
		case i >= len(want):
			return fmt.Sprintf("row %d extra: got %s @ %s", i, got[i].SeriesKey(), got[i].EffectiveAt)
		}
		g, w := reflect.ValueOf(got[i]), reflect.ValueOf(want[i])
		for f := 0; f < g.NumField(); f++ {
			if !reflect.DeepEqual(g.Field(f).Interface(), w.Field(f).Interface()) {
				return fmt.Sprintf("row %d (%s): field %s = %#v, want %#v", i, want[i].SeriesKey(),
					g.Type().Field(f).Name, g.Field(f).Interface(), w.Field(f).Interface())
			}
		}
	}
	return ""
}

func keys(obs []schemas.Observation) []string {
	out := make([]string, len(obs))
	for i, o := range obs {
		out[i] = o.Provider + "/" + o.SKU + "/" + o.Region + "/" + o.Zone + "/" + o.Pricing
	}
	return out
}

func (s *suite) migrateTwice(t *testing.T) {
	st := s.open(t)
	defer func() {
		if err := st.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	}()
	first, err := st.Migrate(ctx(t))
	if err != nil {
		t.Fatalf("first Migrate: %v", err)
	}
	var want []int
	if b := backendOf(st); b != "" {
		ms, err := schemas.Migrations(b)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			want = append(want, m.Version)
		}
	} else { // a backend without DDL in schemas/: versions 1…n
		for i := range first {
			want = append(want, i+1)
		}
	}
	if len(first) == 0 {
		t.Fatal("first Migrate on an empty store applied nothing")
	}
	if !reflect.DeepEqual(first, want) {
		t.Fatalf("first Migrate applied %v, want %v", first, want)
	}
	second, err := st.Migrate(ctx(t))
	if err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	if len(second) != 0 {
		t.Fatalf("second Migrate applied %v, want none", second)
	}
	// The tables exist and work after the no-op re-run.
	write(t, st, Observations()[:1])
	if got := observations(t, st, store.Filter{}); len(got) != 1 {
		t.Fatalf("after migrations: %d observations, want 1", len(got))
	}
}

// backendOf names the DDL directory of a store: that of the package store/<backend>
// its concrete type lives in, or "" for another store.
func backendOf(st store.Store) string {
	rt := reflect.TypeOf(st)
	if rt.Kind() == reflect.Pointer {
		rt = rt.Elem()
	}
	for _, b := range []string{schemas.BackendClickHouse, schemas.BackendDuckDB} {
		if strings.HasSuffix(rt.PkgPath(), "/store/"+b) {
			return b
		}
	}
	return ""
}

func (s *suite) emptyStore(t *testing.T) {
	st := s.fresh(t)
	if err := st.WriteObservations(ctx(t), nil); err != nil {
		t.Fatalf("writing no observations: %v", err)
	}
	if err := st.WriteQuarantine(ctx(t), nil); err != nil {
		t.Fatalf("writing no quarantine rows: %v", err)
	}
	if got := latest(t, st, store.Filter{}); len(got) != 0 {
		t.Errorf("Latest on an empty store: %d rows", len(got))
	}
	if got := observations(t, st, store.Filter{}); len(got) != 0 {
		t.Errorf("Observations on an empty store: %d rows", len(got))
	}
	runs, err := st.Runs(ctx(t), "", 0)
	if err != nil || len(runs) != 0 {
		t.Errorf("Runs on an empty store: %v, %v", runs, err)
	}
	q, err := st.Quarantine(ctx(t), 0)
	if err != nil || len(q) != 0 {
		t.Errorf("Quarantine on an empty store: %v, %v", q, err)
	}
}

func (s *suite) roundTrip(t *testing.T) {
	st := s.fresh(t)
	all := Observations()
	write(t, st, all)
	got := observations(t, st, store.Filter{})
	want := WantObservations(all, store.Filter{})
	if len(want) != len(all) {
		t.Fatalf("reference kept %d of %d rows", len(want), len(all))
	}
	if d := diff(got, want); d != "" {
		t.Fatalf("Observations round trip: %s", d)
	}
	for _, o := range got {
		if o.ObservedAt.Location() != time.UTC || o.EffectiveAt.Location() != time.UTC {
			t.Fatalf("%s: times not in UTC: %v, %v", o.SeriesKey(), o.ObservedAt, o.EffectiveAt)
		}
	}
	// A spot point keeps its own effective_at apart from observed_at.
	spot := observations(t, st, store.Filter{Provider: "aws", Pricing: schemas.Spot})
	if len(spot) != 3 || !spot[0].EffectiveAt.Equal(T0.Add(10*time.Minute)) ||
		!spot[0].ObservedAt.Equal(T0.Add(35*time.Minute)) {
		t.Fatalf("spot history: %+v", spot)
	}
	// Sub-second times come back truncated, not rounded.
	lam := observations(t, st, store.Filter{Provider: "lambda"})
	if len(lam) != 3 || !lam[0].ObservedAt.Equal(T0.Add(time.Hour)) {
		t.Fatalf("lambda observed_at: %v, want %v", lam[0].ObservedAt, T0.Add(time.Hour))
	}
}

// epochRoundTrip: an observation dated at the Unix epoch (the first instant every
// backend can hold) reads back as the epoch, not as the zero time.
func (s *suite) epochRoundTrip(t *testing.T) {
	st := s.fresh(t)
	o := Observations()[0]
	epoch := time.Unix(0, 0).UTC()
	o.ObservedAt, o.EffectiveAt = epoch, epoch
	write(t, st, []schemas.Observation{o})
	got := observations(t, st, store.Filter{})
	if len(got) != 1 || !got[0].EffectiveAt.Equal(epoch) || !got[0].ObservedAt.Equal(epoch) {
		t.Fatalf("epoch round trip: %+v", got)
	}
	latest, err := st.Latest(ctx(t), store.Filter{})
	if err != nil || len(latest) != 1 || !latest[0].EffectiveAt.Equal(epoch) {
		t.Fatalf("Latest at the epoch: %+v, %v", latest, err)
	}
}

func (s *suite) duplicateWrites(t *testing.T) {
	st := s.fresh(t)
	all := Observations()
	// The same batch, written twice as two separate writes.
	write(t, st, all)
	write(t, st, all)
	// And once more one row at a time, and a batch repeating a row within itself.
	for _, o := range all[:3] {
		write(t, st, []schemas.Observation{o})
	}
	write(t, st, []schemas.Observation{all[4], all[4], all[5]})

	if d := diff(observations(t, st, store.Filter{}), WantObservations(all, store.Filter{})); d != "" {
		t.Fatalf("Observations after duplicate writes: %s", d)
	}
	if d := diff(latest(t, st, store.Filter{}), WantLatest(all, store.Filter{})); d != "" {
		t.Fatalf("Latest after duplicate writes: %s", d)
	}
	f := store.Filter{Provider: "aws", Pricing: schemas.Spot}
	if got := observations(t, st, f); len(got) != 3 {
		t.Fatalf("aws spot history after duplicate writes: %d rows, want 3", len(got))
	}
}

func (s *suite) lastWriteWins(t *testing.T) {
	st := s.fresh(t)
	all := Observations()
	write(t, st, all)
	// A re-collection of the same identity with a corrected price and run: the last
	// write is what every read returns, once.
	fixed := all[1] // aws on-demand, the newer point
	fixed.PriceUSDHour = 55.12
	fixed.PriceUSDGPUHour = 6.89
	fixed.PriceNative = 55.12
	fixed.RunID = "run-2025-03-03T00"
	fixed.Attrs = map[string]string{"vcpu": "192"}
	write(t, st, []schemas.Observation{fixed})
	// Within one batch too, the later row of an identity wins.
	twice := all[9] // lambda gpu_1x_a100_sxm4 us-east-1
	later := twice
	later.PriceUSDGPUHour, later.PriceUSDHour, later.PriceNative = 1.1, 1.1, 1.1
	write(t, st, []schemas.Observation{twice, later})

	want := append([]schemas.Observation(nil), all...)
	want[1], want[9] = fixed, later
	if d := diff(observations(t, st, store.Filter{}), WantObservations(want, store.Filter{})); d != "" {
		t.Fatalf("Observations after rewrite: %s", d)
	}
	if d := diff(latest(t, st, store.Filter{}), WantLatest(want, store.Filter{})); d != "" {
		t.Fatalf("Latest after rewrite: %s", d)
	}
}

// overlappingRewrite: a batch whose time span overlaps the stored rows' only in
// part (a file imported again from its middle, a collection catching up) replaces
// the rows of its identities where they meet and adds the rest; the stored rows
// before it, and another series at the same times, stay.
func (s *suite) overlappingRewrite(t *testing.T) {
	st := s.fresh(t)
	base := Observations()[1]  // aws on-demand
	other := Observations()[9] // lambda
	at := func(o schemas.Observation, h int, price float64) schemas.Observation {
		o.EffectiveAt = base.EffectiveAt.Add(time.Duration(h) * time.Hour)
		o.ObservedAt = o.EffectiveAt
		o.PriceUSDGPUHour, o.PriceUSDHour, o.PriceNative = price, price*float64(o.GPUCount), price*float64(o.GPUCount)
		return o
	}
	var first, second, want []schemas.Observation
	for h := range 5 {
		first = append(first, at(base, h, 4+float64(h)/10), at(other, h, 1+float64(h)/10))
	}
	for h := 3; h < 7; h++ {
		second = append(second, at(base, h, 9+float64(h)/10))
	}
	write(t, st, first)
	write(t, st, second)
	for h := range 7 {
		if h < 3 {
			want = append(want, at(base, h, 4+float64(h)/10))
		} else {
			want = append(want, at(base, h, 9+float64(h)/10))
		}
		if h < 5 {
			want = append(want, at(other, h, 1+float64(h)/10))
		}
	}
	if d := diff(observations(t, st, store.Filter{}), WantObservations(want, store.Filter{})); d != "" {
		t.Fatalf("Observations after an overlapping batch: %s", d)
	}
}

func (s *suite) latest(t *testing.T) {
	st := s.fresh(t)
	all := Observations()
	write(t, st, all)
	got := latest(t, st, store.Filter{})
	// The order written out by hand, so the reference implementation is checked too.
	wantKeys := []string{
		`vast/2x RTX 4090 host "m:18342" \ d'c;/Val-d'Or, QC/Québec/on_demand`, // 0.35
		"lambda/gpu_1x_a100_sxm4/us-east-1//on_demand",                         // 1.29, tie: region
		"lambda/gpu_1x_a100_sxm4/us-west-2//on_demand",                         // 1.29
		"runpod/NVIDIA H100 80GB HBM3///spot",                                  // 1.75
		"lambda/gpu_8x_h100_sxm5/us-south-1//on_demand",                        // 2.99
		"ovhcloud/h100-380/GRA11//on_demand",                                   // 3.2292
		"aws/p5.48xlarge/us-east-1/us-east-1a/spot",                            // 33.01/8, the newest spot point
		"aws/p5.48xlarge/us-east-1//on_demand",                                 // 6.88, tie: pricing
		"aws/p5.48xlarge/us-east-1//reserved_1y",                               // 6.88, tie: provider
		"azure/Standard_ND96isr_H100_v5/eastus//on_demand",                     // 6.88
		"gcp/a3-highgpu-8g/us-central1//on_demand",                             // 11.03125
	}
	if !reflect.DeepEqual(keys(got), wantKeys) {
		t.Fatalf("Latest order:\n got  %q\n want %q", keys(got), wantKeys)
	}
	if d := diff(got, WantLatest(all, store.Filter{})); d != "" {
		t.Fatalf("Latest: %s", d)
	}
	// The newest point of a series wins even when it is not the cheapest.
	for _, o := range got {
		if o.Provider == "aws" && o.Pricing == schemas.Spot && o.PriceUSDHour != 33.01 {
			t.Fatalf("aws spot latest price %v, want the newest point's 33.01", o.PriceUSDHour)
		}
	}
	// Until makes Latest an as-of query: the newest point before Until.
	asOf := latest(t, st, store.Filter{Provider: "aws", Until: T0.Add(25 * time.Minute)})
	if len(asOf) != 2 || asOf[0].PriceUSDHour != 30.12 || asOf[1].PriceUSDHour != 98.32 {
		t.Fatalf("aws as of T0+25m: %+v", asOf)
	}
}

func (s *suite) filters(t *testing.T) {
	st := s.fresh(t)
	all := Observations()
	write(t, st, all)
	cases := []struct {
		name string
		f    store.Filter
		n    int // observations matching, counted by hand
	}{
		{"none", store.Filter{}, 14},
		{"gpu", store.Filter{GPU: "H100-SXM-80GB"}, 10},
		{"gpu pcie", store.Filter{GPU: "H100-PCIE-80GB"}, 1},
		{"provider", store.Filter{Provider: "lambda"}, 3},
		{"pricing", store.Filter{Pricing: schemas.Spot}, 4},
		{"region", store.Filter{Region: "us-east-1"}, 7},
		{"region with quote and unicode", store.Filter{Region: "Val-d'Or, QC"}, 1},
		{"empty region is no filter", store.Filter{Region: ""}, 14},
		{"tier", store.Filter{Tier: schemas.TierMarketplace}, 2},
		{"since inclusive", store.Filter{Since: T0.Add(20 * time.Minute)}, 12},
		{"until exclusive", store.Filter{Until: T0.Add(20 * time.Minute)}, 2},
		{"window", store.Filter{Since: T0.Add(10 * time.Minute), Until: T0.Add(time.Hour)}, 4},
		{"window in another zone", store.Filter{
			Since: T0.Add(10 * time.Minute).In(time.FixedZone("JST", 9*3600)),
			Until: T0.Add(time.Hour).In(time.FixedZone("EST", -5*3600))}, 4},
		{"since after everything", store.Filter{Since: T0.Add(72 * time.Hour)}, 0},
		{"combined", store.Filter{GPU: "H100-SXM-80GB", Provider: "aws", Pricing: schemas.OnDemand,
			Region: "us-east-1", Tier: schemas.TierHyperscaler, Since: T0.Add(time.Hour)}, 1},
		{"no such gpu", store.Filter{GPU: "B200-SXM-192GB"}, 0},
		{"case matters", store.Filter{Provider: "AWS"}, 0},
		{"no prefix match", store.Filter{Provider: "aw"}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			wantObs := WantObservations(all, c.f)
			if len(wantObs) != c.n {
				t.Fatalf("reference matches %d rows, counted %d by hand", len(wantObs), c.n)
			}
			if d := diff(observations(t, st, c.f), wantObs); d != "" {
				t.Errorf("Observations: %s", d)
			}
			if d := diff(latest(t, st, c.f), WantLatest(all, c.f)); d != "" {
				t.Errorf("Latest: %s", d)
			}
		})
	}
}

// Hostile are filter values that would break or subvert a query built by string
// concatenation, or match too much under LIKE or glob semantics.
var Hostile = []string{
	"'", "''", `\`, `\'`, `"`, "`", ";",
	"'; DROP TABLE observations; --",
	"x'); DROP TABLE runs; --",
	"' OR '1'='1", `" OR "1"="1`, "') OR ('1'='1", "1 OR 1=1",
	"%", "_", "*", "H100%", "aws%", "%aws%", ".*",
	"{gpu:String}", "$1", "?", "@p",
	"ünïcödé", "日本語", "🚀", "\u202e", "aws\n", " aws",
}

func (s *suite) hostileFilters(t *testing.T) {
	st := s.fresh(t)
	all := Observations()
	write(t, st, all)
	run := schemas.Run{
		RunID:      "r1",
		Source:     "aws",
		StartedAt:  T0,
		FinishedAt: T0.Add(time.Minute),
		Status:     schemas.RunOK,
	}
	if err := st.WriteRun(ctx(t), run); err != nil {
		t.Fatal(err)
	}
	for _, h := range Hostile {
		for _, f := range []store.Filter{{GPU: h}, {Provider: h}, {Pricing: h}, {Region: h}, {Tier: h},
			{GPU: h, Provider: h, Pricing: h, Region: h, Tier: h}} {
			if got := observations(t, st, f); len(got) != 0 {
				t.Errorf("Observations(%+v): %d rows, want none", f, len(got))
			}
			if got := latest(t, st, f); len(got) != 0 {
				t.Errorf("Latest(%+v): %d rows, want none", f, len(got))
			}
		}
		runs, err := st.Runs(ctx(t), h, 0)
		if err != nil || len(runs) != 0 {
			t.Errorf("Runs(%q): %v, %v; want none", h, runs, err)
		}
	}
	// Nothing was damaged.
	if d := diff(observations(t, st, store.Filter{}), WantObservations(all, store.Filter{})); d != "" {
		t.Fatalf("after hostile filters: %s", d)
	}
	runs, err := st.Runs(ctx(t), "", 0)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs after hostile filters: %v, %v", runs, err)
	}
	write(t, st, all[:1]) // the tables still take writes
}

// hostileValues stores the hostile strings as data and reads them back, filtering by
// each one as an exact value.
func (s *suite) hostileValues(t *testing.T) {
	st := s.fresh(t)
	base := Observations()[6] // azure
	var obs []schemas.Observation
	for i, h := range Hostile {
		o := base
		o.Region = h
		o.SKU = "sku " + h
		o.GPU = h
		o.Attrs = map[string]string{h: h}
		o.EffectiveAt = T0.Add(time.Duration(i) * time.Second)
		obs = append(obs, o)
	}
	write(t, st, obs)
	if d := diff(observations(t, st, store.Filter{}), WantObservations(obs, store.Filter{})); d != "" {
		t.Fatalf("hostile values round trip: %s", d)
	}
	for _, o := range obs {
		for _, f := range []store.Filter{{Region: o.Region}, {GPU: o.GPU}} {
			if d := diff(observations(t, st, f), WantObservations(obs, f)); d != "" {
				t.Errorf("filter %+v: %s", f, d)
			}
		}
	}
	var runs []schemas.Run
	for i, h := range Hostile {
		r := schemas.Run{RunID: h, Source: h, StartedAt: T0.Add(time.Duration(i) * time.Minute),
			FinishedAt: T0.Add(time.Duration(i)*time.Minute + time.Second), Status: schemas.RunFailed, Error: h}
		if err := st.WriteRun(ctx(t), r); err != nil {
			t.Fatal(err)
		}
		runs = append([]schemas.Run{r}, runs...)
	}
	got, err := st.Runs(ctx(t), "", 0)
	if err != nil || !reflect.DeepEqual(got, runs) {
		t.Fatalf("hostile runs: %v\n got  %+v\n want %+v", err, got, runs)
	}
	for _, r := range runs {
		got, err := st.Runs(ctx(t), r.Source, 0)
		if err != nil || len(got) != 1 || got[0] != r {
			t.Errorf("Runs(%q) = %+v, %v", r.Source, got, err)
		}
	}
}

// Runs returns the suite's run records, oldest first: three sources over three
// collections, one failed (no finish time, an error with quotes).
func Runs() []schemas.Run {
	return []schemas.Run{
		{RunID: "run-2025-02-28T23", Source: "aws", StartedAt: T0, FinishedAt: T0.Add(95 * time.Second),
			Status: schemas.RunOK, RowsAccepted: 1840, RowsQuarantine: 2, UnknownGPUs: 1, RowsStored: 1840},
		{
			RunID:        "run-2025-02-28T23",
			Source:       "lambda",
			StartedAt:    T0.Add(time.Second),
			FinishedAt:   T0.Add(3 * time.Second),
			Status:       schemas.RunOK,
			RowsAccepted: 21,
		},
		{
			RunID:          "run-2025-03-01T00",
			Source:         "aws",
			StartedAt:      T0.Add(time.Hour),
			FinishedAt:     T0.Add(time.Hour + 80*time.Second),
			Status:         schemas.RunDegraded,
			RowsAccepted:   1790,
			RowsQuarantine: 50,
			RowsSuspect:    4,
			RowsNotOffered: 12,
			RowsStored:     1700,
			RowsSpooled:    90,
			Error:          "spot: 3 regions timed out",
		},
		{RunID: "run-2025-03-01T00", Source: "coreweave", StartedAt: T0.Add(time.Hour + 1500*time.Millisecond),
			Status: schemas.RunFailed, RowsAccepted: 7, RowsSpooled: 2, RowsLost: 5,
			Error: `coreweave: parse "GPU Pricing": table 'H100' not found`},
		{RunID: "run-2025-03-01T00", Source: "lambda", StartedAt: T0.Add(time.Hour + 2*time.Second),
			FinishedAt: T0.Add(time.Hour + 4*time.Second), Status: schemas.RunOK, RowsAccepted: 22},
	}
}

func normRun(r schemas.Run) schemas.Run {
	r.StartedAt = r.StartedAt.UTC().Truncate(time.Second)
	r.FinishedAt = r.FinishedAt.UTC().Truncate(time.Second)
	return r
}

func (s *suite) runs(t *testing.T) {
	st := s.fresh(t)
	in := Runs()
	for _, r := range in {
		if err := st.WriteRun(ctx(t), r); err != nil {
			t.Fatalf("WriteRun: %v", err)
		}
	}
	// Rewriting a run record (same run_id and source) replaces it.
	upd := in[2]
	upd.Status = schemas.RunOK
	upd.Error = ""
	upd.RowsAccepted = 1840
	if err := st.WriteRun(ctx(t), upd); err != nil {
		t.Fatal(err)
	}
	in[2] = upd
	var want []schemas.Run
	for i := len(in) - 1; i >= 0; i-- {
		want = append(want, normRun(in[i]))
	}
	check := func(source string, limit int, want []schemas.Run) {
		t.Helper()
		got, err := st.Runs(ctx(t), source, limit)
		if err != nil {
			t.Fatalf("Runs(%q, %d): %v", source, limit, err)
		}
		if len(got) == 0 && len(want) == 0 {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("Runs(%q, %d):\n got  %+v\n want %+v", source, limit, got, want)
		}
		for _, r := range got {
			if r.StartedAt.Location() != time.UTC {
				t.Fatalf("Runs: started_at not in UTC: %v", r.StartedAt)
			}
		}
	}
	check("", 0, want)
	check("", 2, want[:2])
	check("", 100, want)
	check("aws", 0, []schemas.Run{want[2], want[4]})
	check("aws", 1, []schemas.Run{want[2]})
	check("lambda", 0, []schemas.Run{want[0], want[3]})
	check("coreweave", 0, []schemas.Run{want[1]})
	check("gcp", 0, nil)
	if !want[1].FinishedAt.IsZero() {
		t.Fatalf("the failed run's zero finished_at came back as %v", want[1].FinishedAt)
	}
}

// startedRuns: a run recorded as started (owner and span kept) is listed by
// StartedRuns until its final record replaces it; Runs shows either as written.
func (s *suite) startedRuns(t *testing.T) {
	st := s.fresh(t)
	jr, ok := st.(store.RunJournal)
	if !ok {
		t.Fatalf("%T keeps no run journal (store.RunJournal)", st)
	}
	a := schemas.Run{RunID: "run-a", Source: "import:csv", StartedAt: T0, FinishedAt: T0.Add(time.Minute),
		Status: schemas.RunStarted, RowsAccepted: 122880, Owner: "host-1/4242/0a0b0c0d",
		SpanSince: T0.Add(-48 * time.Hour), SpanUntil: T0.Add(-time.Hour + time.Second)}
	b := a
	b.RunID, b.Source, b.StartedAt, b.SpanSince, b.SpanUntil = "run-b", "vast", T0.Add(
		time.Hour,
	), time.Time{}, time.Time{}
	c := a
	c.RunID, c.Source = "run-c", "azure"
	for _, r := range []schemas.Run{a, b, c} {
		if err := st.WriteRun(ctx(t), r); err != nil {
			t.Fatal(err)
		}
	}
	// c finishes: its final record replaces the started one.
	cDone := c
	cDone.Status, cDone.FinishedAt, cDone.RowsStored = schemas.RunOK, T0.Add(2*time.Minute), 122880
	if err := st.WriteRun(ctx(t), cDone); err != nil {
		t.Fatal(err)
	}
	got, err := jr.StartedRuns(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if want := []schemas.Run{a, b}; !reflect.DeepEqual(got, want) {
		t.Fatalf("StartedRuns:\n got  %+v\n want %+v", got, want)
	}
	all, err := st.Runs(ctx(t), "azure", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || !reflect.DeepEqual(all[0], cDone) {
		t.Fatalf("Runs(azure): %+v, want the final record %+v", all, cDone)
	}
	// Killed and rewritten as interrupted, a started run is no longer listed.
	if err := st.WriteRun(ctx(t), store.Killed(a)); err != nil {
		t.Fatal(err)
	}
	got, err = jr.StartedRuns(ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].RunID != "run-b" {
		t.Fatalf("StartedRuns after run-a was rewritten: %+v", got)
	}
}

// Quarantined returns the suite's quarantined rows, oldest first.
func Quarantined() []schemas.Quarantined {
	return []schemas.Quarantined{
		{QuarantinedAt: T0.Add(10 * time.Second), RunID: "run-2025-02-28T23", Source: "aws",
			Reason: "price_usd_gpu_hour 0 is not positive",
			Raw:    `{"sku":"p4d.24xlarge","region":"us-gov-west-1","price_native":0}`},
		{QuarantinedAt: T0.Add(20*time.Second + 999*time.Millisecond), RunID: "run-2025-02-28T23", Source: "aws",
			Reason: "price_usd_gpu_hour 412.5 above the plausible maximum 100",
			Raw:    `{"sku":"p5.48xlarge","region":"ap-south-1","price_native":3300}`},
		{QuarantinedAt: T0.Add(time.Hour), RunID: "run-2025-03-01T00", Source: "vast",
			Reason: "unknown currency \"BTC\"", Raw: "offer 7781 'RTX 5090' ; 0.0000041 BTC/h ✓"},
	}
}

func (s *suite) quarantine(t *testing.T) {
	st := s.fresh(t)
	in := Quarantined()
	if err := st.WriteQuarantine(ctx(t), in[:2]); err != nil {
		t.Fatalf("WriteQuarantine: %v", err)
	}
	if err := st.WriteQuarantine(ctx(t), in[2:]); err != nil {
		t.Fatalf("WriteQuarantine: %v", err)
	}
	// The same rows written again later (a spool segment replayed after a crash, an
	// archive reparsed under its run id) are listed once, at their first time.
	again := Quarantined()
	for i := range again {
		again[i].QuarantinedAt = again[i].QuarantinedAt.Add(48 * time.Hour)
	}
	if err := st.WriteQuarantine(ctx(t), again); err != nil {
		t.Fatalf("WriteQuarantine again: %v", err)
	}
	var want []schemas.Quarantined
	for i := len(in) - 1; i >= 0; i-- {
		q := in[i]
		q.QuarantinedAt = q.QuarantinedAt.UTC().Truncate(time.Second)
		want = append(want, q)
	}
	for _, limit := range []int{0, 1, 2, 3, 10} {
		got, err := st.Quarantine(ctx(t), limit)
		if err != nil {
			t.Fatalf("Quarantine(%d): %v", limit, err)
		}
		w := want
		if limit > 0 && limit < len(w) {
			w = w[:limit]
		}
		if !reflect.DeepEqual(got, w) {
			t.Fatalf("Quarantine(%d):\n got  %+v\n want %+v", limit, got, w)
		}
	}
}

// SpotHistory returns n points of base's series, one a minute from base's
// effective_at, with prices that move by a deterministic walk.
func SpotHistory(base schemas.Observation, n int) []schemas.Observation {
	out := make([]schemas.Observation, n)
	price := base.PriceUSDHour
	for i := range out {
		o := base
		o.EffectiveAt = base.EffectiveAt.Add(time.Duration(i) * time.Minute)
		o.PriceUSDHour = price
		o.PriceNative = price
		o.PriceUSDGPUHour = price / o.GPUCount
		out[i] = o
		price += float64((i*7919)%13-6) * 0.01
	}
	return out
}

func (s *suite) largeBatch(t *testing.T) {
	st := s.fresh(t)
	obs := SpotHistory(Observations()[2], 2500)
	write(t, st, obs)
	write(t, st, obs)
	f := store.Filter{Provider: "aws"}
	if d := diff(observations(t, st, f), WantObservations(obs, f)); d != "" {
		t.Fatalf("2500-row batch written twice: %s", d)
	}
	if d := diff(latest(t, st, f), WantLatest(obs, f)); d != "" {
		t.Fatalf("Latest of a 2500-row history: %s", d)
	}
}

func (s *suite) badLimits(t *testing.T) {
	st := s.fresh(t)
	if _, err := st.Runs(ctx(t), "", -1); err == nil {
		t.Error("Runs with limit -1: no error")
	}
	if _, err := st.Quarantine(ctx(t), -1); err == nil {
		t.Error("Quarantine with limit -1: no error")
	}
}

func (s *suite) close(t *testing.T) {
	st := s.open(t)
	if _, err := st.Migrate(ctx(t)); err != nil {
		t.Fatal(err)
	}
	write(t, st, Observations()[:2])
	if err := st.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := st.WriteObservations(ctx(t), Observations()[2:3]); err == nil {
		t.Error("WriteObservations after Close: no error")
	}
	if _, err := st.Latest(ctx(t), store.Filter{}); err == nil {
		t.Error("Latest after Close: no error")
	}
}

func each(t *testing.T, st store.Store, f store.Filter) []schemas.Observation {
	t.Helper()
	var got []schemas.Observation
	if err := st.Each(ctx(t), f, func(o schemas.Observation) error {
		got = append(got, o)
		return nil
	}); err != nil {
		t.Fatalf("Each(%+v): %v", f, err)
	}
	return got
}

// each checks that Each yields what Observations returns: every matching row once,
// in series then effective_at order, with duplicates written three times counted once.
func (s *suite) each(t *testing.T) {
	st := s.fresh(t)
	spot := Observations()[2]
	spot.EffectiveAt = T0.Add(40 * time.Minute) // after the suite's own spot points
	all := append(Observations(), SpotHistory(spot, 1200)...)
	for range 3 {
		write(t, st, all)
	}
	for _, f := range []store.Filter{
		{}, {GPU: "H100-SXM-80GB"}, {Provider: "aws", Pricing: schemas.Spot},
		{Tier: schemas.TierMarketplace}, {Since: T0.Add(20 * time.Minute), Until: T0.Add(5 * time.Hour)},
		{Provider: "nobody"},
	} {
		want := WantObservations(all, f)
		if d := diff(each(t, st, f), want); d != "" {
			t.Errorf("Each(%+v): %s", f, d)
		}
		if d := diff(observations(t, st, f), want); d != "" {
			t.Errorf("Observations(%+v): %s", f, d)
		}
	}
}

// eachStops checks that Each stops at the callback's first error, returns it as it
// is, and leaves the store usable.
func (s *suite) eachStops(t *testing.T) {
	st := s.fresh(t)
	obs := SpotHistory(Observations()[2], 3000)
	write(t, st, obs)
	stop := errors.New("enough")
	n := 0
	err := st.Each(ctx(t), store.Filter{}, func(schemas.Observation) error {
		n++
		if n == 10 {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Fatalf("Each returned %v, want the callback's error itself", err)
	}
	if n != 10 {
		t.Fatalf("callback ran %d times after failing at 10", n)
	}
	if got := observations(t, st, store.Filter{}); len(got) != len(obs) {
		t.Fatalf("after a stopped Each: %d observations, want %d", len(got), len(obs))
	}
}

// FXRates returns the suite's FX rates: two currencies over days around the month
// boundary of T0, dates carrying times and zones that stores reduce to the UTC day.
func FXRates() []schemas.FXRate {
	day := func(d int) time.Time { return time.Date(2025, 2, 27, 0, 0, 0, 0, time.UTC).AddDate(0, 0, d) }
	return []schemas.FXRate{
		{Date: day(0), Currency: "EUR", USDPerUnit: 1.0412, Source: "ecb"},
		{Date: day(1).Add(15 * time.Hour), Currency: "EUR", USDPerUnit: 1.0401, Source: "ecb"},
		// 2025-03-01 00:30 in CET is still 2025-02-28 in UTC: it replaces the row above.
		{
			Date:       time.Date(2025, 3, 1, 0, 30, 0, 0, time.FixedZone("CET", 3600)),
			Currency:   "EUR",
			USDPerUnit: 1.0405,
			Source:     "ecb-revised",
		},
		{Date: day(2), Currency: "EUR", USDPerUnit: 1.0384, Source: "ecb"},
		{Date: day(0), Currency: "GBP", USDPerUnit: 1.2587, Source: "ecb"},
		{Date: day(2), Currency: "GBP", USDPerUnit: 1.2601, Source: "ecb"},
	}
}

func (s *suite) fxRates(t *testing.T) {
	st := s.fresh(t)
	got, err := st.FXRates(ctx(t), time.Time{})
	if err != nil || len(got) != 0 {
		t.Fatalf("FXRates on an empty store: %v, %v", got, err)
	}
	if err := st.WriteFXRates(ctx(t), nil); err != nil {
		t.Fatalf("writing no rates: %v", err)
	}
	in := FXRates()
	if err := st.WriteFXRates(ctx(t), in[:3]); err != nil {
		t.Fatalf("WriteFXRates: %v", err)
	}
	if err := st.WriteFXRates(ctx(t), in[3:]); err != nil {
		t.Fatalf("WriteFXRates: %v", err)
	}
	// A later write of a stored identity wins.
	fix := schemas.FXRate{Date: in[0].Date, Currency: "EUR", USDPerUnit: 1.0419, Source: "ecb-fix"}
	if err := st.WriteFXRates(ctx(t), []schemas.FXRate{fix}); err != nil {
		t.Fatal(err)
	}
	d := func(y int, m time.Month, day int) time.Time { return time.Date(y, m, day, 0, 0, 0, 0, time.UTC) }
	want := []schemas.FXRate{
		{Date: d(2025, 2, 27), Currency: "EUR", USDPerUnit: 1.0419, Source: "ecb-fix"},
		{Date: d(2025, 2, 28), Currency: "EUR", USDPerUnit: 1.0405, Source: "ecb-revised"},
		{Date: d(2025, 3, 1), Currency: "EUR", USDPerUnit: 1.0384, Source: "ecb"},
		{Date: d(2025, 2, 27), Currency: "GBP", USDPerUnit: 1.2587, Source: "ecb"},
		{Date: d(2025, 3, 1), Currency: "GBP", USDPerUnit: 1.2601, Source: "ecb"},
	}
	check := func(since time.Time, want []schemas.FXRate) {
		t.Helper()
		got, err := st.FXRates(ctx(t), since)
		if err != nil {
			t.Fatalf("FXRates(%v): %v", since, err)
		}
		if len(got) == 0 && len(want) == 0 {
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("FXRates(%v):\n got  %+v\n want %+v", since, got, want)
		}
	}
	check(time.Time{}, want)
	check(d(2025, 2, 28), []schemas.FXRate{want[1], want[2], want[4]})
	check(d(2025, 2, 28).Add(23*time.Hour), []schemas.FXRate{want[1], want[2], want[4]}) // the day of since counts
	check(d(2025, 3, 2), nil)

	for _, bad := range []schemas.FXRate{
		{Date: d(2025, 3, 2), Currency: "", USDPerUnit: 1, Source: "x"},
		{Date: d(2025, 3, 2), Currency: "EUR", USDPerUnit: 0, Source: "x"},
		{Date: d(2025, 3, 2), Currency: "EUR", USDPerUnit: -1.1, Source: "x"},
		{Currency: "EUR", USDPerUnit: 1.1, Source: "x"},
	} {
		if err := st.WriteFXRates(ctx(t), []schemas.FXRate{in[0], bad}); err == nil {
			t.Errorf("WriteFXRates(%+v): no error", bad)
		}
	}
	check(time.Time{}, want) // the failed writes changed nothing
}

// WantBars is the reference rollup: the bars of width w (store.Hourly or
// store.Daily) of the deduplicated observations, in store order, each with the
// latest observed_at of its observations. Within obs the last row of an identity
// wins, as in a store.
func WantBars(obs []schemas.Observation, w time.Duration) []store.Bar {
	type ident struct {
		series string
		at     int64
	}
	last := map[ident]schemas.Observation{}
	for _, o := range obs {
		last[ident{o.SeriesKey(), o.EffectiveAt.Unix()}] = Normalize(o)
	}
	var rows []schemas.Observation
	for _, o := range last {
		rows = append(rows, o)
	}
	rows = WantObservations(rows, store.Filter{})
	var out []store.Bar
	for _, o := range rows {
		start := o.EffectiveAt.Truncate(w)
		p := o.PriceUSDGPUHour
		if n := len(out); n > 0 && out[n-1].SeriesKey() == o.SeriesKey() && out[n-1].Start.Equal(start) {
			b := &out[n-1]
			b.High, b.Low = math.Max(b.High, p), math.Min(b.Low, p)
			b.Close = p
			b.Mean = (b.Mean*float64(b.Count) + p) / float64(b.Count+1)
			b.Count++
			b.GPU, b.Tier, b.Interconnect = o.GPU, o.Tier, o.Interconnect
			b.PriceScope, b.PriceBasis = o.PriceScope, o.PriceBasis
			if o.ObservedAt.After(b.LastObservedAt) {
				b.LastObservedAt = o.ObservedAt
			}
			continue
		}
		out = append(out, store.Bar{Provider: o.Provider, SKU: o.SKU, Region: o.Region, Zone: o.Zone,
			Pricing: o.Pricing, GPU: o.GPU, Tier: o.Tier, Interconnect: o.Interconnect,
			PriceScope: o.PriceScope, PriceBasis: o.PriceBasis, Start: start, Open: p, High: p, Low: p, Close: p, Mean: p,
			Count: 1, LastObservedAt: o.ObservedAt})
	}
	return out
}

// BarsDiff reports the first difference between two bar lists; prices compare to
// a relative 1e-9 (stores sum in their own order).
func BarsDiff(got, want []store.Bar) string {
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	for i := 0; i < len(got) || i < len(want); i++ {
		switch {
		case i >= len(got):
			return fmt.Sprintf("bar %d missing: want %s @ %s", i, want[i].SeriesKey(), want[i].Start)
		case i >= len(want):
			return fmt.Sprintf("bar %d extra: got %s @ %s", i, got[i].SeriesKey(), got[i].Start)
		}
		g, w := got[i], want[i]
		if g.SeriesKey() != w.SeriesKey() || !g.Start.Equal(w.Start) || g.Start.Location() != time.UTC ||
			g.GPU != w.GPU || g.Tier != w.Tier || g.Interconnect != w.Interconnect || g.Count != w.Count ||
			g.PriceScope != w.PriceScope || g.PriceBasis != w.PriceBasis ||
			!g.LastObservedAt.Equal(w.LastObservedAt) || g.LastObservedAt.Location() != time.UTC ||
			!near(g.Open, w.Open) || !near(g.High, w.High) || !near(g.Low, w.Low) ||
			!near(g.Close, w.Close) || !near(g.Mean, w.Mean) {
			return fmt.Sprintf("bar %d:\n got  %+v\n want %+v", i, g, w)
		}
	}
	return ""
}

func bars(t *testing.T, st store.Store, q store.BarQuery) []store.Bar {
	t.Helper()
	r, ok := st.(store.Rollups)
	if !ok {
		t.Fatalf("%T does not implement store.Rollups", st)
	}
	got, err := r.Bars(ctx(t), q)
	if err != nil {
		t.Fatalf("Bars(%+v): %v", q, err)
	}
	return got
}

func rollup(t *testing.T, st store.Store, since, until time.Time) {
	t.Helper()
	if err := st.(store.Rollups).Rollup(ctx(t), since, until); err != nil {
		t.Fatalf("Rollup(%v, %v): %v", since, until, err)
	}
}

// RollupData is the suite's observations plus a spot history of 3000 minutes
// (past two UTC midnights) after them.
func RollupData() []schemas.Observation {
	spot := Observations()[2]
	spot.EffectiveAt = T0.Add(40 * time.Minute)
	return append(Observations(), SpotHistory(spot, 3000)...)
}

func (s *suite) rollup(t *testing.T) {
	st := s.fresh(t)
	if got := bars(t, st, store.BarQuery{Width: store.Daily}); len(got) != 0 {
		t.Fatalf("bars before any rollup: %d", len(got))
	}
	all := RollupData()
	// Written three times, the last time with one identity corrected: bars count
	// each identity once, with its last write.
	write(t, st, all)
	write(t, st, all)
	fixed := all[3] // aws spot at T0+20m
	fixed.PriceUSDHour, fixed.PriceUSDGPUHour = 24.0, 3.0
	all = append(all, fixed)
	write(t, st, all)
	rollup(t, st, time.Time{}, time.Time{})
	rollup(t, st, time.Time{}, time.Time{}) // re-running changes nothing
	for _, w := range store.Widths {
		want := WantBars(all, w)
		if d := BarsDiff(bars(t, st, store.BarQuery{Width: w}), want); d != "" {
			t.Fatalf("%v bars: %s", w, d)
		}
	}
	hourly := WantBars(all, store.Hourly)
	for _, b := range hourly {
		if b.Provider == "aws" && b.Pricing == schemas.Spot && b.Start.Equal(T0) {
			// T0+10m 31.46/8, T0+20m corrected to 3.0, T0+30m 33.01/8, then the walk's
			// 20 minutes from T0+40m.
			if b.Open != 31.46/8 || b.Low != 3.0 || b.Count != 23 {
				t.Fatalf("aws spot bar at T0: %+v", b)
			}
		}
	}
	// Filters select series as for observations; Since and Until bound the bar start.
	for _, q := range []store.BarQuery{
		{Width: store.Hourly, Filter: store.Filter{GPU: "H100-SXM-80GB", Pricing: schemas.Spot}},
		{Width: store.Hourly, Filter: store.Filter{Tier: schemas.TierSpecialist}},
		{Width: store.Daily, Filter: store.Filter{Provider: "aws", Region: "us-east-1"}},
		{Width: store.Hourly, Filter: store.Filter{Since: T0.Add(2 * time.Hour), Until: T0.Add(26 * time.Hour)}},
	} {
		var want []store.Bar
		for _, b := range WantBars(all, q.Width) {
			o := schemas.Observation{GPU: b.GPU, Provider: b.Provider, Pricing: b.Pricing, Region: b.Region,
				Tier: b.Tier, EffectiveAt: b.Start}
			if Matches(q.Filter, o) {
				want = append(want, b)
			}
		}
		if len(want) == 0 {
			t.Fatalf("query %+v selects nothing in the reference", q)
		}
		if d := BarsDiff(bars(t, st, q), want); d != "" {
			t.Errorf("Bars(%+v): %s", q, d)
		}
	}
	// CarryIn adds each series' last bar before Since.
	since := T0.Add(30 * time.Hour)
	got := bars(t, st, store.BarQuery{Width: store.Daily, CarryIn: true, Filter: store.Filter{Since: since}})
	var want []store.Bar
	daily := WantBars(all, store.Daily)
	for i, b := range daily {
		lastBefore := b.Start.Before(since) &&
			(i+1 == len(daily) || daily[i+1].SeriesKey() != b.SeriesKey() || !daily[i+1].Start.Before(since))
		if !b.Start.Before(since) || lastBefore {
			want = append(want, b)
		}
	}
	if d := BarsDiff(got, want); d != "" {
		t.Fatalf("CarryIn: %s", d)
	}
	r := st.(store.Rollups)
	if _, err := r.Bars(ctx(t), store.BarQuery{Width: 5 * time.Minute}); err == nil {
		t.Error("Bars with a 5-minute width: no error")
	}
}

// rollupIncremental checks that a Rollup over a short span rewrites exactly the
// bars of the days it meets, from all their observations.
func (s *suite) rollupIncremental(t *testing.T) {
	st := s.fresh(t)
	all := RollupData()
	write(t, st, all)
	rollup(t, st, time.Time{}, time.Time{})
	// New and corrected points in one hour of the spot history, a day after T0.
	spot := all[len(all)-1]
	at := T0.Add(25*time.Hour + 7*time.Minute + 30*time.Second)
	extra := spot
	extra.EffectiveAt, extra.PriceUSDGPUHour = at, 0.5
	corrected := all[len(all)-1500]
	corrected.PriceUSDGPUHour = 9.75
	more := []schemas.Observation{extra, corrected}
	write(t, st, more)
	all = append(all, more...)
	// Before the rollup the bars are stale; after a rollup of the span written they
	// match the reference everywhere.
	if d := BarsDiff(bars(t, st, store.BarQuery{Width: store.Hourly}), WantBars(all, store.Hourly)); d == "" {
		t.Fatal("bars match new observations before any rollup: the test proves nothing")
	}
	lo, hi := corrected.EffectiveAt, extra.EffectiveAt
	if hi.Before(lo) {
		lo, hi = hi, lo
	}
	rollup(t, st, lo, hi.Add(time.Second))
	for _, w := range store.Widths {
		if d := BarsDiff(bars(t, st, store.BarQuery{Width: w}), WantBars(all, w)); d != "" {
			t.Fatalf("%v bars after an incremental rollup: %s", w, d)
		}
	}
}

// longFloat matches a number printed with six decimals or more.
var longFloat = regexp.MustCompile(`-?\d+\.\d{6,}(e[-+]\d+)?`)

// RoundFigures is s with every number printed with six decimals or more rounded
// to 12 significant digits: reads of bars compared as text, where a bar's mean may
// have summed its prices in another order (a fold's sum, the store's avg()).
func RoundFigures(s string) string {
	return longFloat.ReplaceAllStringFunc(s, func(x string) string {
		f, _ := strconv.ParseFloat(x, 64)
		return strconv.FormatFloat(f, 'g', 12, 64)
	})
}

// rollupFolded checks a store that writes bars from the fold of a run's rows
// (store.FoldedRollups): after a run into days with no bars (its rows in several
// writes, some rewriting identities of an earlier write), and after a second run
// that corrects identities of the first, adds points to hours and days already
// rolled up and opens a new day, every bar of every width is the reference's over
// all the rows written, as after a Rollup.
func (s *suite) rollupFolded(t *testing.T) {
	st := s.fresh(t)
	fr, ok := st.(store.FoldedRollups)
	if !ok {
		t.Skip("the store builds its bars with Rollup alone")
	}
	run := func(obs ...[]schemas.Observation) {
		t.Helper()
		fold := store.NewBarFold(0)
		for _, o := range obs {
			write(t, st, o)
			fold.Add(o)
		}
		if err := fr.RollupFolded(ctx(t), fold); err != nil {
			t.Fatalf("RollupFolded: %v", err)
		}
	}
	// What the store reads from its bars and the summaries it derives from them
	// (day series, volatility days): the same after the fold as after a Rollup.
	reads := func() string {
		t.Helper()
		var b strings.Builder
		for _, q := range []store.BarQuery{{Width: store.Daily, CarryIn: true, Filter: store.Filter{Since: T0.Add(30 *
			time.Hour)}}, {Width: store.Hourly, CarryIn: true, Filter: store.Filter{Since: T0.Add(30 * time.Hour),
			Pricing: schemas.Spot}}} {
			fmt.Fprintf(&b, "%+v\n", bars(t, st, q))
			if vs, ok := st.(store.VolatilityStats); ok {
				v, err := vs.Volatilities(ctx(t), q, T0.Add(100*time.Hour), 0)
				if err != nil {
					t.Fatalf("Volatilities: %v", err)
				}
				fmt.Fprintf(&b, "%+v\n", v)
			}
		}
		return RoundFigures(b.String())
	}
	check := func(what string, all []schemas.Observation) {
		t.Helper()
		for _, w := range store.Widths {
			if d := BarsDiff(bars(t, st, store.BarQuery{Width: w}), WantBars(all, w)); d != "" {
				t.Fatalf("%v bars %s: %s", w, what, d)
			}
		}
		folded := reads()
		rollup(t, st, time.Time{}, time.Time{})
		if rolled := reads(); folded != rolled {
			t.Fatalf("reads %s differ from those after a Rollup:\n%s\nafter a Rollup:\n%s", what, folded, rolled)
		}
	}
	all := RollupData()
	half := len(all) / 2
	rewritten := slices.Clone(all[half-40 : half-20])
	for i := range rewritten {
		rewritten[i].PriceUSDGPUHour += 0.125
	}
	run(all[:half], all[half:], rewritten)
	all = append(all, rewritten...)
	check("after a run into empty days", all)

	spot := all[len(all)-1]
	extra := spot
	extra.EffectiveAt, extra.PriceUSDGPUHour = T0.Add(25*time.Hour+7*time.Minute+30*time.Second), 0.5
	corrected := all[len(all)-1500]
	corrected.PriceUSDGPUHour = 9.75
	later := spot
	later.EffectiveAt, later.PriceUSDGPUHour = spot.EffectiveAt.Add(72*time.Hour), 1.25
	more := []schemas.Observation{extra, corrected, later}
	run(more)
	all = append(all, more...)
	check("after a run into days rolled up before", all)
}

// Fresh opens a store with open, migrates it and closes it at cleanup: the start of
// every check, here and in analytics/figurestest.
func Fresh(t *testing.T, open func(t *testing.T) store.Store) store.Store {
	t.Helper()
	return (&suite{open: open}).fresh(t)
}

// Write writes obs to st, failing the test on an error.
func Write(t *testing.T, st store.Store, obs []schemas.Observation) {
	t.Helper()
	write(t, st, obs)
}

// Rollup rebuilds st's bars over [from, to), failing the test on an error.
func Rollup(t *testing.T, st store.Store, from, to time.Time) {
	t.Helper()
	rollup(t, st, from, to)
}

// Bars reads st's bars for q, failing the test on an error.
func Bars(t *testing.T, st store.Store, q store.BarQuery) []store.Bar {
	t.Helper()
	return bars(t, st, q)
}

// Collect writes day d of Collection to st and rebuilds the bars it touches.
func Collect(t *testing.T, st store.Store, d int) {
	t.Helper()
	collect(t, st, d)
}

// H100 is an on-demand H100 SXM row of an 8-GPU SKU at gpuHour per GPU-hour.
func H100(provider, tier, sku string, observed, effective time.Time, gpuHour float64) schemas.Observation {
	return h100(provider, tier, sku, observed, effective, gpuHour)
}
