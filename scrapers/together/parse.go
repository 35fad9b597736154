package together

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

// ErrLayout means the page no longer has the GPU pricing tables this parser reads.
var ErrLayout = errors.New("together: pricing page layout changed")

// column is one header cell of a pricing table.
type column struct {
	label string // the header's first caption ("On-demand", "Reserved", "1 month")
	text  string // the whole header text ("On-demand Pay as you go")
}

// parsePage reads every table.pricing_table of the page, in document order, with the
// section heading (h2) and sub-heading (p.h4) before it. See the package documentation
// for the rules.
func parsePage(r io.Reader, observedAt time.Time) (pageutil.Result, error) {
	return page.ParseReader(r, observedAt)
}

// parseDoc reads the rows of the page's document (see parsePage).
func parseDoc(doc *goquery.Selection, observedAt time.Time) (pageutil.Result, error) {
	var res pageutil.Result
	var section, sub string
	found := 0
	seen := map[string]bool{}
	doc.Find("h2, p.h4, table.pricing_table").Each(func(_ int, s *goquery.Selection) {
		switch {
		case s.Is("h2"):
			section, sub = pageutil.Clean(s.Text()), ""
			return
		case s.Is("p.h4"):
			sub = pageutil.Clean(s.Text())
			return
		}
		var cols []column
		s.Find("thead th").Each(func(_ int, th *goquery.Selection) {
			c := column{text: pageutil.Clean(th.Text())}
			c.label = pageutil.Clean(th.Find("p").First().Text())
			if c.label == "" {
				c.label = c.text
			}
			cols = append(cols, c)
		})
		unit := tableUnit(cols)
		s.Find("tbody tr").Each(func(_ int, tr *goquery.Selection) {
			found++
			rows, rej := parseRow(tr, cols, section, sub, unit, observedAt)
			for _, o := range rows {
				key := o.SKU + "|" + o.Pricing
				if seen[key] {
					rej = append(rej, pageutil.Rejected{Raw: rawRow(tr), Reason: fmt.Sprintf("together: %s %s listed twice", o.SKU, o.Pricing)})
					continue
				}
				seen[key] = true
				res.Rows = append(res.Rows, o)
			}
			res.Rejects = append(res.Rejects, rej...)
		})
	})
	if found == 0 {
		return res, fmt.Errorf("%w: no rows in a table.pricing_table found", ErrLayout)
	}
	if len(res.Rows) == 0 {
		return res, fmt.Errorf("%w: %d table rows found but none readable", ErrLayout, found)
	}
	return res, nil
}

// tableUnit is the unit a table's header states: "per node" or "per instance" is per
// instance-hour; anything else ("All prices per gpu per hour", or nothing) per
// GPU-hour, as Together prices its GPU offerings.
func tableUnit(cols []column) string {
	for _, c := range cols {
		t := strings.ToLower(c.text)
		if strings.Contains(t, "per node") || strings.Contains(t, "per instance") || strings.Contains(t, "per server") {
			return schemas.UnitHour
		}
	}
	return schemas.UnitGPUHour
}

func rawRow(tr *goquery.Selection) string {
	h, _ := goquery.OuterHtml(tr)
	return pageutil.RawText(h)
}

// kindOf is the pricing kind of a cell: from its column header, else from the table's
// sub-heading ("On-demand", "Reserved"); a reserved column whose header states no term
// takes it from the cell's link ("/monthly-reserved" → 1 month).
func kindOf(col column, sub string, cell *goquery.Selection) (string, bool) {
	if k, ok := pageutil.KindFromLabel(col.label); ok {
		return k, true
	}
	reserved := strings.Contains(strings.ToLower(col.label+" "+sub), "reserved")
	if !reserved {
		if k, ok := pageutil.KindFromLabel(sub); ok {
			return k, true
		}
		return "", false
	}
	if m, ok := pageutil.TermMonths(cell.Find("a").AttrOr("href", "")); ok {
		return pageutil.KindForMonths(m), true
	}
	return "", false
}

func parseRow(tr *goquery.Selection, cols []column, section, sub, unit string, observedAt time.Time) ([]schemas.Observation, []pageutil.Rejected) {
	reject := func(format string, args ...any) []pageutil.Rejected {
		return []pageutil.Rejected{{Raw: rawRow(tr), Reason: "together: " + fmt.Sprintf(format, args...)}}
	}
	tds := tr.ChildrenFiltered("td")
	if tds.Length() < 2 {
		return nil, reject("%s: row with %d cells", section, tds.Length())
	}
	name := pageutil.Clean(tds.First().Text())
	if name == "" || strings.EqualFold(name, "nvidia") {
		return nil, reject("%s: row without hardware name", section)
	}
	if tds.Length() > len(cols) {
		return nil, reject("%s: %s: %d cells for %d columns", section, name, tds.Length(), len(cols))
	}
	model := pageutil.Slug(name, "nvidia")
	if model == "" || pageutil.Slug(section) == "" {
		return nil, reject("%s: hardware %q or its section has no letters or digits", section, name)
	}
	sku := "together:" + pageutil.Slug(section) + ":" + model
	var rows []schemas.Observation
	var rejects []pageutil.Rejected
	tds.Each(func(i int, td *goquery.Selection) {
		if i == 0 {
			return
		}
		col := cols[i]
		text := pageutil.Clean(td.Find("p[data-batch]").First().Text())
		if td.Find("p[data-batch]").Length() == 0 {
			text = pageutil.Clean(td.Text())
		}
		if pageutil.NotOffered(text) {
			return
		}
		p, isPrice, err := pageutil.ReadPrice(text)
		kind, ok := kindOf(col, sub, td)
		switch {
		case !ok && (isPrice || err != nil):
			rejects = append(rejects, reject("%s: %s: column %q states no pricing kind or term for %q", section, name, col.text, text)...)
			return
		case !ok:
			return // a note ("Contact sales") under a column without a kind: nothing to record
		case err != nil:
			rejects = append(rejects, reject("%s: %s: %s %q: %v", section, name, col.label, text, err)...)
			return
		}
		o := schemas.Observation{
			ObservedAt:  observedAt,
			EffectiveAt: observedAt,
			Provider:    "together",
			SKU:         sku,
			GPUName:     name,
			GPUCount:    1,
			GPUMemoryGB: pageutil.MemoryGB(name),
			Pricing:     kind,
			Currency:    "USD",
			Unit:        unit,
			SourceKind:  schemas.SourceScrape,
			Attrs:       map[string]string{"section": section, "column": col.label},
		}
		if sub != "" {
			o.Attrs["subsection"] = sub
		}
		if pageutil.MentionsInfiniBand(tr.Text()) {
			o.Interconnect = schemas.InterconnectInfiniband
		}
		if isPrice {
			o.PriceNative, o.Currency = p.Value, p.Currency
			o.Unit = pageutil.UnitFromPer(p.Per, unit)
			if p.Qualifier != "" {
				o.Attrs["price_qualifier"] = p.Qualifier
			}
		} else {
			o.Attrs["price_text"] = text
		}
		rows = append(rows, o)
	})
	return rows, rejects
}
