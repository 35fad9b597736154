package crusoe

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/internal/pageutil"
)

// UnitInstances is the unit (Attrs["unit"]) of a Crusoe stock signal: its Value
// counts instances of the type (an h100-80gb-sxm-ib.8x is 8 GPUs).
const UnitInstances = "instances"

// SignatureVersion is the version of Crusoe's request signature this source sends.
const SignatureVersion = "1.0"

// cpuFamilies are Crusoe's CPU-only instance families (c1a general purpose, s1a
// storage): their capacity is no GPU's stock, and is not kept.
var cpuFamilies = map[string]bool{"c1a": true, "s1a": true}

// capacities is the answer of GET /v1alpha5/capacities: {"items": [{type, location,
// quantity, …}]}.
type capacities struct {
	Items *[]json.RawMessage `json:"items"` // decoded one by one: one bad item is skipped alone
}

// capacityItem is one item of the answer.
type capacityItem struct {
	Type      string `json:"type"`
	Location  string `json:"location"`
	Quantity  *int64 `json:"quantity"`
	QuotaType string `json:"quota_type"`
}

// capacity is one (instance type, location) of the answer, read.
type capacity struct {
	typ, location, quotaType string
	quantity                 int64
	it                       instanceType
}

// instanceType is what an instance type's name says: "h100-80gb-sxm-ib.8x" is 8
// H100 of 80 GB, SXM, InfiniBand.
type instanceType struct {
	model string // "h100", "a100", "mi300x"
	memGB float64
	sxm   bool
	count int
}

var typeRE = regexp.MustCompile(`^([a-z0-9]+(?:-[a-z0-9]+)*)\.([0-9]+)x$`)
var memTokRE = regexp.MustCompile(`^([0-9]+)gb$`)

// parseType reads an instance type's name; ok is false for a name that does not
// follow Crusoe's <model>[-<n>gb][-sxm][-ib].<count>x.
func parseType(name string) (instanceType, bool) {
	m := typeRE.FindStringSubmatch(strings.ToLower(strings.TrimSpace(name)))
	if m == nil {
		return instanceType{}, false
	}
	var it instanceType
	it.count, _ = strconv.Atoi(m[2])
	for i, tok := range strings.Split(m[1], "-") {
		switch mm := memTokRE.FindStringSubmatch(tok); {
		case i == 0:
			it.model = tok
		case mm != nil:
			it.memGB, _ = strconv.ParseFloat(mm[1], 64)
		case tok == "sxm":
			it.sxm = true
		}
	}
	return it, it.count > 0
}

// parseCapacities reads a capacities answer. It is pure. An answer without an items
// array is an error; an item that cannot be read (no type or location, no quantity),
// and an item of a CPU family, are skipped and counted in skipped by reason. The
// quantities of a (type, location) listed twice are added. Sorted by type, then
// location.
func parseCapacities(r io.Reader) (caps []capacity, skipped map[string]int, err error) {
	var resp capacities
	if err := json.NewDecoder(r).Decode(&resp); err != nil {
		return nil, nil, fmt.Errorf("crusoe: capacity: decoding capacities: %w", err)
	}
	if resp.Items == nil {
		return nil, nil, fmt.Errorf("crusoe: capacity: answer has no items array")
	}
	skipped = map[string]int{}
	index := map[[2]string]int{}
	for _, msg := range *resp.Items {
		var item capacityItem
		if err := json.Unmarshal(msg, &item); err != nil || item.Type == "" || item.Location == "" || item.Quantity == nil {
			skipped["unreadable item"]++
			continue
		}
		it, ok := parseType(item.Type)
		if ok && cpuFamilies[it.model] {
			skipped["CPU instance type"]++
			continue
		}
		k := [2]string{item.Type, item.Location}
		if i, dup := index[k]; dup {
			caps[i].quantity += *item.Quantity
			continue
		}
		index[k] = len(caps)
		caps = append(caps, capacity{typ: item.Type, location: item.Location, quotaType: item.QuotaType,
			quantity: *item.Quantity, it: it})
	}
	sort.Slice(caps, func(i, j int) bool {
		if caps[i].typ != caps[j].typ {
			return caps[i].typ < caps[j].typ
		}
		return caps[i].location < caps[j].location
	})
	return caps, skipped, nil
}

// family is a form factor's family for matching: "sxm" for a socketed module the
// page calls HGX or SXM, "pcie", and "" for what says neither (OAM, NVL72, none).
func family(form string) string {
	f := strings.ToLower(form)
	switch {
	case strings.Contains(f, "hgx"), strings.Contains(f, "sxm"):
		return "sxm"
	case strings.Contains(f, "pcie"):
		return "pcie"
	}
	return ""
}

// matchRow finds the page card of an instance type: the page's rows of the same
// model and memory whose form factor does not contradict the type's (Crusoe names
// its SXM types "-sxm" and leaves PCIe unnamed: a100-80gb.8x is the A100 PCIe, an
// OAM or NVL card says neither), the one that remains, or among several the one of
// the same family. A type that names no memory (a40.1x, a100.1x) matches only a
// model the page lists once (the page's A100 80 GB is not an a100.1x of 40 GB).
// nil when there is none or no single one.
func matchRow(it instanceType, rows []schemas.Observation) *schemas.Observation {
	if it.model == "" {
		return nil
	}
	fam := "pcie"
	if it.sxm {
		fam = "sxm"
	}
	var model, all, exact []*schemas.Observation
	seen := map[string]bool{}
	for i := range rows {
		o := &rows[i]
		if seen[o.SKU] {
			continue // a card has a row per pricing kind
		}
		seen[o.SKU] = true
		slug := pageutil.Slug(o.GPUName, "nvidia", "amd")
		if first, _, _ := strings.Cut(slug, "-"); first != it.model {
			continue
		}
		model = append(model, o)
		if it.memGB > 0 && math.Abs(it.memGB-o.GPUMemoryGB) > 0.5 {
			continue
		}
		pf := family(o.Attrs["form_factor"])
		if pf != "" && pf != fam {
			continue
		}
		all = append(all, o)
		if pf == fam {
			exact = append(exact, o)
		}
	}
	switch {
	case it.memGB == 0:
		if len(model) == 1 {
			return model[0]
		}
	case len(all) == 1:
		return all[0]
	case len(exact) == 1:
		return exact[0]
	}
	return nil
}

// capacitySignals are the stock signals of the capacities: one per (type,
// location), Value the quantity Crusoe states (instances of the type that can be
// created now; 0: none), Region the location as Crusoe names it (the page's rows
// name none), SKU "crusoe:" + the type ("crusoe:h100-80gb-sxm-ib.8x": the page
// prices a GPU-hour for every size, so the type is the series), Attrs unit
// "instances". A type whose page card is found (matchRow) names its GPU as ingest
// reads the card's rows (the card's GPU name and form factor: "NVIDIA H100 HGX",
// its memory) and Attrs["price_sku"] is the card's SKU; another names it after the
// type ("A100", "H100 SXM"). Sorted by SKU, then region.
func capacitySignals(caps []capacity, rows []schemas.Observation, at time.Time, sourceURL string) []schemas.Signal {
	out := make([]schemas.Signal, 0, len(caps))
	for _, c := range caps {
		s := schemas.Signal{
			ObservedAt:  at,
			EffectiveAt: at,
			Provider:    "crusoe",
			SKU:         "crusoe:" + c.typ,
			Region:      c.location,
			Kind:        schemas.SignalStock,
			Value:       float64(c.quantity),
			SourceURL:   schemas.RedactURL(sourceURL),
			Attrs:       map[string]string{"unit": UnitInstances, "instance_type": c.typ},
		}
		if c.it.count > 0 {
			s.Attrs["gpu_count"] = strconv.Itoa(c.it.count)
		}
		if c.quotaType != "" {
			s.Attrs["quota_type"] = c.quotaType
		}
		mem := c.it.memGB
		if o := matchRow(c.it, rows); o != nil {
			s.Attrs["price_sku"] = o.SKU
			s.Attrs["gpu_name"] = strings.TrimSpace(o.GPUName + " " + o.Attrs["form_factor"])
			if ff := o.Attrs["form_factor"]; ff != "" {
				s.Attrs["form_factor"] = ff
			}
			mem = o.GPUMemoryGB
		} else if c.it.model != "" {
			name := strings.ToUpper(c.it.model)
			if c.it.sxm {
				name += " SXM"
			}
			s.Attrs["gpu_name"] = name
		}
		if mem > 0 {
			s.Attrs["gpu_memory_gb"] = schemas.FormatNum(mem)
		}
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].SKU != out[j].SKU {
			return out[i].SKU < out[j].SKU
		}
		return out[i].Region < out[j].Region
	})
	return out
}

// errSecret means the secret key is not the URL-safe base64 Crusoe issues.
var errSecret = errors.New(EnvSecretKey + " is not URL-safe base64")

// sign is Crusoe's request signature, version 1.0 (https://docs.crusoecloud.com/reference/api,
// "Generating a signature"): the HMAC-SHA256 of the payload
//
//	http_path \n canonicalized_query_params \n http_verb \n timestamp \n
//
// keyed with the secret key decoded from raw URL-safe base64, encoded in raw URL-safe
// base64, as the Authorization value "Bearer 1.0:<access key id>:<signature>". The
// query parameters are canonicalized as Crusoe's Go client does: decoded, sorted by
// name, encoded again.
func sign(method, path, rawQuery, timestamp, keyID, secret string) (string, error) {
	key, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(secret, "="))
	if err != nil || len(key) == 0 {
		return "", errSecret
	}
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return "", fmt.Errorf("crusoe: capacity: query: %w", err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(path + "\n" + q.Encode() + "\n" + method + "\n" + timestamp + "\n"))
	return "Bearer " + SignatureVersion + ":" + keyID + ":" + base64.RawURLEncoding.EncodeToString(mac.Sum(nil)), nil
}

// signingNow is the clock of the request signatures: Crusoe checks that a request's
// timestamp is about the time it is received (replay protection), so it is the
// wall clock, not the run's (cfg.Now may be a replayed time).
var signingNow = time.Now

// collectCapacity reads the capacities with a signed request and emits their stock
// signals. Any failure is a warning: the page's prices are already emitted and stay
// the run's. Neither key nor any header is logged.
func (s *Source) collectCapacity(ctx context.Context, e scrapers.Emitter, rows []schemas.Observation) {
	log := s.cfg.Logger.With("source", s.cfg.Name)
	shown := schemas.RedactURL(s.capacityURL)
	warn := func(err error) {
		msg := schemas.RedactText(err.Error())
		for _, v := range []string{s.secret, s.keyID} {
			if v != "" {
				msg = strings.ReplaceAll(msg, v, schemas.Redacted)
			}
		}
		log.Warn("capacity not read; the prices are kept", "url", shown, "error", msg)
	}
	if s.keyID == "" || s.secret == "" {
		warn(fmt.Errorf("crusoe: capacity: both %s and %s must be set", EnvAccessKeyID, EnvSecretKey))
		return
	}
	u, err := url.Parse(s.capacityURL)
	if err != nil {
		warn(fmt.Errorf("crusoe: capacity: %w", err))
		return
	}
	ts := signingNow().UTC().Format(time.RFC3339)
	auth, err := sign(http.MethodGet, u.Path, u.RawQuery, ts, s.keyID, s.secret)
	if err != nil {
		warn(fmt.Errorf("crusoe: capacity: %w", err))
		return
	}
	hdr := http.Header{"Accept": {"application/json"}, "X-Crusoe-Timestamp": {ts}, "Authorization": {auth}}
	resp, err := s.cfg.Client.Get(ctx, s.capacityURL, hdr)
	if err != nil {
		warn(fmt.Errorf("crusoe: capacity: %w", err))
		return
	}
	caps, skipped, err := parseCapacities(bytes.NewReader(resp.Body))
	if err != nil {
		warn(err)
		return
	}
	sigs := capacitySignals(caps, rows, s.cfg.Now(), s.capacityURL)
	log.Debug("capacity read", "signals", len(sigs), "skipped", skipped)
	scrapers.EmitSignals(e, sigs...)
}
