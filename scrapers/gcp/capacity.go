package gcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/scrapers"
)

// This file reads Compute Engine's Spot capacity history (advice.capacityHistory):
// per machine type and zone (or region), the daily Spot preemption rate and the Spot
// list price of the last 30 days. Collect asks it about the machine types it priced
// (preemption.go) and stores the preemption rates as schemas.SignalPreemption
// signals: a share of stops, neither an interruption band nor a rate per running hour
// (docs/risk.md, "GCP preemption"). It needs an OAuth 2.0 access token, not the Cloud
// Billing API key the price source takes.

// DefaultComputeEndpoint is the root of the Compute Engine API, version v1.
const DefaultComputeEndpoint = "https://compute.googleapis.com/compute/v1"

// History types of a capacity history request (CapacityHistoryRequest.types).
const (
	HistoryPreemption = "PREEMPTION"
	HistoryPrice      = "PRICE"
)

// ProvisioningSpot is the only provisioning model the capacity history accepts.
const ProvisioningSpot = "SPOT"

// CapacityHistoryQuery names one capacity history request: the machine type, the
// project and region of the call, and the zone (or region) asked about.
type CapacityHistoryQuery struct {
	// Endpoint is the Compute Engine API root; "" means DefaultComputeEndpoint.
	Endpoint string
	// Project is the project the call is made in (the token's project).
	Project string
	// Region is the region of the call's path, e.g. us-central1.
	Region string
	// Location is the zone or region asked about, as the API takes it ("zones/
	// us-central1-a", a full URL); "" leaves it out (it is optional).
	Location string
	// MachineType is a machine type name, e.g. a3-highgpu-8g. GCP answers for
	// accelerator-optimized machine types (A2, A3, A4, G2), not for N1 machine
	// types with GPUs attached.
	MachineType string
	// Types are the histories asked for; nil means both HistoryPreemption and
	// HistoryPrice.
	Types []string
}

// URL is the request's URL: POST {endpoint}/projects/{project}/regions/{region}/
// advice/capacityHistory.
func (q CapacityHistoryQuery) URL() string {
	ep := q.Endpoint
	if ep == "" {
		ep = DefaultComputeEndpoint
	}
	return strings.TrimRight(ep, "/") + "/projects/" + url.PathEscape(q.Project) + "/regions/" +
		url.PathEscape(q.Region) + "/advice/capacityHistory"
}

// capacityRequest is the documented request body.
type capacityRequest struct {
	InstanceProperties capacityInstance `json:"instanceProperties"`
	LocationPolicy     *capacityPolicy  `json:"locationPolicy,omitempty"`
	Types              []string         `json:"types"`
}

type capacityInstance struct {
	MachineType string             `json:"machineType"`
	Scheduling  capacityScheduling `json:"scheduling"`
}

type capacityScheduling struct {
	ProvisioningModel string `json:"provisioningModel"`
}

type capacityPolicy struct {
	Location string `json:"location"`
}

// body is the request body of q.
func (q CapacityHistoryQuery) body() ([]byte, error) {
	types := q.Types
	if len(types) == 0 {
		types = []string{HistoryPreemption, HistoryPrice}
	}
	req := capacityRequest{
		InstanceProperties: capacityInstance{MachineType: q.MachineType,
			Scheduling: capacityScheduling{ProvisioningModel: ProvisioningSpot}},
		Types: types,
	}
	if q.Location != "" {
		req.LocationPolicy = &capacityPolicy{Location: q.Location}
	}
	return json.Marshal(req)
}

// PreemptionRecord is one interval (a day, cut at midnight Pacific time) of a machine
// type's Spot preemption history. Rate is, per GCP, the Spot VMs preempted that day
// divided by the Spot VMs that stopped running that day (preempted, or stopped,
// suspended or deleted by their users): a share of stops between 0 and 1, not a rate
// per hour of running.
type PreemptionRecord struct {
	Start time.Time `json:"start"` // the interval's start
	End   time.Time `json:"end"`   // the interval's end
	Rate  float64   `json:"rate"`  // preemptionRate: preempted / stopped Spot VMs, 0..1
}

// PriceRecord is the Spot list price of the machine type over one interval, per
// hour, in Currency.
type PriceRecord struct {
	Start    time.Time `json:"start"`    // the interval's start
	End      time.Time `json:"end"`      // the interval's end
	Currency string    `json:"currency"` // listPrice.currencyCode
	Price    float64   `json:"price"`    // listPrice: units + nanos/1e9
}

// CapacityHistory is one capacity history answer.
type CapacityHistory struct {
	// MachineType is the machine type answered about.
	MachineType string `json:"machine_type"`
	// Location is the zone or region answered about, as the API writes it (a URL).
	Location string `json:"location"`
	// Region and Zone are read from Location (the zone's region is the zone without
	// its last "-x"); Zone is "" for a region.
	Region string `json:"region"`
	Zone   string `json:"zone"`
	// Preemption and Prices are the readable records, in the answer's order.
	Preemption []PreemptionRecord `json:"preemption"`
	Prices     []PriceRecord      `json:"prices"`
	// Rejects are the records that could not be read, with the reason.
	Rejects []scrapers.Rejected `json:"rejects,omitempty"`
}

// capacityResponse is the documented response body.
type capacityResponse struct {
	MachineType       *string           `json:"machineType"`
	Location          string            `json:"location"`
	PreemptionHistory []json.RawMessage `json:"preemptionHistory"`
	PriceHistory      []json.RawMessage `json:"priceHistory"`
}

// interval is google.type.Interval: RFC 3339 times.
type interval struct {
	StartTime string `json:"startTime"`
	EndTime   string `json:"endTime"`
}

func (iv interval) times() (time.Time, time.Time, error) {
	s, err := time.Parse(time.RFC3339Nano, iv.StartTime)
	if err != nil {
		return time.Time{}, time.Time{}, fmt.Errorf("interval start %q: %w", iv.StartTime, err)
	}
	e, err := time.Parse(time.RFC3339Nano, iv.EndTime)
	if err != nil {
		return time.Time{}, time.Time{}, fmt.Errorf("interval end %q: %w", iv.EndTime, err)
	}
	if !e.After(s) {
		return time.Time{}, time.Time{}, fmt.Errorf("interval ends (%s) before it starts (%s)", iv.EndTime, iv.StartTime)
	}
	return s.UTC(), e.UTC(), nil
}

var (
	locationRE = regexp.MustCompile(`(?:^|/)(zones|regions)/([a-z0-9-]+)$`)
	zoneRE     = regexp.MustCompile(`^([a-z]+-[a-z]+[0-9]+)-[a-z]$`)
)

// ParseCapacityHistory reads one advice.capacityHistory answer. Rules:
//   - An answer without machineType is an error (an error body served with 200).
//   - A preemption record needs an interval and a preemptionRate within 0…1; a price
//     record an interval and a listPrice (units + nanos/1e9, with its currency).
//     A record that does not is rejected with the reason, the others are kept.
//   - Region and Zone are read from location ("…/zones/us-central1-a" →
//     us-central1, us-central1-a; "…/regions/us-central1" → us-central1, "").
//
// It is pure.
func ParseCapacityHistory(r io.Reader) (CapacityHistory, error) {
	var resp capacityResponse
	if err := json.NewDecoder(r).Decode(&resp); err != nil {
		return CapacityHistory{}, fmt.Errorf("gcp: capacity history: decoding response: %w", err)
	}
	if resp.MachineType == nil {
		return CapacityHistory{}, fmt.Errorf("gcp: capacity history: response has no machineType")
	}
	h := CapacityHistory{MachineType: *resp.MachineType, Location: resp.Location,
		Preemption: []PreemptionRecord{}, Prices: []PriceRecord{}}
	if m := locationRE.FindStringSubmatch(resp.Location); m != nil {
		if m[1] == "regions" {
			h.Region = m[2]
		} else if z := zoneRE.FindStringSubmatch(m[2]); z != nil {
			h.Region, h.Zone = z[1], m[2]
		}
	}
	reject := func(raw json.RawMessage, why string) {
		h.Rejects = append(h.Rejects, scrapers.Rejected{Raw: string(raw), Reason: "gcp: capacity history: " + why})
	}
	for _, raw := range resp.PreemptionHistory {
		var rec struct {
			Interval       *interval `json:"interval"`
			PreemptionRate *float64  `json:"preemptionRate"`
		}
		if err := json.Unmarshal(raw, &rec); err != nil {
			reject(raw, fmt.Sprintf("preemption record not readable: %v", err))
			continue
		}
		if rec.Interval == nil || rec.PreemptionRate == nil {
			reject(raw, "preemption record without interval or preemptionRate")
			continue
		}
		start, end, err := rec.Interval.times()
		if err != nil {
			reject(raw, "preemption record: "+err.Error())
			continue
		}
		if r := *rec.PreemptionRate; r < 0 || r > 1 {
			reject(raw, fmt.Sprintf("preemption rate %v is not within 0…1", r))
			continue
		}
		h.Preemption = append(h.Preemption, PreemptionRecord{Start: start, End: end, Rate: *rec.PreemptionRate})
	}
	for _, raw := range resp.PriceHistory {
		var rec struct {
			Interval  *interval `json:"interval"`
			ListPrice *money    `json:"listPrice"`
		}
		if err := json.Unmarshal(raw, &rec); err != nil {
			reject(raw, fmt.Sprintf("price record not readable: %v", err))
			continue
		}
		if rec.Interval == nil || rec.ListPrice == nil {
			reject(raw, "price record without interval or listPrice")
			continue
		}
		start, end, err := rec.Interval.times()
		if err != nil {
			reject(raw, "price record: "+err.Error())
			continue
		}
		price, err := rec.ListPrice.value()
		if err != nil {
			reject(raw, "price record: "+err.Error())
			continue
		}
		h.Prices = append(h.Prices, PriceRecord{Start: start, End: end, Currency: rec.ListPrice.CurrencyCode, Price: price})
	}
	return h, nil
}

// ErrNoAccessToken is returned by FetchCapacityHistory without a token.
var ErrNoAccessToken = errors.New("gcp: capacity history: an OAuth 2.0 access token is needed")

// FetchCapacityHistory sends q through c with token as its bearer credential (an
// OAuth 2.0 access token, e.g. of a service account; never put in a URL, a log line
// or an error) and parses the answer. The query only reads, so a failed attempt is
// sent again as a GET would be.
func FetchCapacityHistory(ctx context.Context, c *fetch.Client, q CapacityHistoryQuery, token string) (CapacityHistory,
	error) {
	token = strings.TrimSpace(token)
	if token == "" {
		return CapacityHistory{}, ErrNoAccessToken
	}
	if q.Project == "" || q.Region == "" || q.MachineType == "" {
		return CapacityHistory{}, fmt.Errorf("gcp: capacity history: project, region and machine type are needed")
	}
	body, err := q.body()
	if err != nil {
		return CapacityHistory{}, fmt.Errorf("gcp: capacity history: %w", err)
	}
	hdr := http.Header{"Authorization": {"Bearer " + token}, "Content-Type": {"application/json"},
		"Accept": {"application/json"}}
	resp, err := c.Do(fetch.Idempotent(ctx), http.MethodPost, q.URL(), hdr, body)
	if err != nil {
		return CapacityHistory{}, fmt.Errorf("gcp: capacity history of %s: %w", q.MachineType, err)
	}
	return ParseCapacityHistory(bytes.NewReader(resp.Body))
}
