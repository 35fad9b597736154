package crusoe

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers/internal/pageutil"
)

// ErrLayout means the page no longer has the GPU price cards this parser reads.
var ErrLayout = errors.New("crusoe: pricing page layout changed")

// parsePage reads every price table of the page: a .pricing-table-heading row of
// column labels ("GPU model", "On-demand", "Current spot", "1-year reserved" …) and,
// in the same container, one card (.pricing_gpu-item) per GPU whose .pricing-rich
// cells follow the labels in order. See the package documentation for the rules.
func parsePage(r io.Reader, observedAt time.Time) (pageutil.Result, error) {
	return page.ParseReader(r, observedAt)
}

// parseDoc reads the rows of the page's document (see parsePage).
func parseDoc(doc *goquery.Selection, observedAt time.Time) (pageutil.Result, error) {
	var res pageutil.Result
	cards := 0
	seen := map[string]bool{}
	doc.Find(".pricing-table-heading").Each(func(_ int, heading *goquery.Selection) {
		var labels []string
		heading.Find(".pricing-heading").Each(func(_ int, h *goquery.Selection) {
			labels = append(labels, pageutil.Clean(h.Text()))
		})
		heading.Parent().Find(".pricing_gpu-item").Each(func(_ int, card *goquery.Selection) {
			cards++
			rows, rej := parseCard(card, labels, observedAt)
			for _, o := range rows {
				key := o.SKU + "|" + o.Pricing
				if seen[key] {
					rej = append(
						rej,
						pageutil.Rejected{
							Raw:    rawCard(card),
							Reason: fmt.Sprintf("crusoe: %s %s listed twice", o.SKU, o.Pricing),
						},
					)
					continue
				}
				seen[key] = true
				res.Rows = append(res.Rows, o)
			}
			res.Rejects = append(res.Rejects, rej...)
		})
	})
	if cards == 0 {
		return res, fmt.Errorf(
			"%w: no GPU price cards (.pricing-table-heading with .pricing_gpu-item) found",
			ErrLayout,
		)
	}
	if len(res.Rows) == 0 {
		return res, fmt.Errorf("%w: %d GPU cards found but none readable", ErrLayout, cards)
	}
	return res, nil
}

func rawCard(card *goquery.Selection) string {
	h, _ := goquery.OuterHtml(card)
	return pageutil.RawText(h)
}

// parseCard reads one GPU card against the column labels of its table.
func parseCard(
	card *goquery.Selection,
	labels []string,
	observedAt time.Time,
) ([]schemas.Observation, []pageutil.Rejected) {
	reject := func(format string, args ...any) []pageutil.Rejected {
		return []pageutil.Rejected{{Raw: rawCard(card), Reason: "crusoe: " + fmt.Sprintf(format, args...)}}
	}
	name := pageutil.Clean(card.Find("h4.pricing-item-heading").First().Text())
	if name == "" {
		return nil, reject("card without a GPU name (h4.pricing-item-heading)")
	}
	var mem float64
	var memText string
	var tags []string
	interconnect := ""
	card.Find(".pricing-tag").Each(func(_ int, t *goquery.Selection) {
		v := pageutil.Clean(t.Text())
		switch {
		case v == "":
		case memText == "" && pageutil.MemoryGB(v) > 0:
			memText, mem = v, pageutil.MemoryGB(v)
		case pageutil.MentionsInfiniBand(v):
			interconnect = schemas.InterconnectInfiniband
		default:
			tags = append(tags, v)
		}
	})
	if interconnect == "" && pageutil.MentionsInfiniBand(card.Text()) {
		interconnect = schemas.InterconnectInfiniband
	}
	cells := card.Find(".pricing-rich")
	if len(labels) < 2 || cells.Length() != len(labels)-1 {
		return nil, reject("%s: %d price cells for the columns %q", name, cells.Length(), labels)
	}
	model := pageutil.Slug(name, "nvidia", "amd")
	if model == "" {
		model = pageutil.Slug(name)
	}
	if model == "" {
		return nil, reject("GPU name %q has no letters or digits", name)
	}
	sku := "crusoe:" + model
	for _, t := range tags {
		// A tag the name already says ("NVL72" on "NVIDIA GB200 NVL72") adds nothing.
		if ts := pageutil.Slug(t); ts != "" && !strings.Contains("-"+model+"-", "-"+ts+"-") {
			sku += "-" + ts
		}
	}
	if mem > 0 {
		sku += "-" + strconv.FormatFloat(mem, 'f', -1, 64) + "gb"
	}
	var rows []schemas.Observation
	var rejects []pageutil.Rejected
	cells.Each(func(i int, c *goquery.Selection) {
		label := labels[i+1]
		kind, ok := pageutil.KindFromLabel(label)
		if !ok {
			rejects = append(rejects, reject("%s: column %q is not a pricing kind", name, label)...)
			return
		}
		text := pageutil.Clean(c.Text())
		if pageutil.NotOffered(text) {
			return
		}
		o := schemas.Observation{
			ObservedAt:   observedAt,
			EffectiveAt:  observedAt,
			Provider:     "crusoe",
			SKU:          sku,
			GPUName:      name,
			GPUCount:     1,
			GPUMemoryGB:  mem,
			Pricing:      kind,
			Currency:     "USD",
			Unit:         schemas.UnitGPUHour,
			Interconnect: interconnect,
			SourceKind:   schemas.SourceScrape,
			Attrs:        map[string]string{"column": label},
		}
		if len(tags) > 0 {
			o.Attrs["form_factor"] = strings.Join(tags, " ")
		}
		if memText != "" {
			o.Attrs["memory_text"] = memText
		}
		p, found, err := pageutil.ReadPrice(text)
		switch {
		case err != nil:
			rejects = append(rejects, reject("%s: %s %q: %v", name, label, text, err)...)
			return
		case !found:
			o.Attrs["price_text"] = pageutil.UnpricedText(text)
		default:
			o.PriceNative, o.Currency = p.Value, p.Currency
			o.Unit = pageutil.UnitFromPer(p.Per, schemas.UnitGPUHour)
			if p.Qualifier != "" {
				o.Attrs["price_qualifier"] = p.Qualifier
			}
		}
		rows = append(rows, o)
	})
	return rows, rejects
}
