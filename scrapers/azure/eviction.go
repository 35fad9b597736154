package azure

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
	"sort"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// The credential variables (Info.SecretEnv) of a Microsoft Entra application (a
// service principal with read access to Azure Resource Graph). With all three set,
// the source also reads the spot eviction rates of the sizes it prices; without them
// it reads the public Retail Prices API alone, as before.
const (
	EnvTenantID     = "AZURE_TENANT_ID"
	EnvClientID     = "AZURE_CLIENT_ID"
	EnvClientSecret = "AZURE_CLIENT_SECRET"
)

// DefaultLoginEndpoint is the Microsoft identity platform host; the token of the
// client credentials grant is asked of <host>/<tenant>/oauth2/v2.0/token.
const DefaultLoginEndpoint = "https://login.microsoftonline.com"

// DefaultManagementEndpoint is Azure Resource Manager: Resource Graph is queried at
// <host>/providers/Microsoft.ResourceGraph/resources, and the token's scope is
// <host>/.default.
const DefaultManagementEndpoint = "https://management.azure.com"

// ResourceGraphPath is the Resource Graph query operation ("Resources", POST).
const ResourceGraphPath = "/providers/Microsoft.ResourceGraph/resources"

// ResourceGraphAPIVersion is the Resource Graph API version requested.
const ResourceGraphAPIVersion = "2021-03-01"

// evictionRateType is the SpotResources type of the eviction rate records.
const evictionRateType = "microsoft.compute/skuspotevictionrate/location"

// maxEvictionPages bounds the eviction query against a $skipToken that never ends
// (Resource Graph pages hold up to 1000 rows; GPU sizes × regions are a few
// thousand).
const maxEvictionPages = 100

// EvictionBand is one of Azure's published spot eviction rate bands.
type EvictionBand struct {
	Index int    `json:"index"` // the signal's Value: 0 the lowest
	Label string `json:"label"` // as Resource Graph writes properties.evictionRate
	Max   int    `json:"max"`   // the band's upper bound in %, 100 for the open band
}

// EvictionBands are the bands of properties.evictionRate, lowest first. Azure quotes
// them as the chance, in %, that a spot VM of the size is evicted within the next
// hour, from the trailing 28 days (docs/risk.md, "Azure eviction rates"). A value not
// in this table is not guessed at: its record is quarantined.
var EvictionBands = []EvictionBand{
	{0, "0-5", 5},
	{1, "5-10", 10},
	{2, "10-15", 15},
	{3, "15-20", 20},
	{4, "20+", 100},
}

// Reasons an eviction record gives no signal without being unreadable.
const (
	skipNotPriced = "eviction rate of a size or region not priced in this run"
	skipDuplicate = "eviction rate repeated for a size and region"
)

// credentials are the client credentials of the Entra application; never printed.
type credentials struct {
	tenant, client, secret string
}

// set reports whether all three are given.
func (c credentials) set() bool { return c.tenant != "" && c.client != "" && c.secret != "" }

// missing names the variables not set when some, not all, are.
func (c credentials) missing() []string {
	if c.tenant == "" && c.client == "" && c.secret == "" {
		return nil
	}
	var out []string
	for _, v := range []struct{ name, value string }{
		{EnvTenantID, c.tenant}, {EnvClientID, c.client}, {EnvClientSecret, c.secret},
	} {
		if v.value == "" {
			out = append(out, v.name)
		}
	}
	return out
}

// scrub replaces the credentials in s by REDACTED (an error naming the token URL
// names the tenant).
func (c credentials) scrub(s string) string {
	for _, v := range []string{c.secret, c.client, c.tenant} {
		if v != "" {
			s = strings.ReplaceAll(s, v, schemas.Redacted)
		}
	}
	return s
}

// size is a VM size the run priced: its SKU as the price rows write it, and their GPU.
type size struct {
	SKU      string
	GPUName  string
	GPUCount float64
	MemoryGB float64
}

// priced collects the sizes and regions of a run's rows, keyed in lower case (Resource
// Graph matches names case-insensitively and need not spell them as the Retail
// Prices API does).
type priced struct {
	sizes   map[string]size
	regions map[string]string
}

func newPriced() *priced {
	return &priced{sizes: map[string]size{}, regions: map[string]string{}}
}

// add notes the size and region of o; a low-priority row's SKU carries a suffix that
// the ARM size name does not.
func (p *priced) add(o schemas.Observation) {
	sku := strings.TrimSuffix(o.SKU, lowPrioritySuffix)
	if sku == "" {
		return
	}
	k := strings.ToLower(sku)
	if _, ok := p.sizes[k]; !ok || o.Pricing == schemas.Spot {
		p.sizes[k] = size{SKU: sku, GPUName: o.GPUName, GPUCount: o.GPUCount, MemoryGB: o.GPUMemoryGB}
	}
	if o.Region != "" {
		p.regions[strings.ToLower(o.Region)] = o.Region
	}
}

// armNameRE is what an ARM size name may hold; anything else is kept out of a query.
var armNameRE = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// evictionQuery is the Resource Graph query of the eviction rates of skus (and, when
// regions is not empty, only in those). The id is projected because Resource Graph
// pages in a stable order only when it is in the result.
func evictionQuery(skus, regions []string) string {
	quote := func(vs []string) string {
		var q []string
		for _, v := range vs {
			if armNameRE.MatchString(v) {
				q = append(q, "'"+v+"'")
			}
		}
		return strings.Join(q, ", ")
	}
	q := "SpotResources | where type =~ '" + evictionRateType + "' | where sku.name in~ (" + quote(skus) + ")"
	if len(regions) > 0 {
		q += " | where location in~ (" + quote(regions) + ")"
	}
	return q + " | project id, sku, location, properties"
}

// graphRequest is the body of a Resource Graph query (QueryRequest): no subscriptions,
// so it runs at the scope of the tenant, where SpotResources answers.
type graphRequest struct {
	Query   string       `json:"query"`
	Options graphOptions `json:"options"`
}

type graphOptions struct {
	ResultFormat string `json:"resultFormat"`
	SkipToken    string `json:"$skipToken,omitempty"`
}

// graphResponse is a Resource Graph answer (QueryResponse); data is an array of
// objects in the objectArray format asked for.
type graphResponse struct {
	TotalRecords    *int64          `json:"totalRecords"`
	Count           int64           `json:"count"`
	ResultTruncated string          `json:"resultTruncated"` // "true" or "false": a string in the API
	SkipToken       string          `json:"$skipToken"`
	Data            json.RawMessage `json:"data"`
}

// evictionRow is one SpotResources eviction rate record.
type evictionRow struct {
	ID       string `json:"id"`
	Location string `json:"location"`
	SKU      struct {
		Name string `json:"name"`
	} `json:"sku"`
	Properties struct {
		EvictionRate *string `json:"evictionRate"`
	} `json:"properties"`
}

// evictionPage is what one Resource Graph answer yields: its readable rows (with
// their raw JSON, for quarantine), the rows it could not read, and the next token.
type evictionPage struct {
	Rows      []evictionRow
	Raw       []string
	Rejects   []scrapers.Rejected
	Next      string
	Truncated bool
}

// parseEvictionPage reads one Resource Graph answer. It is pure.
func parseEvictionPage(r io.Reader) (evictionPage, error) {
	var resp graphResponse
	if err := json.NewDecoder(r).Decode(&resp); err != nil {
		return evictionPage{}, fmt.Errorf("azure: eviction rates: decoding response: %w", err)
	}
	if resp.TotalRecords == nil || len(resp.Data) == 0 {
		return evictionPage{}, fmt.Errorf("azure: eviction rates: response has no totalRecords or data")
	}
	var rows []json.RawMessage
	if err := json.Unmarshal(resp.Data, &rows); err != nil {
		return evictionPage{}, fmt.Errorf("azure: eviction rates: data is not an object array: %w", err)
	}
	p := evictionPage{Next: resp.SkipToken, Truncated: resp.ResultTruncated == "true"}
	for _, msg := range rows {
		var row evictionRow
		if err := json.Unmarshal(msg, &row); err != nil {
			p.Rejects = append(p.Rejects, scrapers.Rejected{Raw: string(msg),
				Reason: fmt.Sprintf("azure: eviction rate record not readable: %v", err)})
			continue
		}
		p.Rows = append(p.Rows, row)
		p.Raw = append(p.Raw, string(msg))
	}
	return p, nil
}

// evictionResult is what the eviction records of a run give: one signal per size and
// region, the records rejected (quarantined) and those passed over, by reason.
type evictionResult struct {
	Signals []schemas.Signal    `json:"signals"`
	Rejects []scrapers.Rejected `json:"rejects,omitempty"`
	Skipped map[string]int      `json:"skipped,omitempty"`
}

func (r *evictionResult) skip(why string) {
	if r.Skipped == nil {
		r.Skipped = map[string]int{}
	}
	r.Skipped[why]++
}

// bandOf returns the band whose label is v.
func bandOf(v string) (EvictionBand, bool) {
	for _, b := range EvictionBands {
		if b.Label == v {
			return b, true
		}
	}
	return EvictionBand{}, false
}

// evictionSignals maps eviction records to interruption signals. Rules:
//   - SKU and Region are the strings the run's price rows use for the size and region
//     (matched case-insensitively); a record of a size the run did not price is
//     passed over; a region it did not price keeps Resource Graph's location in
//     lower case (the Retail Prices API's armRegionName form).
//   - Value is the band's index, Label the band verbatim, Attrs band_max, gpu_name,
//     gpu_count and gpu_memory_gb as the size's price rows carry them.
//   - A record without an eviction rate, or with one not in EvictionBands, is
//     rejected with the reason: a new band is not guessed at.
//   - The first record of a size and region wins; a repeat is passed over.
//   - The records carry no date: EffectiveAt and ObservedAt are at.
func evictionSignals(rows []evictionRow, raw []string, p *priced, at time.Time, sourceURL string) evictionResult {
	var out evictionResult
	seen := map[string]bool{}
	at = at.UTC().Truncate(time.Second)
	for i, row := range rows {
		sz, ok := p.sizes[strings.ToLower(row.SKU.Name)]
		if !ok || row.Location == "" {
			out.skip(skipNotPriced)
			continue
		}
		if row.Properties.EvictionRate == nil {
			out.Rejects = append(out.Rejects, scrapers.Rejected{Raw: raw[i],
				Reason: "azure: eviction rate record without properties.evictionRate"})
			continue
		}
		label := strings.TrimSpace(*row.Properties.EvictionRate)
		band, ok := bandOf(label)
		if !ok {
			out.Rejects = append(out.Rejects, scrapers.Rejected{Raw: raw[i],
				Reason: fmt.Sprintf("azure: unknown eviction rate band %q (not one of 0-5, 5-10, 10-15, 15-20, 20+)", label)})
			continue
		}
		region, ok := p.regions[strings.ToLower(row.Location)]
		if !ok {
			region = strings.ToLower(row.Location)
		}
		key := sz.SKU + "|" + region
		if seen[key] {
			out.skip(skipDuplicate)
			continue
		}
		seen[key] = true
		attrs := map[string]string{"band_max": fmt.Sprint(band.Max)}
		if sz.GPUName != "" {
			attrs["gpu_name"] = sz.GPUName
		}
		if sz.GPUCount > 0 {
			attrs["gpu_count"] = schemas.FormatNum(sz.GPUCount)
		}
		if sz.MemoryGB > 0 {
			attrs["gpu_memory_gb"] = schemas.FormatNum(sz.MemoryGB)
		}
		out.Signals = append(out.Signals, schemas.Signal{ObservedAt: at, EffectiveAt: at, Provider: "azure",
			SKU: sz.SKU, Region: region, Kind: schemas.SignalInterruption, Value: float64(band.Index),
			Label: band.Label, SourceURL: sourceURL, Attrs: attrs})
	}
	sort.SliceStable(out.Signals, func(i, j int) bool {
		a, b := out.Signals[i], out.Signals[j]
		if a.SKU != b.SKU {
			return a.SKU < b.SKU
		}
		return a.Region < b.Region
	})
	return out
}

// errNoToken is returned for a token answer without an access token.
var errNoToken = errors.New("the answer holds no bearer access_token")

// token asks the Microsoft identity platform for an access token to Azure Resource
// Manager (OAuth 2.0 client credentials grant with a shared secret). The request goes
// through a copy of the source's client without its Observer, so that neither the
// secret it sends nor the token it gets back is written to a raw archive.
func (s *Source) token(ctx context.Context) (string, error) {
	u := strings.TrimRight(s.loginEndpoint(), "/") + "/" + url.PathEscape(s.creds.tenant) + "/oauth2/v2.0/token"
	form := url.Values{}
	form.Set("client_id", s.creds.client)
	form.Set("scope", strings.TrimRight(s.managementEndpoint(), "/")+"/.default")
	form.Set("client_secret", s.creds.secret)
	form.Set("grant_type", "client_credentials")
	c := *s.cfg.Client
	c.Observer = nil
	c.Cache = nil
	hdr := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Accept": {"application/json"}}
	resp, err := c.Do(fetch.Idempotent(ctx), http.MethodPost, u, hdr, []byte(form.Encode()))
	if err != nil {
		return "", err
	}
	var tok struct {
		TokenType   string `json:"token_type"`
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(resp.Body, &tok); err != nil {
		return "", fmt.Errorf("decoding the token answer: %w", err)
	}
	if tok.AccessToken == "" || !strings.EqualFold(tok.TokenType, "bearer") {
		return "", errNoToken
	}
	return tok.AccessToken, nil
}

// graphURL is the Resource Graph query URL (no secret: the token goes in a header).
func (s *Source) graphURL() string {
	return strings.TrimRight(s.managementEndpoint(), "/") + ResourceGraphPath + "?api-version=" + ResourceGraphAPIVersion
}

func (s *Source) loginEndpoint() string {
	if s.opts.LoginEndpoint != "" {
		return s.opts.LoginEndpoint
	}
	return DefaultLoginEndpoint
}

func (s *Source) managementEndpoint() string {
	if s.opts.ManagementEndpoint != "" {
		return s.opts.ManagementEndpoint
	}
	return DefaultManagementEndpoint
}

// collectEvictions reads the eviction rates of the sizes the run priced and sends
// them as interruption signals. It never fails the run: the prices are already
// emitted, and a token or query that fails is a warning (without a secret). Records
// it cannot use are quarantined through e when e can (logged otherwise); the signals
// of the pages read before a failure are sent.
func (s *Source) collectEvictions(ctx context.Context, e scrapers.Emitter, p *priced) {
	log := s.cfg.Logger.With("source", s.cfg.Name)
	if miss := s.creds.missing(); len(miss) > 0 {
		log.Warn("eviction rates not read: credentials incomplete", "missing", strings.Join(miss, ","))
		return
	}
	if !s.creds.set() || len(p.sizes) == 0 {
		return
	}
	warn := func(msg string, err error) {
		log.Warn(msg, "error", s.creds.scrub(err.Error()))
	}
	tok, err := s.token(ctx)
	if err != nil {
		warn("eviction rates not read: no access token", err)
		return
	}
	var skus []string
	for _, sz := range p.sizes {
		skus = append(skus, sz.SKU)
	}
	sort.Strings(skus)
	regions := append([]string(nil), s.opts.Regions...)
	query := evictionQuery(skus, regions)
	u := s.graphURL()
	hdr := http.Header{"Authorization": {"Bearer " + tok}, "Content-Type": {"application/json"},
		"Accept": {"application/json"}}
	var rows []evictionRow
	var raw []string
	var rejects []scrapers.Rejected
	next := ""
	seen := map[string]bool{}
	for n := 1; ; n++ {
		if n > maxEvictionPages {
			warn("eviction rates incomplete", fmt.Errorf("more than %d pages", maxEvictionPages))
			break
		}
		body, err := json.Marshal(graphRequest{Query: query,
			Options: graphOptions{ResultFormat: "objectArray", SkipToken: next}})
		if err != nil {
			warn("eviction rates not read", err)
			return
		}
		resp, err := s.cfg.Client.Do(fetch.Idempotent(ctx), http.MethodPost, u, hdr, body)
		if err != nil {
			warn("eviction rates incomplete: Resource Graph query failed", fmt.Errorf("page %d: %w", n, err))
			break
		}
		pg, err := parseEvictionPage(bytes.NewReader(resp.Body))
		if err != nil {
			warn("eviction rates incomplete", fmt.Errorf("page %d: %w", n, err))
			break
		}
		if pg.Truncated {
			log.Warn("eviction rates: Resource Graph says the result is truncated", "page", n)
		}
		rows, raw = append(rows, pg.Rows...), append(raw, pg.Raw...)
		rejects = append(rejects, pg.Rejects...)
		if pg.Next == "" {
			break
		}
		if seen[pg.Next] {
			warn("eviction rates incomplete", fmt.Errorf("page %d: $skipToken repeats", n))
			break
		}
		seen[pg.Next] = true
		next = pg.Next
	}
	res := evictionSignals(rows, raw, p, s.cfg.Now(), u)
	res.Rejects = append(rejects, res.Rejects...)
	for _, rj := range res.Rejects {
		if !scrapers.Reject(e, rj.Raw, rj.Reason) {
			log.Warn("eviction rate record not used", "reason", rj.Reason)
		}
	}
	scrapers.EmitSignals(e, res.Signals...)
	log.Debug("eviction rates read", "records", len(rows), "signals", len(res.Signals),
		"rejected", len(res.Rejects), "skipped", res.Skipped)
}
