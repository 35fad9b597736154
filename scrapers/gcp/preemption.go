package gcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// This file wires the Spot capacity history (capacity.go) into Collect: with an OAuth
// 2.0 access token (EnvAccessToken) and a project (Options.Project), once the prices
// are read, it asks advice.capacityHistory about the machine types the run priced
// and sends each day's preemption rate as a schemas.SignalPreemption signal.

// EnvAccessToken names the environment variable holding the OAuth 2.0 access token
// of the Spot capacity history (e.g. `gcloud auth print-access-token`). It is
// optional: without it (or without Options.Project) no capacity history is asked.
const EnvAccessToken = "GPUPRICE_GCP_ACCESS_TOKEN"

// DefaultCapacityRequests is how many capacity history requests a run makes at most
// when Options.CapacityRequests is 0.
const DefaultCapacityRequests = 50

// MaxCapacityRequests is the largest Options.CapacityRequests accepted.
const MaxCapacityRequests = 1000

// capacityFamilies are the machine families advice.capacityHistory answers for, by
// the first word of machine.Family ("A3 Mega" is A3). N1 machine types with GPUs
// attached have no history, and this source prices their GPUs as accelerator SKUs
// (nvidia-tesla-t4 …), never as machine types.
var capacityFamilies = map[string]bool{"A2": true, "A3": true, "A4": true, "G2": true}

// machineFamily maps a machine type name to its family, for the names of machines.
var machineFamily = func() map[string]string {
	m := map[string]string{}
	for _, mt := range machines {
		m[mt.Name] = mt.Family
	}
	return m
}()

// hasCapacityHistory reports whether sku is a machine type whose family has a Spot
// capacity history.
func hasCapacityHistory(sku string) bool {
	f, ok := machineFamily[sku]
	if !ok {
		return false
	}
	first, _, _ := strings.Cut(f, " ")
	return capacityFamilies[first]
}

var (
	regionNameRE = regexp.MustCompile(`^[a-z]+-[a-z]+[0-9]+$`)
	// projectRE is a project ID: 6 to 30 lower-case letters, digits and hyphens,
	// starting with a letter and not ending with a hyphen, with the domain prefix of
	// a legacy domain-scoped project ("example.com:my-project").
	projectRE = regexp.MustCompile(`^(?:[a-z0-9][a-z0-9.-]*[a-z0-9]:)?[a-z][a-z0-9-]{4,28}[a-z0-9]$`)
)

// machineGPU is what the price rows of a machine type say of its GPUs.
type machineGPU struct {
	Name     string
	Count    float64
	MemoryGB float64
}

// pricedMachines collects the machine types with a capacity history that a run
// priced: their GPUs, and per region whether a spot row was priced and which zones
// the rows name.
type pricedMachines struct {
	gpus    map[string]machineGPU
	regions map[string]*pricedRegion // by sku + "|" + region
}

type pricedRegion struct {
	sku, region string
	spot        bool
	zones       map[string]bool
}

func newPricedMachines() *pricedMachines {
	return &pricedMachines{gpus: map[string]machineGPU{}, regions: map[string]*pricedRegion{}}
}

// add notes o when it prices a machine type with a capacity history in a region.
func (p *pricedMachines) add(o schemas.Observation) {
	if !hasCapacityHistory(o.SKU) || !regionNameRE.MatchString(o.Region) {
		return
	}
	if g, ok := p.gpus[o.SKU]; !ok || (g.Name == "" && o.GPUName != "") {
		p.gpus[o.SKU] = machineGPU{Name: o.GPUName, Count: o.GPUCount, MemoryGB: o.GPUMemoryGB}
	}
	k := o.SKU + "|" + o.Region
	r, ok := p.regions[k]
	if !ok {
		r = &pricedRegion{sku: o.SKU, region: o.Region, zones: map[string]bool{}}
		p.regions[k] = r
	}
	if o.Pricing == schemas.Spot {
		r.spot = true
	}
	if z := zoneRE.FindStringSubmatch(o.Zone); z != nil && z[1] == o.Region {
		r.zones[o.Zone] = true
	}
}

// capacityTarget is one capacity history request: a machine type in a zone, or in a
// region when the price rows name no zone of it.
type capacityTarget struct {
	SKU    string
	Region string
	Zone   string // "" to ask about the region
	Spot   bool   // the run priced a spot row of the machine type in the region
	GPU    machineGPU
}

// location is the target as locationPolicy.location takes it: "zones/<zone>", or
// "regions/<region>" (the API takes a region or a zone).
func (t capacityTarget) location() string {
	if t.Zone != "" {
		return "zones/" + t.Zone
	}
	return "regions/" + t.Region
}

// String names the target in a log line: machine type @ zone or region.
func (t capacityTarget) String() string {
	if t.Zone != "" {
		return t.SKU + "@" + t.Zone
	}
	return t.SKU + "@" + t.Region
}

// targets are the requests to make, most wanted first: the machine types and regions
// with a spot row (whose preemption the run's spot prices are exposed to) before the
// others, then by machine type, region and zone. A region whose rows name zones is
// asked about zone by zone, else as a whole.
func (p *pricedMachines) targets() []capacityTarget {
	var out []capacityTarget
	for _, r := range p.regions {
		t := capacityTarget{SKU: r.sku, Region: r.region, Spot: r.spot, GPU: p.gpus[r.sku]}
		if len(r.zones) == 0 {
			out = append(out, t)
			continue
		}
		for z := range r.zones {
			t.Zone = z
			out = append(out, t)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Spot != b.Spot {
			return a.Spot
		}
		if a.SKU != b.SKU {
			return a.SKU < b.SKU
		}
		if a.Region != b.Region {
			return a.Region < b.Region
		}
		return a.Zone < b.Zone
	})
	return out
}

// namesOf lists targets for a log line, at most limit of them.
func namesOf(ts []capacityTarget, limit int) string {
	var names []string
	for i, t := range ts {
		if i == limit {
			names = append(names, fmt.Sprintf("… (%d more)", len(ts)-limit))
			break
		}
		names = append(names, t.String())
	}
	return strings.Join(names, " ")
}

// preemptionResult is what one capacity history answer gives.
type preemptionResult struct {
	Signals []schemas.Signal    `json:"signals"`
	Rejects []scrapers.Rejected `json:"rejects,omitempty"`
	// Duplicates counts the records of a day already read from the answer.
	Duplicates int `json:"duplicates,omitempty"`
}

// preemptionSignals maps the answer h to target t to preemption signals. Rules:
//   - The answer must be about t: its machineType (or the last segment of it) is t's
//     machine type, and its location, when given, is t's region or a zone of it (t's
//     zone when t asks about one). Otherwise it is an error and gives no signal.
//   - One signal per preemption record: SKU and Region as the price rows write them,
//     Zone the answer's (t's when the answer names none; "" for a region), Value the
//     preemptionRate, EffectiveAt the day's start, ObservedAt at; Attrs gpu_name,
//     gpu_count and gpu_memory_gb of the price rows, interval_end the day's end, and
//     partial "true" when the day has not ended at at (GCP revises it until then).
//   - A second record of the same day is passed over (counted); the records that
//     ParseCapacityHistory rejected (a rate outside 0…1, no or a bad interval), and
//     any whose signal would not be storable, are returned as Rejects, to be
//     quarantined.
func preemptionSignals(h CapacityHistory, t capacityTarget, sourceURL string, at time.Time) (preemptionResult, error) {
	if mt := path.Base(h.MachineType); mt != t.SKU {
		return preemptionResult{}, fmt.Errorf("gcp: capacity history: the answer is about machine type %q, not %s",
			h.MachineType, t.SKU)
	}
	zone := t.Zone
	if h.Location != "" {
		switch {
		case h.Region == "":
			return preemptionResult{}, fmt.Errorf("gcp: capacity history: the answer's location %q is no zone or region",
				h.Location)
		case h.Region != t.Region || (t.Zone != "" && h.Zone != t.Zone):
			return preemptionResult{}, fmt.Errorf("gcp: capacity history: the answer is about %s, not %s", h.Location,
				t.location())
		}
		zone = h.Zone
	}
	at = at.UTC().Truncate(time.Second)
	res := preemptionResult{Rejects: h.Rejects}
	seen := map[time.Time]bool{}
	for _, r := range h.Preemption {
		if seen[r.Start] {
			res.Duplicates++
			continue
		}
		seen[r.Start] = true
		attrs := map[string]string{"interval_end": r.End.Format(time.RFC3339)}
		if t.GPU.Name != "" {
			attrs["gpu_name"] = t.GPU.Name
		}
		if t.GPU.Count > 0 {
			attrs["gpu_count"] = schemas.FormatNum(t.GPU.Count)
		}
		if t.GPU.MemoryGB > 0 {
			attrs["gpu_memory_gb"] = schemas.FormatNum(t.GPU.MemoryGB)
		}
		if r.End.After(at) {
			attrs["partial"] = "true"
		}
		sig := schemas.Signal{ObservedAt: at, EffectiveAt: r.Start, Provider: "gcp",
			SKU: t.SKU, Region: t.Region, Zone: zone, Kind: schemas.SignalPreemption, Value: r.Rate,
			SourceURL: sourceURL, Attrs: attrs}
		if err := sig.Validate(); err != nil {
			raw, _ := json.Marshal(r)
			res.Rejects = append(res.Rejects, scrapers.Rejected{Raw: string(raw), Reason: "gcp: capacity history: " +
				err.Error()})
			continue
		}
		res.Signals = append(res.Signals, sig)
	}
	sort.SliceStable(res.Signals,
		func(i, j int) bool { return res.Signals[i].EffectiveAt.Before(res.Signals[j].EffectiveAt) })
	return res, nil
}

// stopStatuses are the answers after which no further capacity history is asked in
// the run: the token is refused (401: expired or wrong), the project may not read it
// or has not enabled the Compute Engine API (403), or its quota is spent (429).
var stopStatuses = map[int]bool{
	http.StatusUnauthorized:    true,
	http.StatusForbidden:       true,
	http.StatusTooManyRequests: true,
}

// scrub replaces the access token in s by REDACTED.
func (s *Source) scrub(v string) string {
	if s.token == "" {
		return v
	}
	return strings.ReplaceAll(v, s.token, schemas.Redacted)
}

// computeEndpoint is the Compute Engine API root the capacity history is asked of.
func (s *Source) computeEndpoint() string {
	if s.opts.ComputeEndpoint != "" {
		return s.opts.ComputeEndpoint
	}
	return DefaultComputeEndpoint
}

// collectPreemption asks the capacity history of the machine types p holds (at most
// Options.CapacityRequests requests, the rest named in a warning) and sends each
// day's preemption rate as a signal. It never fails the run: the prices are already
// emitted, and a request that fails is a warning without the token (a refused token,
// a forbidden project or a spent quota stop the asking). Records it cannot use are
// quarantined through e when e can, logged otherwise. Without a token and a project,
// or with an emitter that takes no signals, it asks nothing.
func (s *Source) collectPreemption(ctx context.Context, e scrapers.Emitter, p *pricedMachines) {
	log := s.cfg.Logger.With("source", s.cfg.Name)
	switch {
	case s.token == "" && s.opts.Project == "":
		return
	case s.token == "":
		log.Warn("capacity history not read: no access token", "missing", EnvAccessToken)
		return
	case s.opts.Project == "":
		log.Warn("capacity history not read: no project", "missing", "options.project")
		return
	}
	if _, ok := e.(scrapers.SignalEmitter); !ok {
		log.Debug("capacity history not read: the run stores no signals")
		return
	}
	targets := p.targets()
	if len(targets) == 0 {
		log.Warn("capacity history not read: the run priced no A2, A3, A4 or G2 machine type "+
			"(machine types are priced from the Catalog API)", "mode", s.mode)
		return
	}
	budget := s.opts.CapacityRequests
	if len(targets) > budget {
		skipped := targets[budget:]
		log.Warn("capacity history: request budget reached, some machine types not asked",
			"budget", budget, "targets", len(targets), "skipped", len(skipped), "not_asked", namesOf(skipped, 100))
		targets = targets[:budget]
	}
	var failed []capacityTarget
	var firstErr string
	signals, rejected, asked := 0, 0, 0
	for i, t := range targets {
		if ctx.Err() != nil {
			log.Warn("capacity history incomplete: run cancelled", "not_asked", len(targets)-i)
			break
		}
		q := CapacityHistoryQuery{Endpoint: s.computeEndpoint(), Project: s.opts.Project, Region: t.Region,
			Location: t.location(), MachineType: t.SKU, Types: []string{HistoryPreemption}}
		asked++
		h, err := FetchCapacityHistory(ctx, s.cfg.Client, q, s.token)
		if err != nil {
			var se *fetch.StatusError
			if errors.As(err, &se) && stopStatuses[se.Status] {
				msg := "capacity history not read further: the project may not read it or its quota is spent"
				if se.Status == http.StatusUnauthorized {
					msg = "capacity history not read further: the access token was refused " +
						"(tokens last about an hour: give a fresh one per run)"
				}
				log.Warn(msg, "status", se.Status, "target", t.String(), "not_asked", len(targets)-i-1,
					"error", s.scrub(err.Error()))
				break
			}
			failed = append(failed, t)
			if firstErr == "" {
				firstErr = s.scrub(err.Error())
			}
			continue
		}
		res, err := preemptionSignals(h, t, q.URL(), s.cfg.Now())
		if err != nil {
			failed = append(failed, t)
			if firstErr == "" {
				firstErr = s.scrub(err.Error())
			}
			continue
		}
		for _, rj := range res.Rejects {
			if !scrapers.Reject(e, rj.Raw, rj.Reason) {
				log.Warn("capacity history record not used", "target", t.String(), "reason", rj.Reason)
			}
		}
		scrapers.EmitSignals(e, res.Signals...)
		signals += len(res.Signals)
		rejected += len(res.Rejects)
		if res.Duplicates > 0 {
			log.Debug("capacity history: days repeated in an answer", "target", t.String(), "repeats", res.Duplicates)
		}
	}
	if len(failed) > 0 {
		log.Warn("capacity history incomplete: requests failed", "failed", len(failed), "failed_targets",
			namesOf(failed, 100),
			"first_error", firstErr)
	}
	log.Debug("capacity history read", "requests", asked, "signals", signals, "rejected", rejected)
}

// validEndpoint checks the compute_endpoint option: an absolute URL without user
// info, query or fragment, over https unless its host is the loopback (a test
// server), since the access token travels to it.
func validEndpoint(name, v string) error {
	if v == "" {
		return nil
	}
	u, err := url.Parse(v)
	if err != nil || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return fmt.Errorf("gcp: options: %s %q is not an absolute URL without user info or query", name, v)
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if h := u.Hostname(); h == "localhost" || net.ParseIP(h).IsLoopback() {
			return nil
		}
	}
	return fmt.Errorf("gcp: options: %s %q must be https (the access token travels to it)", name, v)
}
