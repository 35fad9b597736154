package analytics

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// Band rates, hand-checked: λ = −ln(1 − share)/730.
func TestAWSBandRates(t *testing.T) {
	for _, c := range []struct {
		index int
		label string
		rate  float64
	}{
		{0, "<5%", 3.46819e-5},    // −ln(0.975)/730 = 0.0253178/730
		{1, "5-10%", 1.06797e-4},  // −ln(0.925)/730 = 0.0779615/730
		{2, "10-15%", 1.82920e-4}, // −ln(0.875)/730 = 0.133531/730
		{3, "15-20%", 2.63523e-4}, // −ln(0.825)/730 = 0.192372/730
		{4, ">20%", 3.94085e-4},   // −ln(0.75)/730 = 0.287682/730
	} {
		b, ok := AWSBand(c.index)
		if !ok || b.Label != c.label || !within(b.Rate(), c.rate, 1e-9) {
			t.Errorf("band %d = %+v rate %.6g, want %s %.6g", c.index, b, b.Rate(), c.label, c.rate)
		}
	}
	if _, ok := AWSBand(5); ok {
		t.Error("band 5 exists")
	}
	if _, ok := AWSBand(-1); ok {
		t.Error("band -1 exists")
	}
	// Monotonic: a higher band is never cheaper.
	for i := 1; i < len(AWSBands); i++ {
		if AWSBands[i].Rate() <= AWSBands[i-1].Rate() {
			t.Errorf("band %d rate %v <= band %d", i, AWSBands[i].Rate(), i-1)
		}
	}
}

func TestExpectedJobCost(t *testing.T) {
	// p5.48xlarge spot at $40/h in the >20% band, 100 h, checkpoint 30 min, restart 10 min:
	// (C/2 + R)/60 = 25/60 = 0.416667 h; factor 1 + 3.94085e-4 × 0.416667 = 1.000164202;
	// expected 4000 × 1.000164202 = 4000.6568.
	top, _ := AWSBand(4)
	c, err := ExpectedJobCost(40, top.Rate(), SpotJob{Hours: 100, CheckpointMin: 30, RestartMin: 10})
	if err != nil {
		t.Fatal(err)
	}
	if c.Sticker != 4000 || !within(c.LostHoursEach, 25.0/60, 1e-12) || !within(c.Factor, 1.000164202, 1e-9) ||
		!within(c.Expected, 4000.6568, 1e-3) || !within(c.Interruptions, 0.0394085, 1e-6) {
		t.Errorf("cost %+v", c)
	}
	// A rate given directly: 1 interruption every 4 hours, checkpoint 60, restart 15:
	// factor 1 + 0.25 × (30 + 15)/60 = 1.1875; 10 h at $2 → 20 × 1.1875 = 23.75.
	c, err = ExpectedJobCost(2, 0.25, SpotJob{Hours: 10, CheckpointMin: 60, RestartMin: 15})
	if err != nil || c.Factor != 1.1875 || c.Expected != 23.75 || c.Interruptions != 2.5 {
		t.Errorf("cost %+v %v", c, err)
	}
	// Never interrupted: the sticker cost.
	c, err = ExpectedJobCost(3.5, 0, SpotJob{Hours: 8, CheckpointMin: 30, RestartMin: 10})
	if err != nil || c.Expected != 28 || c.Factor != 1 {
		t.Errorf("on-demand cost %+v %v", c, err)
	}
	ex := c.Explain("")
	if !strings.Contains(ex, "= 28.0000 (sticker 28.0000)") {
		t.Errorf("explain:\n%s", ex)
	}
	for _, bad := range []struct {
		price, rate float64
		j           SpotJob
	}{
		{1, 0, SpotJob{}},
		{1, 0, SpotJob{Hours: -1}},
		{1, 0, SpotJob{Hours: 1, CheckpointMin: math.NaN()}},
		{1, 0, SpotJob{Hours: 1, RestartMin: math.Inf(1)}},
		{-1, 0, SpotJob{Hours: 1}},
		{1, -0.1, SpotJob{Hours: 1}},
	} {
		if _, err := ExpectedJobCost(bad.price, bad.rate, bad.j); !errors.Is(err, ErrJob) {
			t.Errorf("%+v: err %v", bad, err)
		}
	}
}

func TestExplainJobCost(t *testing.T) {
	top, _ := AWSBand(4)
	c, _ := ExpectedJobCost(40, top.Rate(), SpotJob{Hours: 100, CheckpointMin: 30, RestartMin: 10})
	ex := c.Explain(top.Label)
	for _, want := range []string{"band >20% → λ = 0.000394085 per hour", "(C/2 + R)/60 = 0.4167 h",
		"= 40.0000 × 100 × 1.000164 = 4000.6568 (sticker 4000.0000)"} {
		if !strings.Contains(ex, want) {
			t.Errorf("explain lacks %q:\n%s", want, ex)
		}
	}
}

func within(a, b, tol float64) bool { return math.Abs(a-b) <= tol }

func TestBandChanges(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2025, 6, d, 0, 0, 0, 0, time.UTC) }
	sig := func(sku, region string, d int, v float64, label string) schemas.Signal {
		return schemas.Signal{Provider: "aws", SKU: sku, Region: region, Kind: schemas.SignalInterruption,
			EffectiveAt: day(d), Value: v, Label: label}
	}
	stock := schemas.Signal{Provider: "aws", SKU: "p5.48xlarge", Region: "us-east-1", Kind: schemas.SignalStock,
		EffectiveAt: day(2), Value: 0}
	in := []schemas.Signal{
		sig("p5.48xlarge", "us-east-1", 1, 4, ">20%"),
		stock, // another kind: ignored
		sig("p5.48xlarge", "us-east-1", 2, 4, ">20%"), // no change
		sig("p5.48xlarge", "us-east-1", 3, 2, "10-15%"),
		sig("p5.48xlarge", "us-east-1", 4, 3, "15-20%"),
		sig("p5.48xlarge", "us-west-2", 1, 1, "5-10%"), // a new series
	}
	got := BandChanges(in)
	want := []BandChange{
		{Provider: "aws", SKU: "p5.48xlarge", Region: "us-east-1", At: day(1), To: 4, ToLabel: ">20%"},
		{Provider: "aws", SKU: "p5.48xlarge", Region: "us-east-1", At: day(3), From: 4, FromLabel: ">20%", To: 2,
			ToLabel: "10-15%", Rise: -1},
		{Provider: "aws", SKU: "p5.48xlarge", Region: "us-east-1", At: day(4), From: 2, FromLabel: "10-15%", To: 3,
			ToLabel: "15-20%", Rise: 1},
		{Provider: "aws", SKU: "p5.48xlarge", Region: "us-west-2", At: day(1), To: 1, ToLabel: "5-10%"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("changes:\n got %+v\nwant %+v", got, want)
	}
	if got := BandChanges(nil); got != nil {
		t.Errorf("no signals: %v", got)
	}
}

// TestAzureBandRates: Azure quotes its eviction rates per hour, so a band's share
// is of one hour: λ = −ln(1 − share), 730 times the AWS band of the same shares.
func TestAzureBandRates(t *testing.T) {
	for i, want := range []float64{2.5317807984e-2, 7.7961541470e-2, 1.3353139263e-1, 1.9237189264e-1,
		2.8768207245e-1} {
		b, ok := BandOf("azure", float64(i), AzureBands[i].Label)
		if !ok || math.Abs(b.Rate()-want) > 1e-9 {
			t.Errorf("azure band %d: %v %v, want λ %v", i, b.Rate(), ok, want)
		}
		if aws, _ := AWSBand(i); math.Abs(b.Rate()/aws.Rate()-HoursPerMonth) > 1e-6 {
			t.Errorf("azure band %d is not 730 × AWS's: %v", i, b.Rate()/aws.Rate())
		}
	}
	for _, c := range []struct {
		provider string
		index    float64
		label    string
	}{{"azure", 4, ">20%"}, {"aws", 4, "20+"}, {"gcp", 0, "0-5"}, {"azure", 1.5, "5-10"}, {"azure", 5, "25+"}} {
		if _, ok := BandOf(c.provider, c.index, c.label); ok {
			t.Errorf("BandOf(%q, %v, %q) mapped", c.provider, c.index, c.label)
		}
	}
}
