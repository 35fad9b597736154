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
	tabCountRE = regexp.MustCompile(`^(\d+)\s*[xX]$`)
	priceRE    = regexp.MustCompile(`\$\s*([0-9][0-9,]*(?:\.[0-9]+)?)`)
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

// parseDoc reads the rows of the page's document (see parsePage).
func parseDoc(doc *goquery.Selection, observedAt time.Time) (pageutil.Result, error) {
	var rows []schemas.Observation
	var perr error
	doc.Find(`[role="tabpanel"]`).EachWithBreak(func(_ int, panel *goquery.Selection) bool {
		plans := panel.Find("tr[data-plan]")
		if plans.Length() == 0 {
			return true
		}
		id, _ := panel.Attr("id")
		label := strings.TrimSpace(doc.Find(`[role="tab"]`).FilterFunction(func(_ int, s *goquery.Selection) bool {
			c, _ := s.Attr("aria-controls")
			return c != "" && c == id
		}).First().Text())
		m := tabCountRE.FindStringSubmatch(label)
		if m == nil {
			perr = fmt.Errorf("%w: tab %q of panel %q is not a GPU count", ErrLayout, label, id)
			return false
		}
		count, _ := strconv.Atoi(m[1])
		plans.EachWithBreak(func(_ int, tr *goquery.Selection) bool {
			o, err := parseRow(tr, count, observedAt)
			if err != nil {
				perr = err
				return false
			}
			rows = append(rows, o)
			return true
		})
		return perr == nil
	})
	if perr != nil {
		return pageutil.Result{}, perr
	}
	if len(rows) == 0 {
		return pageutil.Result{}, fmt.Errorf("%w: no instance rows (tr[data-plan] in a tab panel) found", ErrLayout)
	}
	return pageutil.Result{Rows: rows}, nil
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
		p, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
		if err != nil {
			return schemas.Observation{}, fmt.Errorf("lambda: row %q: price %q: %w", plan, text, err)
		}
		o.PriceNative = p
	} else {
		o.Attrs["price_text"] = text
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
