package aws

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// SpotAdvisorURL is the public JSON behind the EC2 Spot Instance Advisor
// (https://aws.amazon.com/ec2/spot/instance-advisor/): no credentials. Its
// "ranges" are the interruption bands (the share of spot capacity AWS reclaimed
// over the trailing month: "<5%", "5-10%", "10-15%", "15-20%", ">20%") and
// spot_advisor.<region>.<Linux|Windows>.<instance type> gives {s: savings over
// on-demand in %, r: the band's index}.
const SpotAdvisorURL = "https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json"

// SourceSpotAdvisor is the Source of signals read from the Spot Advisor.
const SourceSpotAdvisor = "aws-spot-advisor"

// SpotAdvisor is what the Spot Advisor file gives: one interruption signal per GPU
// instance type and region (Linux), and the records passed over.
type SpotAdvisor struct {
	Signals []schemas.Signal `json:"signals"`
	// Bands are the file's ranges by index, as published.
	Bands   []SpotBand          `json:"bands"`
	Rejects []scrapers.Rejected `json:"rejects,omitempty"`
	Skipped map[string]int      `json:"skipped,omitempty"`
}

// SpotBand is one of the file's interruption ranges.
type SpotBand struct {
	Index int    `json:"index"`
	Label string `json:"label"`
	Dots  int    `json:"dots"`
	Max   int    `json:"max"`
}

type spotAdvisorFile struct {
	Ranges      []SpotBand                                        `json:"ranges"`
	SpotAdvisor map[string]map[string]map[string]spotAdvisorEntry `json:"spot_advisor"`
}

type spotAdvisorEntry struct {
	S *float64 `json:"s"`
	R *int     `json:"r"`
}

// ParseSpotAdvisor reads the Spot Advisor JSON. Rules:
//   - Only GPU instance types (the family table of this package) of the Linux
//     section are kept: prices are collected for Linux; Windows and non-GPU types
//     are counted as skipped.
//   - Each kept entry is a signal of kind interruption: Value the band index r,
//     Label the band's label from ranges, Attrs savings_pct (s), band_max (the
//     range's max, the percentage the advisor uses as the band's upper bound),
//     gpu_name and gpu_count from the family table.
//   - An entry without r, or whose r is not in ranges, is rejected with the reason.
//   - The file has no date of its own: effective_at and observed_at are
//     observedAt (the time of the fetch).
//   - A file without ranges or spot_advisor is an error.
func ParseSpotAdvisor(r io.Reader, observedAt time.Time) (SpotAdvisor, error) {
	var f spotAdvisorFile
	if err := json.NewDecoder(r).Decode(&f); err != nil {
		return SpotAdvisor{}, fmt.Errorf("aws: spot advisor: %w", err)
	}
	if len(f.Ranges) == 0 || len(f.SpotAdvisor) == 0 {
		return SpotAdvisor{}, fmt.Errorf("aws: spot advisor: no ranges or no spot_advisor section")
	}
	out := SpotAdvisor{Bands: f.Ranges}
	bands := map[int]SpotBand{}
	for _, b := range f.Ranges {
		bands[b.Index] = b
	}
	skip := func(why string) {
		if out.Skipped == nil {
			out.Skipped = map[string]int{}
		}
		out.Skipped[why]++
	}
	at := observedAt.UTC().Truncate(time.Second)
	for _, region := range sortedKeys(f.SpotAdvisor) {
		for _, osName := range sortedKeys(f.SpotAdvisor[region]) {
			types := f.SpotAdvisor[region][osName]
			if osName != "Linux" {
				skip(osName)
				continue
			}
			for _, it := range sortedKeys(types) {
				spec := specOf(it)
				if !spec.Known {
					skip("not a GPU instance type")
					continue
				}
				e := types[it]
				if e.R == nil {
					out.Rejects = append(out.Rejects, scrapers.Rejected{Raw: region + " " + it, Reason: "no range index (r)"})
					continue
				}
				b, ok := bands[*e.R]
				if !ok {
					out.Rejects = append(out.Rejects, scrapers.Rejected{Raw: region + " " + it,
						Reason: fmt.Sprintf("range index %d not in ranges", *e.R)})
					continue
				}
				attrs := map[string]string{"band_max": strconv.Itoa(b.Max), "gpu_name": spec.GPUName}
				if spec.MemoryGB > 0 {
					attrs["gpu_memory_gb"] = strconv.FormatFloat(spec.MemoryGB, 'f', -1, 64)
				}
				if spec.GPUCount > 0 {
					attrs["gpu_count"] = strconv.FormatFloat(spec.GPUCount, 'f', -1, 64)
				}
				if e.S != nil {
					attrs["savings_pct"] = strconv.FormatFloat(*e.S, 'f', -1, 64)
				}
				out.Signals = append(out.Signals, schemas.Signal{ObservedAt: at, EffectiveAt: at, Provider: "aws",
					SKU: it, Region: region, Kind: schemas.SignalInterruption, Value: float64(b.Index), Label: b.Label,
					Source: SourceSpotAdvisor, SourceURL: SpotAdvisorURL, Attrs: attrs})
			}
		}
	}
	return out, nil
}

// FetchSpotAdvisor fetches the Spot Advisor file at url (SpotAdvisorURL when "")
// through c and parses it; the signals' SourceURL is the URL fetched.
func FetchSpotAdvisor(ctx context.Context, c *fetch.Client, url string, now time.Time) (SpotAdvisor, error) {
	if url == "" {
		url = SpotAdvisorURL
	}
	resp, err := c.Get(ctx, url, nil)
	if err != nil {
		return SpotAdvisor{}, fmt.Errorf("aws: spot advisor: %w", err)
	}
	res, err := ParseSpotAdvisor(bytes.NewReader(resp.Body), now)
	if err != nil {
		return res, err
	}
	for i := range res.Signals {
		res.Signals[i].SourceURL = schemas.RedactURL(url)
	}
	return res, nil
}
