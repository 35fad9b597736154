package vast

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/schemas/textsafe"
	"github.com/gpuprice/gpuprice/scrapers"
)

// response is the offer search result.
type response struct {
	Offers *[]json.RawMessage `json:"offers"` // decoded one by one: one bad offer is rejected alone
}

// offer holds the fields of a Vast.ai offer this source reads (the API sends ~100).
type offer struct {
	ID           int64    `json:"id"`
	MachineID    *int64   `json:"machine_id"`
	HostID       int64    `json:"host_id"`
	GPUName      string   `json:"gpu_name"`
	NumGPUs      float64  `json:"num_gpus"`
	GPURAM       float64  `json:"gpu_ram"` // MB
	GPUFrac      *float64 `json:"gpu_frac"`
	DPHBase      *float64 `json:"dph_base"`
	DPHTotal     *float64 `json:"dph_total"`
	MinBid       *float64 `json:"min_bid"`
	StorageTotal *float64 `json:"storage_total_cost"`
	Reliability2 *float64 `json:"reliability2"`
	Geolocation  *string  `json:"geolocation"`
	Verification string   `json:"verification"`
	HostingType  *int     `json:"hosting_type"`
	CPUCoresEff  *float64 `json:"cpu_cores_effective"`
	CPURAM       *float64 `json:"cpu_ram"` // MB
	// BWNVLink is the NVLink bandwidth Vast measures on the machine ("bandwidth
	// NVLink" in its CLI's search fields; the recorded H100 SXM offers say 478.1, of
	// the order of GB/s); 0 on machines without NVLink.
	BWNVLink *float64 `json:"bw_nvlink"`
	// Rentable and Rented are the offer's state: it can be rented now when Vast
	// says it is rentable and not rented.
	Rentable *bool `json:"rentable"`
	Rented   *bool `json:"rented"`
}

// rentableNow reports whether the offer can be rented now: Vast states it rentable
// and not rented (an offer stating neither is not counted).
func (o offer) rentableNow() bool {
	return o.Rentable != nil && o.Rented != nil && *o.Rentable && !*o.Rented
}

// parseOffers turns an offer search response into observations: for each offer an
// on_demand row priced at dph_total and, when the offer states one, a spot row priced
// at min_bid. It is pure: rows carry observedAt and no source URL.
func parseOffers(r io.Reader, observedAt time.Time) (scrapers.Result, error) {
	res, _, err := parseAnswer(r, observedAt)
	return res, err
}

// parseAnswer is parseOffers that also counts the market's depth: per GPU name
// (cleaned as ingest cleans a row's, textsafe.Clean), the offers of the answer that
// can be rented now. Every readable offer counts, one without a machine id too (it
// is on the market; only its price series cannot be named); a GPU name whose offers
// are all taken has a count of 0.
func parseAnswer(r io.Reader, observedAt time.Time) (scrapers.Result, map[string]int, error) {
	var resp response
	if err := json.NewDecoder(r).Decode(&resp); err != nil {
		return scrapers.Result{}, nil, fmt.Errorf("vast: decoding response: %w", err)
	}
	if resp.Offers == nil {
		return scrapers.Result{}, nil, fmt.Errorf("vast: response has no offers array")
	}
	res := scrapers.Result{Rows: make([]schemas.Observation, 0, 2*len(*resp.Offers))}
	depth := map[string]int{}
	for _, msg := range *resp.Offers {
		var o offer
		if err := json.Unmarshal(msg, &o); err != nil {
			// One offer with a field of the wrong type (a price "N/A") is quarantined;
			// the others are read.
			res.Reject(string(msg), fmt.Sprintf("vast: offer not readable: %v", err))
			continue
		}
		if name := textsafe.Clean(o.GPUName, textsafe.MaxName); name != "" {
			n := depth[name] // a name seen with none to rent is a depth of 0
			if o.rentableNow() {
				n++
			}
			depth[name] = n
		}
		if o.MachineID == nil || *o.MachineID <= 0 {
			// The machine id names the series: without it every such offer would
			// collapse into one series ("vast:0:1x"). Rejected, not guessed.
			raw, _ := json.Marshal(o)
			res.Reject(string(raw), fmt.Sprintf("vast: offer %d has no machine_id: its series cannot be named", o.ID))
			continue
		}
		base := schemas.Observation{
			ObservedAt:  observedAt,
			EffectiveAt: observedAt,
			Provider:    "vast",
			SKU:         sku(o),
			Region:      country(o.Geolocation),
			GPUName:     o.GPUName,
			GPUCount:    o.NumGPUs,
			GPUMemoryGB: math.Round(o.GPURAM/1024*100) / 100,
			Currency:    "USD",
			Unit:        schemas.UnitHour,
			SourceKind:  schemas.SourceAPI,
		}
		base.Interconnect = interconnect(o)
		od := base
		od.Pricing = schemas.OnDemand
		od.Attrs = attrs(o)
		switch {
		case o.DPHBase != nil && *o.DPHBase == 0:
			// No GPU rate: dph_total is then the disk's storage alone, not a price of
			// the GPU. The host lists the machine without renting it out.
			od.Attrs["price_text"] = scrapers.NotOfferedPrefix + " (dph_base 0: no GPU rate, dph_total is the disk's)"
		case o.DPHTotal != nil:
			od.PriceNative = *o.DPHTotal
		default:
			od.Attrs["price_text"] = "dph_total missing"
		}
		res.Rows = append(res.Rows, od)
		if o.MinBid != nil {
			sp := base
			sp.Pricing = schemas.Spot
			sp.Attrs = attrs(o)
			sp.PriceNative = *o.MinBid
			res.Rows = append(res.Rows, sp)
		}
	}
	return res, depth, nil
}

// interconnect is the offer's interconnect where Vast states it:
// schemas.InterconnectNVLinkOnly for an offer of more than one GPU whose machine
// measures NVLink bandwidth (bw_nvlink > 0): NVLink between the offer's GPUs, no
// RDMA fabric to another machine. "" otherwise, so that ingest gives the provider's
// default (ethernet) to a multi-GPU offer and unknown to a single GPU, which has no
// peer GPU to link to whatever its machine measures.
func interconnect(o offer) string {
	if o.NumGPUs > 1 && o.BWNVLink != nil && *o.BWNVLink > 0 {
		return schemas.InterconnectNVLinkOnly
	}
	return ""
}

// sku names a series: one machine's offer of a given GPU count. Offer ids change
// whenever a host re-lists; machine ids do not, and a machine may offer several
// slices (1x, 2x, 4x …) at once.
func sku(o offer) string {
	return "vast:" + strconv.FormatInt(*o.MachineID, 10) + ":" + strconv.FormatFloat(o.NumGPUs, 'f', -1, 64) + "x"
}

// country is the country code at the end of a geolocation ("Texas, US" → "US",
// ", US" → "US"); "" when absent.
func country(g *string) string {
	if g == nil {
		return ""
	}
	s := strings.TrimSpace(*g)
	if i := strings.LastIndex(s, ","); i >= 0 {
		s = strings.TrimSpace(s[i+1:])
	}
	return s
}

func attrs(o offer) map[string]string {
	a := map[string]string{
		"offer_id":     strconv.FormatInt(o.ID, 10),
		"machine_id":   strconv.FormatInt(*o.MachineID, 10),
		"host_id":      strconv.FormatInt(o.HostID, 10),
		"verification": o.Verification,
	}
	if o.Geolocation != nil {
		a["geolocation"] = *o.Geolocation
	}
	num := func(k string, v *float64) {
		if v != nil {
			a[k] = schemas.FormatNum(*v)
		}
	}
	num("reliability2", o.Reliability2)
	num("dph_base", o.DPHBase)
	num("storage_total_cost", o.StorageTotal)
	num("gpu_frac", o.GPUFrac)
	num("bw_nvlink", o.BWNVLink)
	num("cpu_cores_effective", o.CPUCoresEff)
	if o.CPURAM != nil {
		a["cpu_ram_gb"] = strconv.FormatFloat(math.Round(*o.CPURAM/1024*10)/10, 'f', -1, 64)
	}
	if o.HostingType != nil {
		a["hosting_type"] = strconv.Itoa(*o.HostingType)
	}
	if o.Rentable != nil {
		a["rentable"] = strconv.FormatBool(*o.Rentable)
	}
	if o.Rented != nil {
		a["rented"] = strconv.FormatBool(*o.Rented)
	}
	return a
}
