package analytics

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
)

// HoursPerMonth is the month of the Spot Advisor's trailing-month shares: 730
// hours, the month every monthly price of gpuprice uses.
const HoursPerMonth = 730

// InterruptionBand is one published interruption band and the share of interrupted
// instances over a period that gpuprice reads it as (docs/risk.md, "Band to rate").
type InterruptionBand struct {
	Index int
	Label string
	// Share is the share (0..1) of running instances taken back within
	// PeriodHours that the band is read as: the band's midpoint; an open top band
	// (">20%", "20+") is read as 25 %, half a band width above its floor.
	Share float64
	// PeriodHours is the period the band's share is of: 730 (a month) for AWS's
	// trailing-month bands, 1 for Azure's eviction rates, quoted per hour.
	PeriodHours float64
}

// AWSBands are the Spot Advisor's bands (ranges[].index and label of
// spot-advisor-data.json) and the shares of a month they are read as.
var AWSBands = []InterruptionBand{
	{0, "<5%", 0.025, HoursPerMonth},
	{1, "5-10%", 0.075, HoursPerMonth},
	{2, "10-15%", 0.125, HoursPerMonth},
	{3, "15-20%", 0.175, HoursPerMonth},
	{4, ">20%", 0.25, HoursPerMonth},
}

// AzureBands are Azure's spot eviction rate bands (Resource Graph
// skuspotevictionrate, properties.evictionRate), which Azure quotes as the chance
// of an eviction within the next hour, from the last 28 days; read as shares of
// an hour.
var AzureBands = []InterruptionBand{
	{0, "0-5", 0.025, 1},
	{1, "5-10", 0.075, 1},
	{2, "10-15", 0.125, 1},
	{3, "15-20", 0.175, 1},
	{4, "20+", 0.25, 1},
}

// Rate is λ, the interruptions per hour of running of an instance that is taken
// back with probability Share within PeriodHours, when interruptions come as a
// Poisson process: Share = 1 − e^(−λ·PeriodHours), so λ = −ln(1 − Share) /
// PeriodHours.
func (b InterruptionBand) Rate() float64 { return -math.Log1p(-b.Share) / b.PeriodHours }

// AWSBand returns the Spot Advisor band of index i.
func AWSBand(i int) (InterruptionBand, bool) { return bandAt(AWSBands, i) }

func bandAt(bands []InterruptionBand, i int) (InterruptionBand, bool) {
	if i < 0 || i >= len(bands) {
		return InterruptionBand{}, false
	}
	return bands[i], true
}

// BandOf returns the band a provider's interruption signal states (its value the
// band's index, its label the band's), when gpuprice maps that provider's bands
// (AWS, Azure) and the label is the one of that index: a signal whose label does
// not match is not read as a rate.
func BandOf(provider string, index float64, label string) (InterruptionBand, bool) {
	var bands []InterruptionBand
	switch provider {
	case "aws":
		bands = AWSBands
	case "azure":
		bands = AzureBands
	default:
		return InterruptionBand{}, false
	}
	if index != math.Trunc(index) {
		return InterruptionBand{}, false
	}
	b, ok := bandAt(bands, int(index))
	return b, ok && b.Label == label
}

// SpotJob is a job to finish: Hours of work (the hours it runs when never interrupted),
// a checkpoint every CheckpointMin minutes, RestartMin minutes from an
// interruption to work resuming (a new instance, the checkpoint loaded), billed.
type SpotJob struct {
	Hours         float64
	CheckpointMin float64
	RestartMin    float64
}

// ErrJob marks a job that cannot be priced.
var ErrJob = errors.New("analytics: job")

// Validate reports a job with no hours, or a negative or non-finite figure.
func (j SpotJob) Validate() error {
	for _, v := range []float64{j.Hours, j.CheckpointMin, j.RestartMin} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("%w: figures must be finite and >= 0 (hours %v, checkpoint %v min, restart %v min)",
				ErrJob, j.Hours, j.CheckpointMin, j.RestartMin)
		}
	}
	if j.Hours == 0 {
		return fmt.Errorf("%w: no hours of work", ErrJob)
	}
	return nil
}

// JobCost is what finishing a job costs at a price with an interruption rate.
type JobCost struct {
	PriceHour float64 // the sticker price per hour
	Rate      float64 // λ, interruptions per hour of running
	Job       SpotJob
	// Sticker is PriceHour × Hours: the cost if never interrupted.
	Sticker float64
	// Interruptions is the expected count, λ × Hours.
	Interruptions float64
	// LostHoursEach is the time one interruption costs, (C/2 + R)/60 hours.
	LostHoursEach float64
	// Factor is 1 + λ·(C/2 + R)/60; Expected = Sticker × Factor.
	Factor   float64
	Expected float64
}

// ExpectedJobCost is the expected cost of finishing j at priceHour when the offer
// is interrupted λ = rate times per hour of running (docs/risk.md):
//
//	expected = price × H × (1 + λ·(C/2 + R)/60)
//
// Each interruption loses on average half a checkpoint interval of work (it falls
// uniformly between two checkpoints) and the restart time, both billed; the
// expected count over H hours of work is λ·H. Work redone after an interruption
// can itself be interrupted: that term is of order (λ·(C/2+R)/60)² and left out.
// A rate of 0 (on-demand, reserved) gives the sticker cost.
func ExpectedJobCost(priceHour, rate float64, j SpotJob) (JobCost, error) {
	if err := j.Validate(); err != nil {
		return JobCost{}, err
	}
	if math.IsNaN(priceHour) || math.IsInf(priceHour, 0) || priceHour < 0 ||
		math.IsNaN(rate) || math.IsInf(rate, 0) || rate < 0 {
		return JobCost{}, fmt.Errorf("%w: price %v and rate %v must be finite and >= 0", ErrJob, priceHour, rate)
	}
	c := JobCost{PriceHour: priceHour, Rate: rate, Job: j}
	c.Sticker = priceHour * j.Hours
	c.Interruptions = rate * j.Hours
	c.LostHoursEach = (j.CheckpointMin/2 + j.RestartMin) / 60
	c.Factor = 1 + rate*c.LostHoursEach
	c.Expected = c.Sticker * c.Factor
	return c, nil
}

// Explain writes the computation of c in words and figures, band the band the rate
// came from ("" when none: a rate of 0 for capacity that is not interrupted).
func (c JobCost) Explain(band string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "job: %g h of work, checkpoint every %g min, restart %g min\n",
		c.Job.Hours, c.Job.CheckpointMin, c.Job.RestartMin)
	if band != "" {
		fmt.Fprintf(&b, "interruption rate: band %s → λ = %.6g per hour (docs/risk.md)\n", band, c.Rate)
	} else {
		fmt.Fprintf(&b, "interruption rate: λ = %.6g per hour\n", c.Rate)
	}
	fmt.Fprintf(&b, "expected interruptions: λ × H = %.4g\n", c.Interruptions)
	fmt.Fprintf(&b, "lost per interruption: (C/2 + R)/60 = %.4g h\n", c.LostHoursEach)
	fmt.Fprintf(&b, "expected cost = price × H × (1 + λ·(C/2 + R)/60) = %.4f × %g × %.6f = %.4f (sticker %.4f)\n",
		c.PriceHour, c.Job.Hours, c.Factor, c.Expected, c.Sticker)
	return b.String()
}

// BandChange is a step in a series' interruption band: the band it moved to, from
// which (FromLabel "" for the first signal of the series), and when.
type BandChange struct {
	Provider  string    `json:"provider"`
	SKU       string    `json:"sku"`
	Region    string    `json:"region"`
	Zone      string    `json:"zone"`
	GPU       string    `json:"gpu"` // the series' canonical GPU ("" in signals stored without one)
	At        time.Time `json:"at"`
	From      float64   `json:"from"`
	FromLabel string    `json:"from_label"`
	To        float64   `json:"to"`
	ToLabel   string    `json:"to_label"`
	// Rise is +1 when the band moved up (more interruptions), -1 down, 0 for the
	// first signal of a series.
	Rise int `json:"rise"`
}

// SameSeries reports whether c and o are changes of one series (provider, sku,
// region, zone).
func (c BandChange) SameSeries(o BandChange) bool {
	return c.Provider == o.Provider && c.SKU == o.SKU && c.Region == o.Region && c.Zone == o.Zone
}

// BandChanges returns, per series (provider, sku, region, zone) of the
// interruption signals in sigs, its first band and every change after it, ordered
// by series then time. sigs must be ordered by series then effective_at, as
// store.Signals returns them; signals of other kinds are ignored.
func BandChanges(sigs []schemas.Signal) []BandChange {
	var out []BandChange
	var last *schemas.Signal
	for i := range sigs {
		s := &sigs[i]
		if s.Kind != schemas.SignalInterruption {
			continue
		}
		same := last != nil && last.SameSeries(*s)
		switch {
		case !same:
			out = append(out, BandChange{Provider: s.Provider, SKU: s.SKU, Region: s.Region, Zone: s.Zone, GPU: s.GPU,
				At: s.EffectiveAt, To: s.Value, ToLabel: s.Label})
		case s.Value != last.Value:
			rise := 1
			if s.Value < last.Value {
				rise = -1
			}
			out = append(out, BandChange{Provider: s.Provider, SKU: s.SKU, Region: s.Region, Zone: s.Zone, GPU: s.GPU,
				At: s.EffectiveAt, From: last.Value, FromLabel: last.Label, To: s.Value, ToLabel: s.Label, Rise: rise})
		}
		last = s
	}
	return out
}
