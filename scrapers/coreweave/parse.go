package coreweave

import (
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers/internal/pageutil"
)

// ErrLayout means the page no longer has the GPU pricing table this parser reads.
var ErrLayout = errors.New("coreweave: pricing page layout changed")

// countRE reads a GPU count with an optional footnote marker: "8", "4^1", "4¹".
var countRE = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)\s*(?:\^\s*([0-9]+)|([¹²³⁴⁵⁶⁷⁸⁹]+))?$`)

var superscripts = strings.NewReplacer(
	"¹",
	"1",
	"²",
	"2",
	"³",
	"3",
	"⁴",
	"4",
	"⁵",
	"5",
	"⁶",
	"6",
	"⁷",
	"7",
	"⁸",
	"8",
	"⁹",
	"9",
)

// priceCol is one price a row may carry.
type priceCol struct {
	span    string // class of the labelled price in the row's mobile column
	header  string // the desktop header it falls back to (lower case prefix)
	pricing string
	suffix  string // SKU suffix ("" for the instance itself)
}

var priceCols = []priceCol{
	{"instance-price", "on-demand price", schemas.OnDemand, ""},
	{"spot-price", "spot price", schemas.Spot, ""},
	{"inference-price", "inference single gpu price", schemas.OnDemand, "-inference-1gpu"},
}

// parsePage reads every row (div.table-row-v2) of every GPU table (div.table-v2) on the
// page. See the package documentation for the rules. A page without rows is an
// ErrLayout error; a row that cannot be read is returned in Result.Rejects.
func parsePage(r io.Reader, observedAt time.Time) (pageutil.Result, error) {
	return page.ParseReader(r, observedAt)
}

// parseDoc reads the rows of the page's document (see parsePage).
func parseDoc(doc *goquery.Selection, observedAt time.Time) (pageutil.Result, error) {
	var res pageutil.Result
	found := 0
	doc.Find("div.table-v2").Each(func(_ int, table *goquery.Selection) {
		var headers []string
		table.Find(".table-v2-header .table-header-text").Each(func(_ int, h *goquery.Selection) {
			headers = append(headers, strings.ToLower(pageutil.Clean(h.Text())))
		})
		region := regionOf(table)
		table.Find(".table-row-v2").Each(func(_ int, row *goquery.Selection) {
			found++
			rows, rej := parseRow(row, headers, region, observedAt)
			res.Rows = append(res.Rows, rows...)
			res.Rejects = append(res.Rejects, rej...)
		})
	})
	if found == 0 {
		return res, fmt.Errorf("%w: no GPU rows (div.table-v2 .table-row-v2) found", ErrLayout)
	}
	if len(res.Rows) == 0 {
		return res, fmt.Errorf("%w: %d GPU rows found but none readable", ErrLayout, found)
	}
	return res, nil
}

// regionOf returns the region named by the "REGION: …" eyebrow heading before the
// table, or "".
func regionOf(table *goquery.Selection) string {
	for _, h := range table.PrevAllFiltered("h5, h4, h6").Nodes {
		t := pageutil.Clean(goquery.NewDocumentFromNode(h).Text())
		if len(t) >= 7 && strings.EqualFold(t[:7], "REGION:") {
			return strings.TrimSpace(t[7:])
		}
	}
	return ""
}

// rowCells maps the desktop table's lower-case headers to the row's desktop cells
// (the direct .table-v2-cell children of the row grid, in header order).
func rowCells(row *goquery.Selection, headers []string) map[string]*goquery.Selection {
	cells := map[string]*goquery.Selection{}
	row.Find(".table-grid").First().ChildrenFiltered(".table-v2-cell").Each(func(i int, c *goquery.Selection) {
		if i < len(headers) {
			cells[headers[i]] = c
		}
	})
	return cells
}

// cellByPrefix returns the desktop cell whose header starts with prefix.
func cellByPrefix(cells map[string]*goquery.Selection, prefix string) *goquery.Selection {
	for h, c := range cells {
		if strings.HasPrefix(h, prefix) {
			return c
		}
	}
	return nil
}

// metaValues reads the labelled specs of the row's right-hand (mobile) column:
// "GPU Count" → "4^1", "VRAM" → "186", …, keyed by lower-case label.
func metaValues(row *goquery.Selection) map[string]string {
	out := map[string]string{}
	row.Find(".table-meta-text-right").Each(func(_ int, m *goquery.Selection) {
		v := m.Find(".table-meta-value").First()
		label := pageutil.Clean(m.Children().Not(".table-meta-value").First().Text())
		if label != "" {
			out[strings.ToLower(label)] = pageutil.Clean(v.Text())
		}
	})
	return out
}

// spec returns a spec from the labelled mobile column, else from the desktop cell of
// the header starting with headerPrefix.
func spec(meta map[string]string, cells map[string]*goquery.Selection, label, headerPrefix string) string {
	if v, ok := meta[label]; ok {
		return v
	}
	if c := cellByPrefix(cells, headerPrefix); c != nil {
		return pageutil.Clean(c.Text())
	}
	return ""
}

func parseRow(
	row *goquery.Selection,
	headers []string,
	region string,
	observedAt time.Time,
) ([]schemas.Observation, []pageutil.Rejected) {
	raw := func() string {
		h, _ := goquery.OuterHtml(row)
		return pageutil.RawText(h)
	}
	reject := func(format string, args ...any) []pageutil.Rejected {
		return []pageutil.Rejected{{Raw: raw(), Reason: "coreweave: " + fmt.Sprintf(format, args...)}}
	}
	h3 := row.Find("h3.table-model-name, h3[data-product]").First()
	name := pageutil.Clean(h3.Text())
	product := strings.TrimSpace(h3.AttrOr("data-product", ""))
	if name == "" {
		return nil, reject("row without a GPU model name (h3[data-product])")
	}
	slug := strings.TrimPrefix(product, "nvidia-")
	if slug == "" {
		slug = pageutil.Slug(name, "nvidia")
	}
	if slug == "" {
		slug = pageutil.Slug(name)
	}
	if slug == "" {
		return nil, reject("GPU name %q has no letters or digits", name)
	}
	cells := rowCells(row, headers)
	meta := metaValues(row)

	countText := spec(meta, cells, "gpu count", "gpu count")
	m := countRE.FindStringSubmatch(countText)
	if m == nil {
		return nil, reject("%s: GPU count %q is not a number", name, countText)
	}
	count, _ := strconv.ParseFloat(m[1], 64)
	footnote := m[2] + superscripts.Replace(m[3])

	attrs := map[string]string{
		"vcpus":            spec(meta, cells, "vcpus", "vcpus"),
		"system_ram_gb":    spec(meta, cells, "system ram", "system ram"),
		"local_storage_tb": spec(meta, cells, "local storage (tb)", "local storage"),
	}
	if product != "" {
		attrs["product"] = product
	}
	if footnote != "" {
		attrs["gpu_count_text"] = countText
		attrs["footnote"] = footnote
	}
	for k, v := range attrs {
		if v == "" {
			delete(attrs, k)
		}
	}
	var mem float64
	if v := spec(meta, cells, "vram", "vram"); v != "" {
		if f, err := pageutil.ParseNumber(v); err == nil {
			mem = f
		} else {
			attrs["vram_text"] = v
		}
	}
	interconnect := ""
	if pageutil.MentionsInfiniBand(row.Text()) {
		interconnect = schemas.InterconnectInfiniband
	}
	contact := pageutil.Clean(row.Find("a.table-pricing-url").FilterFunction(func(_ int, a *goquery.Selection) bool {
		return pageutil.Clean(a.Text()) != ""
	}).First().Text())

	var rows []schemas.Observation
	var rejects []pageutil.Rejected
	for _, pc := range priceCols {
		text, ok := "", false
		if v := row.Find("span." + pc.span + " .item-value").First(); v.Length() > 0 {
			text, ok = pageutil.Clean(v.Text()), true
		} else if c := cellByPrefix(cells, pc.header); c != nil {
			text, ok = pageutil.Clean(c.Children().First().Text()), true
		}
		if !ok {
			continue
		}
		o := schemas.Observation{
			ObservedAt:   observedAt,
			EffectiveAt:  observedAt,
			Provider:     "coreweave",
			SKU:          "coreweave:" + slug + pc.suffix,
			Region:       region,
			GPUName:      name,
			GPUCount:     count,
			GPUMemoryGB:  mem,
			Pricing:      pc.pricing,
			Currency:     "USD",
			Unit:         schemas.UnitHour,
			Interconnect: interconnect,
			SourceKind:   schemas.SourceScrape,
			Attrs:        map[string]string{},
		}
		for k, v := range attrs {
			o.Attrs[k] = v
		}
		if pc.suffix != "" {
			o.GPUCount = 1
			o.Attrs["offering"] = "inference_single_gpu"
		}
		switch {
		case text == "" && contact != "":
			o.Attrs["price_text"] = pageutil.UnpricedText(contact)
		case pageutil.NotOffered(text):
			continue
		default:
			p, found, err := pageutil.ReadPrice(text)
			switch {
			case err != nil:
				rejects = append(rejects, reject("%s: %s %q: %v", name, pc.span, text, err)...)
				continue
			case !found:
				o.Attrs["price_text"] = pageutil.UnpricedText(text)
			default:
				o.PriceNative, o.Currency = p.Value, p.Currency
				if p.Qualifier != "" {
					o.Attrs["price_qualifier"] = p.Qualifier
				}
			}
		}
		rows = append(rows, o)
	}
	return rows, rejects
}
