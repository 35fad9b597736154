package alert

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// SeriesRef is what an alert is about, as the web app's series view selects it:
// a GPU and pricing kind, and the provider, region, zone and SKU when the alert is
// about one offering or one series (empty: every value).
type SeriesRef struct {
	GPU      string `json:"gpu,omitempty"`
	Provider string `json:"provider,omitempty"`
	Pricing  string `json:"pricing,omitempty"`
	Region   string `json:"region,omitempty"`
	Zone     string `json:"zone,omitempty"`
	SKU      string `json:"sku,omitempty"`
	Source   string `json:"source,omitempty"` // source_failed: the source
}

// String is the reference as key=value pairs, e.g. "gpu=H100-SXM-80GB provider=aws
// pricing=spot region=us-east-1".
func (s SeriesRef) String() string {
	var parts []string
	for _, kv := range [][2]string{{"gpu", s.GPU}, {"provider", s.Provider}, {"pricing", s.Pricing}, {"region", s.Region},
		{"zone", s.Zone}, {"sku", s.SKU}, {"source", s.Source}} {
		if kv[1] != "" {
			parts = append(parts, kv[0]+"="+kv[1])
		}
	}
	return strings.Join(parts, " ")
}

// Point is one figure an alert compares, and when it held.
type Point struct {
	// Label says what the figure is: "before" and "after" (spot_move), "first"
	// and "last" ratios with the tier medians "first_hyperscaler",
	// "first_specialist", "last_hyperscaler", "last_specialist" (spread_shift),
	// "cheapest" (price_below), "failed_run" (source_failed).
	Label string `json:"label"`
	// At is when the figure held: the start of its bar (spot_move: an hourly bar;
	// spread_shift: a UTC day), the effective time of a price (price_below), the
	// start of a run (source_failed).
	At    time.Time `json:"at"`
	Value float64   `json:"value"`
	// Unit is "usd_gpu_hour" (a price per GPU-hour), "ratio" (hyperscaler ÷
	// specialist) or "" (a run).
	Unit string `json:"unit,omitempty"`
}

// String is the point as text, e.g. "before $3.0000/GPU-h at 2025-03-10T00:00Z".
func (p Point) String() string {
	at := p.At.UTC().Format("2006-01-02T15:04Z")
	switch p.Unit {
	case "usd_gpu_hour":
		return fmt.Sprintf("%s $%.4f/GPU-h at %s", p.Label, p.Value, at)
	case "ratio":
		return fmt.Sprintf("%s %.4f on %s", p.Label, p.Value, p.At.UTC().Format("2006-01-02"))
	}
	return p.Label + " at " + at
}

// ComparedText is the points as one line, "; "-separated.
func ComparedText(ps []Point) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.String()
	}
	return strings.Join(s, "; ")
}

// ViewURL is the web app's view of what in is about, under publicURL (the root
// the web app is served at, serve.public_url): the series view
// /series?gpu=…&provider=…&pricing=…&region=…, with sku and zone for one series,
// for prices; the sources view for a source. It is "" without publicURL.
func ViewURL(publicURL string, in Instance) string {
	if publicURL == "" || in.Series == nil {
		return ""
	}
	base := strings.TrimRight(publicURL, "/")
	s := in.Series
	if in.Kind == SourceFailed {
		q := url.Values{}
		q.Set("source", s.Source)
		return base + "/sources?" + q.Encode()
	}
	q := url.Values{}
	for _, kv := range [][2]string{{"gpu", s.GPU}, {"provider", s.Provider}, {"pricing", s.Pricing}, {"region", s.Region},
		{"sku", s.SKU}, {"zone", s.Zone}} {
		if kv[1] != "" {
			q.Set(kv[0], kv[1])
		}
	}
	return base + "/series?" + q.Encode()
}

// thresholdText is the threshold with its unit, e.g. "$2/GPU-h", "±10 %".
func thresholdText(v float64, unit string) string {
	n := strconv.FormatFloat(v, 'g', 6, 64)
	switch unit {
	case "usd_gpu_hour":
		return "below $" + n + "/GPU-h"
	case "pct":
		return "±" + n + " %"
	case "runs":
		return n + " failed runs in a row"
	}
	return n
}
