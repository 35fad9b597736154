package gcp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
	"github.com/gpuprice/gpuprice/scrapers/internal/pageutil"
)

// ErrLayout means the GPU pricing page no longer has the tables this parser reads.
var ErrLayout = errors.New("gcp: GPU pricing page layout changed")

var (
	priceRE      = regexp.MustCompile(`\$\s*([0-9][0-9,]*(?:\.[0-9]+)?)`)
	regionCodeRE = regexp.MustCompile(`\b([a-z]+-[a-z]+[0-9]+)\b`)
)

// column roles of a pricing page table.
const (
	colRegion = "region"
	colModel  = "model"
)

// skipNotOffered counts the price cells saying a GPU is not offered.
const skipNotOffered = "not_offered"

// notOffered are the cell texts that mean a GPU is not sold that way in that region:
// no row (counted by the caller through the returned skip count).
var notOffered = map[string]bool{"": true, "-": true, "—": true, "–": true, "n/a": true, "na": true,
	"not available": true, "unavailable": true, "not offered": true}

// parsePricingPage reads the public GPU pricing page: one table per GPU model (the
// model named by the heading before the table, its caption, or a Model column), one
// row per region, and one price column per pricing kind (on-demand, spot, 1-year and
// 3-year commitment), each a price per GPU-hour. A cell with a dollar amount is a row;
// a cell saying the GPU is not offered ("N/A", "—", "Not available", empty) is no row
// and is counted in Skipped[skipNotOffered]; any other text is a row with price 0 and
// Attrs["price_text"] (pageutil.UnpricedText: "Contact sales" a not-offered text). Tables without a region column and a
// price column are not price
// tables and are passed over. A page with no price rows is an ErrLayout error.
func parsePricingPage(r io.Reader, observedAt time.Time) (scrapers.Result, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return scrapers.Result{}, fmt.Errorf("gcp: reading pricing page: %w", err)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return scrapers.Result{}, fmt.Errorf("%w: the page is empty", ErrLayout)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(data))
	if err != nil {
		return scrapers.Result{}, fmt.Errorf("gcp: parsing pricing page HTML: %w", err)
	}
	var rows []schemas.Observation
	notOfferedCells := 0
	heading := ""
	doc.Find("h1, h2, h3, h4, table").Each(func(_ int, s *goquery.Selection) {
		if !s.Is("table") {
			heading = text(s)
			return
		}
		model := heading
		if c := text(s.Find("caption").First()); c != "" {
			model = c
		}
		rs, skipped := parseTable(s, model, observedAt)
		rows = append(rows, rs...)
		notOfferedCells += skipped
	})
	if len(rows) == 0 {
		return scrapers.Result{}, fmt.Errorf("%w: no GPU price table (a Region column and a price column) found", ErrLayout)
	}
	res := scrapers.Result{Rows: rows}
	if notOfferedCells > 0 {
		res.Skipped = map[string]int{skipNotOffered: notOfferedCells}
	}
	return res, nil
}

// text is the whitespace-normalised text of a selection.
func text(s *goquery.Selection) string { return strings.Join(strings.Fields(s.Text()), " ") }

// columnRole names what a header cell holds: colRegion, colModel, a pricing kind, or "".
func columnRole(h string) string {
	l := strings.ToLower(h)
	switch {
	case strings.Contains(l, "region") || strings.Contains(l, "location"):
		return colRegion
	case strings.Contains(l, "spot") || strings.Contains(l, "preemptible"):
		return schemas.Spot
	case strings.Contains(l, "1-year") || strings.Contains(l, "1 year") || strings.Contains(l, "1yr"):
		return schemas.Reserved1Y
	case strings.Contains(l, "3-year") || strings.Contains(l, "3 year") || strings.Contains(l, "3yr"):
		return schemas.Reserved3Y
	case strings.Contains(l, "on-demand") || strings.Contains(l, "on demand") || strings.Contains(l, "price"):
		return schemas.OnDemand
	case l == "model" || l == "gpu" || l == "gpu model":
		return colModel
	}
	return ""
}

// parseTable reads one table; it returns no rows for a table that is not a GPU price
// table, and counts the not-offered cells.
func parseTable(t *goquery.Selection, model string, observedAt time.Time) ([]schemas.Observation, int) {
	headerRow := t.Find("thead tr").First()
	if headerRow.Length() == 0 {
		headerRow = t.Find("tr").First()
	}
	var roles, headers []string
	hasPrice, regionCol, modelCol := false, -1, -1
	headerRow.Find("th, td").Each(func(i int, c *goquery.Selection) {
		h := text(c)
		role := columnRole(h)
		switch role {
		case colRegion:
			if regionCol < 0 {
				regionCol = i
			}
		case colModel:
			if modelCol < 0 {
				modelCol = i
			}
		case "":
		default:
			hasPrice = true
		}
		roles = append(roles, role)
		headers = append(headers, h)
	})
	if regionCol < 0 || !hasPrice {
		return nil, 0
	}
	var rows []schemas.Observation
	skipped := 0
	t.Find("tr").Each(func(_ int, tr *goquery.Selection) {
		if tr.IsSelection(headerRow) || tr.Find("td").Length() == 0 {
			return
		}
		var cells []string
		tr.Find("th, td").Each(func(_ int, c *goquery.Selection) { cells = append(cells, text(c)) })
		if regionCol >= len(cells) {
			return
		}
		rowModel := model
		if modelCol >= 0 && modelCol < len(cells) && cells[modelCol] != "" {
			rowModel = cells[modelCol]
		}
		regionText := cells[regionCol]
		region := regionText
		if m := regionCodeRE.FindStringSubmatch(regionText); m != nil {
			region = m[1]
		}
		acc := acceleratorOf(rowModel)
		for i, role := range roles {
			if role == "" || role == colRegion || role == colModel || i >= len(cells) {
				continue
			}
			cell := cells[i]
			if notOffered[strings.ToLower(cell)] {
				skipped++
				continue
			}
			o := schemas.Observation{
				ObservedAt:  observedAt,
				EffectiveAt: observedAt,
				Provider:    "gcp",
				SKU:         acc.Type,
				Region:      region,
				GPUName:     rowModel,
				GPUCount:    1,
				GPUMemoryGB: acc.MemGB,
				Pricing:     role,
				Currency:    "USD",
				Unit:        schemas.UnitGPUHour,
				SourceKind:  schemas.SourceScrape,
				PriceScope:  schemas.ScopeGPUOnly, // the GPU alone, as the API's accelerator SKUs
				Attrs: map[string]string{
					"column":      headers[i],
					"region_text": regionText,
				},
			}
			if m := priceRE.FindStringSubmatch(cell); m != nil {
				if p, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64); err == nil {
					o.PriceNative = p
				} else {
					o.Attrs["price_text"] = cell
				}
			} else {
				o.Attrs["price_text"] = pageutil.UnpricedText(cell)
			}
			rows = append(rows, o)
		}
	})
	return rows, skipped
}
