package gmi

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers/internal/pageutil"
)

// ErrLayout means the page no longer has the GPU price cards this parser reads.
var ErrLayout = errors.New("gmi: pricing page layout changed")

// parsePage reads every price card of the page: an h3 (the GPU) whose card also holds a
// price span followed by a unit span that starts with "/" ("/GPU-hour"). The nearest h2
// before a card sets its pricing kind. See the package documentation for the rules.
func parsePage(r io.Reader, observedAt time.Time) (pageutil.Result, error) {
	return page.ParseReader(r, observedAt)
}

// parseDoc reads the rows of the page's document (see parsePage).
func parseDoc(doc *goquery.Selection, observedAt time.Time) (pageutil.Result, error) {
	var res pageutil.Result
	section := ""
	cards := 0
	seen := map[string]bool{}
	doc.Find("h2, h3").Each(func(_ int, h *goquery.Selection) {
		if h.Is("h2") {
			section = pageutil.Clean(h.Text())
			return
		}
		card := h.Parent()
		unit := card.Find("span").FilterFunction(func(_ int, s *goquery.Selection) bool {
			return strings.HasPrefix(pageutil.Clean(s.Text()), "/")
		}).First()
		if unit.Length() == 0 {
			return // an h3 that is not a price card
		}
		cards++
		o, rej := parseCard(card, h, unit, section, observedAt)
		if rej != nil {
			res.Rejects = append(res.Rejects, *rej)
			return
		}
		if o.SKU == "" {
			return
		}
		key := o.SKU + "|" + o.Pricing
		if seen[key] {
			res.Rejects = append(
				res.Rejects,
				pageutil.Rejected{Raw: rawCard(card), Reason: fmt.Sprintf("gmi: %s %s listed twice", o.SKU, o.Pricing)},
			)
			return
		}
		seen[key] = true
		res.Rows = append(res.Rows, o)
	})
	if cards == 0 {
		return res, fmt.Errorf("%w: no GPU price cards (h3 with a \"/GPU-hour\" unit) found", ErrLayout)
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

// sectionKind is the pricing kind of the cards under a heading: on_demand unless the
// heading names another kind; a "Reserved" heading without a term is not readable.
func sectionKind(section string) (string, bool) {
	if k, ok := pageutil.KindFromLabel(section); ok {
		return k, true
	}
	l := strings.ToLower(section)
	if strings.Contains(l, "reserved") || strings.Contains(l, "commit") {
		return "", false
	}
	return schemas.OnDemand, true
}

func parseCard(
	card, h3, unitSpan *goquery.Selection,
	section string,
	observedAt time.Time,
) (schemas.Observation, *pageutil.Rejected) {
	reject := func(format string, args ...any) (schemas.Observation, *pageutil.Rejected) {
		return schemas.Observation{}, &pageutil.Rejected{
			Raw:    rawCard(card),
			Reason: "gmi: " + fmt.Sprintf(format, args...),
		}
	}
	name := pageutil.Clean(h3.Text())
	if name == "" {
		return reject("card without a GPU name (h3)")
	}
	slug := pageutil.Slug(name, "nvidia", "gpu")
	if slug == "" {
		slug = pageutil.Slug(name)
	}
	if slug == "" {
		return reject("GPU name %q has no letters or digits", name)
	}
	priceSpan := unitSpan.PrevFiltered("span")
	if priceSpan.Length() == 0 {
		return reject("%s: no price before the unit %q", name, pageutil.Clean(unitSpan.Text()))
	}
	text := pageutil.Clean(priceSpan.Text())
	if pageutil.NotOffered(text) {
		return schemas.Observation{}, nil // "—": this GPU has no price of this kind
	}
	kind, ok := sectionKind(section)
	switch {
	case !ok && pageutil.NotSold(text):
		// "Contact sales" under a heading without a term: no price to misfile.
		return schemas.Observation{}, nil
	case !ok:
		return reject("%s: section %q states no commitment term", name, section)
	}
	per := strings.TrimPrefix(pageutil.Clean(unitSpan.Text()), "/")
	o := schemas.Observation{
		ObservedAt:  observedAt,
		EffectiveAt: observedAt,
		Provider:    "gmi",
		SKU:         "gmi:" + slug,
		GPUName:     name,
		GPUCount:    1,
		GPUMemoryGB: pageutil.MemoryGB(name),
		Pricing:     kind,
		Currency:    "USD",
		Unit:        pageutil.UnitFromPer(per, schemas.UnitGPUHour),
		SourceKind:  schemas.SourceScrape,
		Attrs:       map[string]string{},
	}
	if section != "" {
		o.Attrs["section"] = section
	}
	// The availability badge ("AVAILABLE NOW", "Limited Availability") is the card's
	// text-only div.
	card.ChildrenFiltered("div").EachWithBreak(func(_ int, d *goquery.Selection) bool {
		if d.Find("span, h3").Length() == 0 {
			if t := pageutil.Clean(d.Text()); t != "" {
				o.Attrs["availability"] = t
				return false
			}
		}
		return true
	})
	if pageutil.MentionsInfiniBand(card.Text()) {
		o.Interconnect = schemas.InterconnectInfiniband
	}
	p, found, err := pageutil.ReadPrice(text)
	switch {
	case err != nil:
		return reject("%s: price %q: %v", name, text, err)
	case !found:
		o.Attrs["price_text"] = pageutil.UnpricedText(text)
	default:
		o.PriceNative, o.Currency = p.Value, p.Currency
		if p.Qualifier != "" {
			o.Attrs["price_qualifier"] = p.Qualifier
		}
	}
	return o, nil
}
