package together

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

// ErrLayout means the page no longer has the GPU pricing tables this parser reads.
var ErrLayout = errors.New("together: pricing page layout changed")

// column is one header cell of a pricing table.
type column struct {
	label string // the header's first caption ("On-demand", "Reserved", "1 month")
	text  string // the whole header text ("On-demand Pay as you go")
}

// parsePage reads every visible table.pricing_table of the page, in document order,
// with the section heading (h2), the sub-heading (p.h4) and the paragraphs around the
// table. See the package documentation for the rules.
func parsePage(r io.Reader, observedAt time.Time) (pageutil.Result, error) {
	return page.ParseReader(r, observedAt)
}

// item is one element of the page the parser reads, in document order.
type item struct {
	kind string // "h2", "h4", "p" or "table"
	sel  *goquery.Selection
}

// pageItems lists the headings, paragraphs outside tables and pricing tables of doc in
// document order, leaving out what the page hides (Webflow's class "hide" is
// display:none: the real page keeps an older GPU Clusters table there).
func pageItems(doc *goquery.Selection) []item {
	var items []item
	doc.Find("h2, p, table.pricing_table").Each(func(_ int, s *goquery.Selection) {
		if s.Closest(".hide").Length() > 0 {
			return
		}
		switch {
		case s.Is("h2"):
			items = append(items, item{"h2", s})
		case s.Is("p.h4"):
			items = append(items, item{"h4", s})
		case s.Is("table"):
			items = append(items, item{"table", s})
		case s.Closest("table").Length() == 0:
			items = append(items, item{"p", s})
		}
	})
	return items
}

// parseDoc reads the rows of the page's document (see parsePage).
func parseDoc(doc *goquery.Selection, observedAt time.Time) (pageutil.Result, error) {
	var res pageutil.Result
	var section, sub string
	found := 0
	seen := map[string]bool{}
	items := pageItems(doc)
	for i, it := range items {
		switch it.kind {
		case "h2":
			section, sub = pageutil.Clean(it.sel.Text()), ""
			continue
		case "h4":
			sub = pageutil.Clean(it.sel.Text())
			continue
		case "p":
			continue
		}
		s := it.sel
		cols := headerColumns(s)
		var header []string
		for _, c := range cols {
			header = append(header, c.text)
		}
		unit, stated := tableUnit(strings.Join(header, " "), tableNotes(items, i))
		s.Find("tbody tr").Each(func(_ int, tr *goquery.Selection) {
			found++
			rows, rej := parseRow(tr, cols, section, sub, unit, stated, observedAt)
			for _, o := range rows {
				key := o.SKU + "|" + o.Pricing
				if seen[key] {
					rej = append(
						rej,
						pageutil.Rejected{
							Raw:    rawRow(tr),
							Reason: fmt.Sprintf("together: %s %s listed twice", o.SKU, o.Pricing),
						},
					)
					continue
				}
				seen[key] = true
				res.Rows = append(res.Rows, o)
			}
			res.Rejects = append(res.Rejects, rej...)
		})
	}
	if found == 0 {
		return res, fmt.Errorf("%w: no rows in a table.pricing_table found", ErrLayout)
	}
	if len(res.Rows) == 0 {
		return res, fmt.Errorf("%w: %d table rows found but none readable", ErrLayout, found)
	}
	return res, nil
}

// tableNotes is the text of the paragraphs that caption the table at items[i]: those
// after the last heading or table before it, the footnotes after it up to the next
// heading or table, then the introduction of its section (the paragraphs right after
// the section's h2).
func tableNotes(items []item, i int) string {
	var notes []string
	j := i - 1
	for ; j >= 0 && items[j].kind == "p"; j-- {
		notes = append(notes, pageutil.Clean(items[j].sel.Text()))
	}
	for k := i + 1; k < len(items) && items[k].kind == "p"; k++ {
		notes = append(notes, pageutil.Clean(items[k].sel.Text()))
	}
	for ; j >= 0 && items[j].kind != "h2"; j-- {
	}
	for k := j + 1; j >= 0 && k < i && items[k].kind == "p"; k++ {
		notes = append(notes, pageutil.Clean(items[k].sel.Text()))
	}
	return strings.Join(notes, " ")
}

// headerColumns is the table's header as one column per grid column: header rows are
// laid out with their rowspan and colspan, and a column's label joins the captions
// stacked over it ("Reserved" over "7-30 days" → "Reserved 7-30 days"; a cell's own
// caption is its first p, "On-demand" of "On-demand Pay as you go").
func headerColumns(table *goquery.Selection) []column {
	type cell struct {
		label, text string
	}
	var grid [][]*cell
	at := func(r, c int) **cell {
		for len(grid) <= r {
			grid = append(grid, nil)
		}
		for len(grid[r]) <= c {
			grid[r] = append(grid[r], nil)
		}
		return &grid[r][c]
	}
	place := func(r int, ths *goquery.Selection) {
		c := 0
		ths.Each(func(_ int, th *goquery.Selection) {
			for *at(r, c) != nil {
				c++
			}
			x := &cell{text: pageutil.Clean(th.Text()), label: pageutil.Clean(th.Find("p").First().Text())}
			if x.label == "" {
				x.label = x.text
			}
			rs, cs := span(th, "rowspan"), span(th, "colspan")
			for dr := 0; dr < rs; dr++ {
				for dc := 0; dc < cs; dc++ {
					*at(r+dr, c+dc) = x
				}
			}
			c += cs
		})
	}
	trs := table.Find("thead tr")
	if trs.Length() == 0 {
		place(0, table.Find("thead th"))
	}
	trs.Each(func(r int, tr *goquery.Selection) { place(r, tr.ChildrenFiltered("th")) })
	width := 0
	for _, row := range grid {
		width = max(width, len(row))
	}
	cols := make([]column, width)
	for c := range cols {
		var labels, texts []string
		var last *cell
		for _, row := range grid {
			if c >= len(row) || row[c] == nil || row[c] == last {
				continue
			}
			last = row[c]
			labels = append(labels, row[c].label)
			texts = append(texts, row[c].text)
		}
		cols[c] = column{label: strings.Join(labels, " "), text: strings.Join(texts, " ")}
	}
	return cols
}

// span is a cell's rowspan or colspan: 1 when absent or unreadable, at most 64.
func span(s *goquery.Selection, attr string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s.AttrOr(attr, "1")))
	if err != nil || n < 1 {
		return 1
	}
	return min(n, 64)
}

var (
	perGPUHourRE = regexp.MustCompile(
		`(?i)\bper\s+gpu[\s-]*(?:per\s+|/\s*)?(?:hour|hr)\b|/\s*gpu[\s/-]*(?:hour|hr|h)\b|\bgpu[\s-]hours?\b`,
	)
	perNodeRE = regexp.MustCompile(`(?i)\bper\s+(?:node|instance|server|machine)\b`)
)

// tableUnit is the unit a table's prices are stated in, from its header first, then
// from the paragraphs captioning it: "per GPU per hour", "/GPU-hour", "GPU-hours" →
// gpu_hour; "per node", "per instance", "per server" → hour. stated is false when
// neither says: the table's prices are quarantined rather than assumed per GPU.
func tableUnit(header, notes string) (unit string, stated bool) {
	for _, t := range []string{header, notes} {
		switch {
		case perNodeRE.MatchString(t):
			return schemas.UnitHour, true
		case perGPUHourRE.MatchString(t):
			return schemas.UnitGPUHour, true
		}
	}
	return "", false
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

func parseRow(
	tr *goquery.Selection,
	cols []column,
	section, sub, unit string,
	stated bool,
	observedAt time.Time,
) ([]schemas.Observation, []pageutil.Rejected) {
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
	width := 0
	tds.Each(func(_ int, td *goquery.Selection) { width += span(td, "colspan") })
	if width > len(cols) {
		return nil, reject("%s: %s: %d cells for %d columns", section, name, width, len(cols))
	}
	model := pageutil.Slug(name, "nvidia")
	if model == "" || pageutil.Slug(section) == "" {
		return nil, reject("%s: hardware %q or its section has no letters or digits", section, name)
	}
	sku := "together:" + pageutil.Slug(section) + ":" + model
	var rows []schemas.Observation
	var rejects []pageutil.Rejected
	next := 0
	tds.Each(func(_ int, td *goquery.Selection) {
		i := next
		next += span(td, "colspan") // a cell spanning columns belongs to the first
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
			rejects = append(
				rejects,
				reject("%s: %s: column %q states no pricing kind or term for %q", section, name, col.text, text)...)
			return
		case !ok:
			return // a note ("Contact sales") under a column without a kind: nothing to record
		case err != nil:
			rejects = append(rejects, reject("%s: %s: %s %q: %v", section, name, col.label, text, err)...)
			return
		case !stated && isPrice && p.Per == "":
			where := section
			if sub != "" {
				where += " / " + sub
			}
			rejects = append(
				rejects,
				reject(
					"%s: %s: %s %q: the table states no price unit (no \"per GPU per hour\" or \"per node\" in its header or "+
						"caption); not assumed per GPU",
					where,
					name,
					col.label,
					text,
				)...)
			return
		case !stated && !isPrice:
			return // a note ("Contact sales") in a table without a unit: nothing to record
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
			o.Attrs["price_text"] = pageutil.UnpricedText(text)
		}
		rows = append(rows, o)
	})
	return rows, rejects
}
