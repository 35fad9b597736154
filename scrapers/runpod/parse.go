package runpod

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/internal/pageutil"
)

// Sentinels of this package.
var (
	// ErrGraphQL means the API answered with a GraphQL errors array.
	ErrGraphQL = errors.New("runpod: GraphQL error")
	// ErrLayout means the response or page no longer has the shape this parser reads.
	ErrLayout = errors.New("runpod: layout changed")
)

// Clouds, the second part of a SKU.
const (
	cloudSecure    = "secure"
	cloudCommunity = "community"
)

// unknownID is the placeholder entry gpuTypes lists besides the real GPU types; it
// has no price and is not a GPU.
const unknownID = "unknown"

// skipUnknown counts the placeholder entries left out.
const skipUnknown = "unknown_gpu_type"

// result is what one response yields (scrapers.Result): rows, records that could not
// be read (for scrapers.Reject) and why some records yielded no row.
type result = scrapers.Result

type rejected = scrapers.Rejected

// response is the GraphQL envelope.
type response struct {
	Data *struct {
		GPUTypes *[]json.RawMessage `json:"gpuTypes"`
	} `json:"data"`
	Errors []struct {
		Message string `json:"message"`
		Path    []any  `json:"path"`
	} `json:"errors"`
}

// gpuType is one entry of gpuTypes. Pointers tell a missing or null field from 0.
type gpuType struct {
	ID                 string   `json:"id"`
	DisplayName        string   `json:"displayName"`
	MemoryInGb         *float64 `json:"memoryInGb"`
	SecureCloud        *bool    `json:"secureCloud"`
	CommunityCloud     *bool    `json:"communityCloud"`
	SecurePrice        *float64 `json:"securePrice"`
	CommunityPrice     *float64 `json:"communityPrice"`
	SecureSpotPrice    *float64 `json:"secureSpotPrice"`
	CommunitySpotPrice *float64 `json:"communitySpotPrice"`
	LowestPrice        *struct {
		MinimumBidPrice      *float64 `json:"minimumBidPrice"`
		UninterruptablePrice *float64 `json:"uninterruptablePrice"`
	} `json:"lowestPrice"`
	// SecureStock and CommunityStock are lowestPrice asked per cloud (GraphQL
	// aliases of lowestPrice(input: {gpuCount: 1, secureCloud: true|false})): its
	// stockStatus ("High", "Medium", "Low"; null when the cloud has none) and
	// maxUnreservedGpuCount.
	SecureStock    *stock `json:"secureStock"`
	CommunityStock *stock `json:"communityStock"`
	// The savings-plan prices, per GPU-hour of the Secure Cloud: an upfront payment
	// for the whole term (RunPod documents 3- and 6-month plans; see README.md).
	OneWeekPrice    termPrice `json:"oneWeekPrice"`
	OneMonthPrice   termPrice `json:"oneMonthPrice"`
	ThreeMonthPrice termPrice `json:"threeMonthPrice"`
	SixMonthPrice   termPrice `json:"sixMonthPrice"`
}

// termPrice is a savings-plan price field: Listed when the answer carries the
// field (null or a number; an answer to a query that did not ask for it has none),
// V its number (nil for null).
type termPrice struct {
	Listed bool
	V      *float64
}

// UnmarshalJSON reads a number or null (encoding/json calls it for null too).
func (p *termPrice) UnmarshalJSON(b []byte) error {
	p.Listed = true
	return json.Unmarshal(b, &p.V)
}

// stock is the availability the API gives for one cloud.
type stock struct {
	StockStatus           *string  `json:"stockStatus"`
	MaxUnreservedGpuCount *float64 `json:"maxUnreservedGpuCount"`
}

// none reports whether the API says the cloud has none of the GPU: the field was
// asked and answered, with no stock status and no unreserved GPU.
func (s *stock) none() bool {
	return s != nil && (s.StockStatus == nil || *s.StockStatus == "") &&
		(s.MaxUnreservedGpuCount == nil || *s.MaxUnreservedGpuCount <= 0)
}

// parseGPUTypes turns a gpuTypes GraphQL response into observations: four per GPU
// type (secure and community, on-demand and spot), and the Secure Cloud's savings
// plans the answer lists (savingsPlanRows). It is pure: rows carry observedAt and
// no source URL.
func parseGPUTypes(r io.Reader, observedAt time.Time) (result, error) {
	var resp response
	if err := json.NewDecoder(r).Decode(&resp); err != nil {
		return result{}, fmt.Errorf("runpod: decoding response: %w", err)
	}
	if len(resp.Errors) > 0 {
		msgs := make([]string, 0, len(resp.Errors))
		for _, e := range resp.Errors {
			m := e.Message
			if len(e.Path) > 0 {
				m += fmt.Sprintf(" (path %v)", e.Path)
			}
			msgs = append(msgs, m)
		}
		return result{}, fmt.Errorf("%w: %s", ErrGraphQL, strings.Join(msgs, "; "))
	}
	if resp.Data == nil || resp.Data.GPUTypes == nil {
		return result{}, fmt.Errorf("%w: the response has no data.gpuTypes array", ErrLayout)
	}
	res := result{Rows: []schemas.Observation{}}
	for _, raw := range *resp.Data.GPUTypes {
		var g gpuType
		if err := json.Unmarshal(raw, &g); err != nil {
			res.Rejects = append(
				res.Rejects,
				rejected{Raw: string(raw), Reason: "runpod: gpuTypes entry: " + err.Error()},
			)
			continue
		}
		if strings.TrimSpace(g.ID) == "" {
			res.Rejects = append(
				res.Rejects,
				rejected{Raw: string(raw), Reason: "runpod: gpuTypes entry without an id"},
			)
			continue
		}
		if g.ID == unknownID {
			res.Skip(skipUnknown)
			continue
		}
		res.Rows = append(res.Rows, gpuTypeRows(g, observedAt)...)
		if g.OneWeekPrice.V != nil {
			res.Skip(skipOneWeek)
		}
	}
	return res, nil
}

// cloudPart is one cloud's part of a gpuTypes entry.
type cloudPart struct {
	cloud     string
	available *bool // secureCloud / communityCloud
	onDemand  *float64
	spot      *float64
	stock     *stock
}

func (g gpuType) clouds() []cloudPart {
	return []cloudPart{
		{cloudSecure, g.SecureCloud, g.SecurePrice, g.SecureSpotPrice, g.SecureStock},
		{cloudCommunity, g.CommunityCloud, g.CommunityPrice, g.CommunitySpotPrice, g.CommunityStock},
	}
}

// gpuTypeRows are a GPU type's rows: on-demand and spot per cloud, then the Secure
// Cloud's savings plans (savingsPlanRows).
func gpuTypeRows(g gpuType, observedAt time.Time) []schemas.Observation {
	var rows []schemas.Observation
	for _, c := range g.clouds() {
		for _, p := range []struct {
			pricing string
			price   *float64
		}{{schemas.OnDemand, c.onDemand}, {schemas.Spot, c.spot}} {
			o := cloudRow(g, c, p.pricing, observedAt)
			switch {
			case p.price == nil:
				o.Attrs["price_text"] = "null"
			case unoffered(c, *p.price) != "":
				o.Attrs["price_text"] = unoffered(c, *p.price)
			default:
				o.PriceNative = *p.price
				if why := placeholder(g, c.cloud, p.pricing, *p.price); why != "" {
					o.PriceNative = 0
					o.Attrs["price_text"] = why
				}
			}
			rows = append(rows, o)
		}
	}
	return append(rows, savingsPlanRows(g, g.clouds()[0], observedAt)...) // clouds()[0]: the Secure Cloud
}

// cloudRow is a row of the GPU type in one cloud, unpriced: its SKU, name, memory
// and the attributes the answer states for the cloud.
func cloudRow(g gpuType, c cloudPart, pricing string, observedAt time.Time) schemas.Observation {
	name := g.DisplayName
	if name == "" {
		name = g.ID
	}
	var mem float64
	if g.MemoryInGb != nil {
		mem = *g.MemoryInGb
	}
	o := schemas.Observation{
		ObservedAt:  observedAt,
		EffectiveAt: observedAt,
		Provider:    "runpod",
		SKU:         g.ID + ":" + c.cloud,
		GPUName:     name,
		GPUCount:    1,
		GPUMemoryGB: mem,
		Pricing:     pricing,
		Currency:    "USD",
		Unit:        schemas.UnitGPUHour,
		SourceKind:  schemas.SourceAPI,
		Attrs: map[string]string{
			"id":          g.ID,
			"displayName": g.DisplayName,
			"cloud":       c.cloud,
			"sku_basis":   "id",
		},
	}
	if g.MemoryInGb != nil {
		o.Attrs["memoryInGb"] = formatFloat(*g.MemoryInGb)
	}
	if c.available != nil {
		o.Attrs["cloud_available"] = strconv.FormatBool(*c.available)
	}
	if s := c.stock; s != nil {
		if s.StockStatus != nil {
			o.Attrs["stockStatus"] = *s.StockStatus
		}
		if s.MaxUnreservedGpuCount != nil {
			o.Attrs["maxUnreservedGpuCount"] = formatFloat(*s.MaxUnreservedGpuCount)
		}
	}
	if lp := g.LowestPrice; lp != nil {
		if lp.MinimumBidPrice != nil {
			o.Attrs["lowestPrice.minimumBidPrice"] = formatFloat(*lp.MinimumBidPrice)
		}
		if lp.UninterruptablePrice != nil {
			o.Attrs["lowestPrice.uninterruptablePrice"] = formatFloat(*lp.UninterruptablePrice)
		}
	}
	return o
}

// unoffered says why a price the answer lists for a cloud is no offer one can take,
// "" when it is one (or is 0, itself "not offered"): the API says the cloud does not
// offer the GPU (secureCloud / communityCloud false), or the cloud's own stock
// answer has no stock status and no unreserved GPU. Both texts start "not offered".
func unoffered(c cloudPart, price float64) string {
	switch {
	case price <= 0:
		return ""
	case c.available != nil && !*c.available:
		return fmt.Sprintf("not offered in %s cloud (%sCloud false; listed %s)", c.cloud, c.cloud, formatFloat(price))
	case c.stock.none():
		return fmt.Sprintf(
			"not offered in %s cloud (lowestPrice stockStatus null, maxUnreservedGpuCount 0; listed %s)",
			c.cloud,
			formatFloat(price),
		)
	}
	return ""
}

// Savings plans (README.md, "Savings plans"): RunPod's documented terms and the
// attributes their rows carry. A plan is paid whole before its term and RunPod
// documents it as non-refundable.
const (
	// PurchaseOption is the savings plans' Attrs["purchase_option"]: the whole term
	// is paid upfront, as AWS's "All Upfront" reservations (analytics/query's
	// upfronts reads it: price × term hours per GPU).
	PurchaseOption = "All Upfront"
	// Cancellation is the savings plans' Attrs["cancellation"]: RunPod's docs say the
	// upfront payment is "generally non-refundable".
	Cancellation = "non-refundable"
	// skipOneWeek counts the GPU types whose non-null oneWeekPrice is passed over:
	// no pricing kind states a week-long term (commitment_<n>m is in months).
	skipOneWeek = "one_week_price_no_pricing_kind"
)

// savingsPlans are the gpuTypes fields of savings plans this source emits, by term
// in months. documented: RunPod documents the term (3 and 6 months), so a null
// price is a plan not offered for the GPU type (a row, counted as not offered); the
// 1-month field, which RunPod does not document, becomes a row only when priced.
var savingsPlans = []struct {
	months     int
	field      string
	price      func(gpuType) termPrice
	documented bool
}{
	{1, "oneMonthPrice", func(g gpuType) termPrice { return g.OneMonthPrice }, false},
	{3, "threeMonthPrice", func(g gpuType) termPrice { return g.ThreeMonthPrice }, true},
	{6, "sixMonthPrice", func(g gpuType) termPrice { return g.SixMonthPrice }, true},
}

// savingsPlanRows are the Secure Cloud's savings-plan rows of a GPU type
// (commitment_1m/3m/6m), per GPU-hour as securePrice: none for a field the answer
// does not carry; a null documented term, the secure cloud not offering the GPU or
// having none in stock are rows at price 0 with a not-offered price_text, as the
// on-demand rows; a price is kept as published (above securePrice too: H100 PCIe's
// recorded 3-month 2.247 against 2.19 on demand).
func savingsPlanRows(g gpuType, c cloudPart, observedAt time.Time) []schemas.Observation {
	var rows []schemas.Observation
	for _, sp := range savingsPlans {
		p := sp.price(g)
		if !p.Listed || (p.V == nil && !sp.documented) {
			continue
		}
		o := cloudRow(g, c, schemas.CommitmentPricing(sp.months), observedAt)
		o.Attrs["purchase_option"] = PurchaseOption
		o.Attrs["cancellation"] = Cancellation
		o.Attrs["price_field"] = sp.field
		switch {
		case p.V == nil:
			o.Attrs["price_text"] = fmt.Sprintf("%s in %s cloud (%s null: no %d-month savings plan for the GPU type)",
				scrapers.NotOfferedPrefix, c.cloud, sp.field, sp.months)
		case unoffered(c, *p.V) != "":
			o.Attrs["price_text"] = unoffered(c, *p.V)
		default:
			o.PriceNative = *p.V
		}
		rows = append(rows, o)
	}
	return rows
}

func formatFloat(f float64) string { return schemas.FormatNum(f) }

// placeholderRatio: a data-centre GPU's price in one cloud at or under this share of
// its price in the other cloud is a placeholder, not an offer. Real RunPod gpuTypes
// responses carry such round values (MI300X community $0.50 against secure $2.39),
// which no marketplace rents at; the recorded reference shows ratios of 0.72–0.88
// between real community and secure prices.
const placeholderRatio = 0.25

// placeholder says why a price is no offer, "" when it is one: under the lowest
// price the API itself gives for the GPU (lowestPrice), or, on a data-centre GPU
// (not GeForce), at a quarter or less of the other cloud's price of the same kind.
func placeholder(g gpuType, cloud, pricing string, price float64) string {
	if lp := g.LowestPrice; lp != nil && price > 0 {
		low := lp.UninterruptablePrice
		if pricing == schemas.Spot {
			low = lp.MinimumBidPrice
		}
		if low != nil && *low > 0 && price < *low*0.999 {
			return fmt.Sprintf(
				"placeholder: %s %s $%s is under the API's lowestPrice $%s",
				cloud,
				pricing,
				formatFloat(price),
				formatFloat(*low),
			)
		}
	}
	if strings.Contains(strings.ToLower(g.ID), "geforce") {
		return ""
	}
	other, otherCloud, otherOffered := g.SecurePrice, cloudSecure, g.SecureCloud
	if pricing == schemas.Spot {
		other = g.SecureSpotPrice
	}
	if cloud == cloudSecure {
		other, otherCloud, otherOffered = g.CommunityPrice, cloudCommunity, g.CommunityCloud
		if pricing == schemas.Spot {
			other = g.CommunitySpotPrice
		}
	}
	if otherOffered != nil && !*otherOffered {
		// The other cloud does not offer the GPU: its listed price is itself no
		// offer (the recorded response lists RTX A2000 secure at $0.50 with
		// secureCloud false) and is no peer to judge this one by.
		return ""
	}
	if other != nil && *other > 0 && price > 0 && price <= placeholderRatio**other {
		return fmt.Sprintf(
			"placeholder: %s %s $%s is a quarter or less of %s $%s for a data-centre GPU",
			cloud,
			pricing,
			formatFloat(price),
			otherCloud,
			formatFloat(*other),
		)
	}
	return ""
}

var (
	numberRE = regexp.MustCompile(`[0-9]+(?:\.[0-9]+)?`)
	priceRE  = regexp.MustCompile(`^\$?\s*([0-9]+(?:\.[0-9]+)?)\s*(?:/\s*(?:hr|hour|h))?$`)
	spaceRE  = regexp.MustCompile(`\s+`)
)

// card is one GPU card of the pricing page, whatever its layout.
type card struct {
	layout    string
	name      string
	tags      []string // "80 GB VRAM", "125 GB RAM", "16 vCPUs"
	secure    *string  // the price attribute; nil when the attribute is absent
	community *string
	deploy    string // the gpu parameter of the deploy link
	raw       *goquery.Selection
}

// Page layouts the parser knows, newest first.
const (
	// .gpu_table-row, .gpu_name, .gpu_table-tag, .gpu_table-price[data-secure][data-community]
	layoutTable  = "gpu_table"
	layoutLegacy = "gpu-pricing-row"    // a.gpu-pricing-row, __model-wrapper, __tag, .cc-gpu-price[data-*-cloud-price]
	skipDup      = "duplicate_gpu_card" // the same GPU name listed twice on the page
)

// parsePage reads the GPU cards of the pricing page: two on-demand rows per card
// (Secure and Community Cloud). It is pure. A page with no card is an ErrLayout error.
func parsePage(r io.Reader, observedAt time.Time) (result, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return result{}, fmt.Errorf("runpod: reading page: %w", err)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(data))
	if err != nil {
		return result{}, fmt.Errorf("runpod: parsing HTML: %w", err)
	}
	cards := tableCards(doc)
	if len(cards) == 0 {
		cards = legacyCards(doc)
	}
	if len(cards) == 0 {
		return result{}, fmt.Errorf(
			"%w: no GPU card (.gpu_table-row or .gpu-pricing-row) on the pricing page",
			ErrLayout,
		)
	}
	res := result{Rows: []schemas.Observation{}}
	seen := map[string]bool{}
	listed := pricedClouds(cards)
	for _, c := range cards {
		if c.name == "" {
			html, _ := goquery.OuterHtml(c.raw)
			res.Rejects = append(
				res.Rejects,
				rejected{Raw: strings.TrimSpace(html), Reason: "runpod: pricing page card without a GPU name"},
			)
			continue
		}
		if seen[c.name] {
			res.Skip(skipDup)
			continue
		}
		seen[c.name] = true
		res.Rows = append(res.Rows, cardRows(c, listed, observedAt)...)
	}
	return res, nil
}

func text(s *goquery.Selection) string {
	return strings.TrimSpace(spaceRE.ReplaceAllString(s.Text(), " "))
}

func attr(s *goquery.Selection, name string) *string {
	if v, ok := s.Attr(name); ok {
		return &v
	}
	return nil
}

func tableCards(doc *goquery.Document) []card {
	var out []card
	doc.Find(".gpu_table-row").Each(func(_ int, row *goquery.Selection) {
		price := row.Find(".gpu_table-price").First()
		if row.Find(".gpu_name").Length() == 0 && price.Length() == 0 {
			return // a header row
		}
		c := card{layout: layoutTable, name: text(row.Find(".gpu_name").First()), raw: row,
			secure: attr(price, "data-secure"), community: attr(price, "data-community")}
		row.Find(".gpu_table-tag").Each(func(_ int, t *goquery.Selection) { c.tags = append(c.tags, text(t)) })
		c.deploy = deployGPU(row)
		out = append(out, c)
	})
	return out
}

func legacyCards(doc *goquery.Document) []card {
	var out []card
	doc.Find(".gpu-pricing-row").Each(func(_ int, row *goquery.Selection) {
		price := row.Find(".cc-gpu-price").First()
		c := card{layout: layoutLegacy, name: text(row.Find(".gpu-pricing-row__model-wrapper").First()), raw: row,
			secure: attr(price, "data-secure-cloud-price"), community: attr(price, "data-community-cloud-price")}
		row.Find(".gpu-pricing-row__tag").Each(func(_ int, t *goquery.Selection) {
			// value and label are sibling divs: "80", "GB VRAM"
			var parts []string
			t.Children().Each(func(_ int, p *goquery.Selection) { parts = append(parts, text(p)) })
			if len(parts) == 0 {
				parts = []string{text(t)}
			}
			c.tags = append(c.tags, strings.Join(parts, " "))
		})
		c.deploy = deployGPU(row)
		out = append(out, c)
	})
	return out
}

// deployGPU is the gpu parameter of the card's console deploy link ("H100 SXM").
func deployGPU(row *goquery.Selection) string {
	href, ok := row.Attr("href")
	if !ok || !strings.Contains(href, "deploy") {
		href, _ = row.Find(`a[href*="deploy"]`).First().Attr("href")
	}
	u, err := url.Parse(href)
	if err != nil {
		return ""
	}
	return u.Query().Get("gpu")
}

// pricedClouds reports, per cloud, whether some card of the page carries its price
// attribute. RunPod's page leaves the attribute out of, or empty on, the cards of
// GPUs a cloud does not offer (MI300X in Community Cloud); an attribute no card
// carries is the page's layout changing, not a cloud offering nothing.
func pricedClouds(cards []card) map[string]bool {
	listed := map[string]bool{}
	for _, c := range cards {
		if c.secure != nil && strings.TrimSpace(*c.secure) != "" {
			listed[cloudSecure] = true
		}
		if c.community != nil && strings.TrimSpace(*c.community) != "" {
			listed[cloudCommunity] = true
		}
	}
	return listed
}

// cardRows are a card's rows, one per cloud. A cloud whose price attribute the card
// leaves out or empty, while other cards of the page carry it (listed), does not
// offer the GPU: a row with price 0 and a not-offered text, counted as not offered.
// A text there ("Contact us") is pageutil.UnpricedText.
func cardRows(c card, listed map[string]bool, observedAt time.Time) []schemas.Observation {
	var mem float64
	attrs := map[string]string{"displayName": c.name, "layout": c.layout, "sku_basis": "display_name"}
	for _, t := range c.tags {
		lower := strings.ToLower(t)
		n := numberRE.FindString(t)
		switch {
		case strings.Contains(lower, "vram"):
			attrs["vram"] = t
			mem, _ = strconv.ParseFloat(n, 64)
		case strings.Contains(lower, "vcpu"):
			attrs["vcpus"] = n
		case strings.Contains(lower, "ram"):
			attrs["ram"] = t
		}
	}
	if c.deploy != "" {
		attrs["deploy_gpu"] = c.deploy
	}
	var rows []schemas.Observation
	for _, p := range []struct {
		cloud string
		price *string
	}{{cloudSecure, c.secure}, {cloudCommunity, c.community}} {
		o := schemas.Observation{
			ObservedAt:  observedAt,
			EffectiveAt: observedAt,
			Provider:    "runpod",
			SKU:         c.name + ":" + p.cloud,
			GPUName:     c.name,
			GPUCount:    1,
			GPUMemoryGB: mem,
			Pricing:     schemas.OnDemand,
			Currency:    "USD",
			Unit:        schemas.UnitGPUHour,
			SourceKind:  schemas.SourceScrape,
			Attrs:       map[string]string{"cloud": p.cloud},
		}
		for k, v := range attrs {
			o.Attrs[k] = v
		}
		switch {
		case (p.price == nil || strings.TrimSpace(*p.price) == "") && listed[p.cloud]:
			o.Attrs["price_text"] = fmt.Sprintf("%s in %s cloud (the card lists no %s price)",
				scrapers.NotOfferedPrefix, p.cloud, p.cloud)
		case p.price == nil:
			o.Attrs["price_text"] = "not listed"
		case strings.TrimSpace(*p.price) == "":
			o.Attrs["price_text"] = "empty"
		default:
			if m := priceRE.FindStringSubmatch(strings.TrimSpace(*p.price)); m != nil {
				o.PriceNative, _ = strconv.ParseFloat(m[1], 64)
			} else {
				o.Attrs["price_text"] = pageutil.UnpricedText(*p.price)
			}
		}
		rows = append(rows, o)
	}
	return rows
}

// StockSignals is the stock a gpuTypes row states for its GPU type and cloud
// (lowestPrice's secureStock / communityStock): a schemas.SignalStock whose Value is
// maxUnreservedGpuCount (0: none to rent now) and Label the stockStatus word
// verbatim ("High", "Medium", "Low"; "" when null). A row without either (the
// pricing page) states no stock; a savings-plan row restates its Secure Cloud's
// stock, read once from the on-demand and spot rows.
func StockSignals(o schemas.Observation) []schemas.Signal {
	status, hasStatus := o.Attrs["stockStatus"]
	count, hasCount := o.Attrs["maxUnreservedGpuCount"]
	if (!hasStatus && !hasCount) || schemas.TermHours(o.Pricing) > 0 {
		return nil
	}
	v := 0.0
	if hasCount {
		n, err := strconv.ParseFloat(count, 64)
		if err != nil {
			n = math.NaN() // quarantined by the signal's validation, with the row's SKU
		}
		v = n
	}
	attrs := map[string]string{"gpu_name": o.GPUName, "cloud_available": o.Attrs["cloud_available"]}
	if o.GPUMemoryGB > 0 {
		attrs["gpu_memory_gb"] = formatFloat(o.GPUMemoryGB)
	}
	return []schemas.Signal{{ObservedAt: o.ObservedAt, EffectiveAt: o.EffectiveAt, Provider: o.Provider, SKU: o.SKU,
		Region: o.Region, Zone: o.Zone, Kind: schemas.SignalStock, Value: v, Label: status, SourceURL: o.SourceURL,
		Attrs: attrs}}
}
