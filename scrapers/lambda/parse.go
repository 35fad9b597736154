package lambda

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

// ErrLayout means the page no longer has the pricing table this parser reads.
var ErrLayout = errors.New("lambda: pricing page layout changed")

var (
	// tabCountRE finds the GPU count a tab names: "8x", "8 x", "8×", "8 GPUs",
	// "8x GPUs", "1 GPU" — a renamed tab still says its count.
	tabCountRE = regexp.MustCompile(`(?i)(?:^|[^0-9])([0-9]+)\s*(?:x|×|gpus?)(?:$|[^a-z])`)
	priceRE    = regexp.MustCompile(`\$\s*([0-9][0-9.,]*)`)
	memRE      = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)\s*(GB|GiB|TB)$`)
	slugRE     = regexp.MustCompile(`[^a-z0-9]+`)
)

// parsePage reads every instance row of every tab of the instances pricing table. The
// tab ("8x", "4x" …) gives the GPU count; the row's plan is the GPU name; its price is
// per GPU-hour (the PRICE/GPU/HR column). A row whose price shows no dollar amount is
// kept with price 0 and the text in Attrs["price_text"]. A page with no rows is an
// ErrLayout error: a silent empty run would look like Lambda stopped selling GPUs.
func parsePage(r io.Reader, observedAt time.Time) (pageutil.Result, error) {
	return page.ParseReader(r, observedAt)
}

// parseDoc reads the rows of the page's document (see parsePage). A panel whose
// tab names no GPU count, and a row that cannot be read, are quarantined with the
// reason; the page's other rows are kept.
func parseDoc(doc *goquery.Selection, observedAt time.Time) (pageutil.Result, error) {
	var res pageutil.Result
	found := 0
	doc.Find(`[role="tabpanel"]`).Each(func(_ int, panel *goquery.Selection) {
		plans := panel.Find("tr[data-plan]")
		if plans.Length() == 0 {
			return
		}
		found += plans.Length()
		id, _ := panel.Attr("id")
		label := strings.TrimSpace(doc.Find(`[role="tab"]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
			c, _ := s.Attr("aria-controls")
			return c != "" && c == id
		}).First().Text())
		m := tabCountRE.FindStringSubmatch(label)
		count := 0
		if m != nil {
			count, _ = strconv.Atoi(m[1])
		}
		plans.Each(func(_ int, tr *goquery.Selection) {
			h, _ := goquery.OuterHtml(tr)
			if count <= 0 {
				res.Rejects = append(res.Rejects, pageutil.Rejected{Raw: pageutil.RawText(h),
					Reason: fmt.Sprintf("lambda: tab %q of panel %q names no GPU count", label, id)})
				return
			}
			o, err := parseRow(tr, count, observedAt)
			if err != nil {
				res.Rejects = append(res.Rejects, pageutil.Rejected{Raw: pageutil.RawText(h), Reason: err.Error()})
				return
			}
			res.Rows = append(res.Rows, o)
		})
	})
	if found == 0 {
		return pageutil.Result{}, fmt.Errorf("%w: no instance rows (tr[data-plan] in a tab panel) found", ErrLayout)
	}
	if len(res.Rows) == 0 {
		return res, fmt.Errorf("%w: %d instance rows found but none readable", ErrLayout, found)
	}
	return res, nil
}

// parseRow reads one tr[data-plan].
func parseRow(tr *goquery.Selection, count int, observedAt time.Time) (schemas.Observation, error) {
	plan := strings.TrimSpace(tr.AttrOr("data-plan", ""))
	cells := map[string]string{}
	priceLabel := ""
	tr.Find("[data-label]").Each(func(_ int, c *goquery.Selection) {
		label := strings.TrimSpace(c.AttrOr("data-label", ""))
		cells[label] = strings.Join(strings.Fields(c.Text()), " ")
		if strings.HasPrefix(strings.ToUpper(label), "PRICE") {
			priceLabel = label
		}
	})
	if plan == "" {
		plan = cells["Plan"]
	}
	if plan == "" || priceLabel == "" {
		return schemas.Observation{}, fmt.Errorf("%w: row %q has no plan or no PRICE cell", ErrLayout, plan)
	}
	vram := cells["VRAM/GPU"]
	memGB := 0.0
	memSlug := ""
	if m := memRE.FindStringSubmatch(vram); m != nil {
		memGB, _ = strconv.ParseFloat(m[1], 64)
		if m[2] == "TB" {
			memGB *= 1000
		}
		memSlug = "_" + strings.ReplaceAll(strconv.FormatFloat(memGB, 'f', -1, 64), ".", "p") + "gb"
	}
	o := schemas.Observation{
		ObservedAt:  observedAt,
		EffectiveAt: observedAt,
		Provider:    "lambda",
		SKU:         fmt.Sprintf("gpu_%dx_%s%s", count, modelSlug(plan), memSlug),
		GPUName:     plan,
		GPUCount:    float64(count),
		GPUMemoryGB: memGB,
		Pricing:     schemas.OnDemand,
		Currency:    "USD",
		Unit:        priceUnit(priceLabel),
		SourceKind:  schemas.SourceScrape,
		Attrs: map[string]string{
			"vcpus":    cells["vCPUs"],
			"ram":      cells["RAM"],
			"storage":  cells["STORAGE"],
			"vram_gpu": vram,
		},
	}
	text := cells[priceLabel]
	if m := priceRE.FindStringSubmatch(text); m != nil {
		// The shared number parser: "$1,29" is 1.29 (a decimal comma), never 129;
		// "$1,234.50" is 1234.5; an ambiguous text is an error, quarantined.
		p, err := pageutil.ParseNumber(strings.TrimRight(m[1], ".,"))
		if err != nil {
			return schemas.Observation{}, fmt.Errorf("lambda: row %q: price %q: %w", plan, text, err)
		}
		o.PriceNative = p
	} else {
		o.Attrs["price_text"] = pageutil.UnpricedText(text)
	}
	return o, nil
}

// priceUnit maps the price column's label to a unit: "PRICE/GPU/HR*" is per GPU-hour,
// "PRICE/HR*" per instance-hour; any other label is passed verbatim for ingest to
// quarantine.
func priceUnit(label string) string {
	l := strings.ToUpper(strings.TrimRight(label, "* "))
	switch l {
	case "PRICE/GPU/HR":
		return schemas.UnitGPUHour
	case "PRICE/HR":
		return schemas.UnitHour
	}
	return label
}

// modelSlug turns a plan name into an instance-type fragment: lower case, vendor and
// brand words (NVIDIA, AMD, Tesla, Quadro) dropped, other runs of non-alphanumerics
// turned into "_" ("NVIDIA H100 SXM" → "h100_sxm").
func modelSlug(plan string) string {
	var keep []string
	for _, w := range strings.Fields(strings.ToLower(plan)) {
		switch w {
		case "nvidia", "amd", "tesla", "quadro":
			continue
		}
		keep = append(keep, w)
	}
	return strings.Trim(slugRE.ReplaceAllString(strings.Join(keep, "_"), "_"), "_")
}
