package report

import (
	"fmt"
	"html"
	"html/template"
	"math"
	"strings"
	"time"
)

// Point is one value of a line on a day.
type Point struct {
	X time.Time
	Y float64
}

// Line is one named line of a chart. A day with no value is a gap, never a zero.
type Line struct {
	Name   string
	Color  string
	Dash   bool
	Width  float64
	Points []Point // sorted by X
}

// Chart is a time chart drawn as inline SVG: lines, an optional horizontal band
// (the p10–p90), and an optional marked point (today's price).
type Chart struct {
	ID, Title, YLabel string
	Lines             []Line
	BandLo, BandHi    *float64
	BandLabel         string
	Mark              *Point
	MarkLabel         string
	// Gap is the longest step between two points drawn as one segment (default
	// 1 day + 1 h: daily values).
	Gap time.Duration
}

// Palette colours the lines (colour-blind safe, Okabe–Ito and Tol's).
var Palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#882255", "#44AA99",
	"#999933", "#AA4499", "#332288", "#661100"}

const (
	chartW, chartH         = 860.0, 320.0
	padL, padR, padT, padB = 64.0, 16.0, 16.0, 36.0
)

// SVG draws the chart; with no points it says the data is missing.
func (c Chart) SVG() template.HTML {
	gap := c.Gap
	if gap == 0 {
		gap = 25 * time.Hour
	}
	var xmin, xmax time.Time
	ymin, ymax := math.Inf(1), math.Inf(-1)
	n := 0
	for _, l := range c.Lines {
		for _, p := range l.Points {
			if xmin.IsZero() || p.X.Before(xmin) {
				xmin = p.X
			}
			if p.X.After(xmax) {
				xmax = p.X
			}
			ymin, ymax = math.Min(ymin, p.Y), math.Max(ymax, p.Y)
			n++
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" id="%s" role="img" aria-label="%s" viewBox="0 0 %g %g">`,
		html.EscapeString(c.ID), html.EscapeString(c.Title), chartW, chartH)
	fmt.Fprintf(&b, `<title>%s</title>`, html.EscapeString(c.Title))
	if n == 0 {
		fmt.Fprintf(&b,
			`<text class="missing" x="%g" y="%g" text-anchor="middle">missing: no prices in the window</text></svg>`, chartW/2,
			chartH/2)
		return template.HTML(b.String())
	}
	for _, v := range []*float64{c.BandLo, c.BandHi} {
		if v != nil {
			ymin, ymax = math.Min(ymin, *v), math.Max(ymax, *v)
		}
	}
	if c.Mark != nil {
		ymin, ymax = math.Min(ymin, c.Mark.Y), math.Max(ymax, c.Mark.Y)
	}
	ticks, lo, hi := niceTicks(ymin, ymax, 5)
	if !xmax.After(xmin) {
		xmin, xmax = xmin.Add(-12*time.Hour), xmax.Add(12*time.Hour)
	}
	x := func(t time.Time) float64 {
		return padL + (chartW-padL-padR)*float64(t.Sub(xmin))/float64(xmax.Sub(xmin))
	}
	y := func(v float64) float64 { return chartH - padB - (chartH-padT-padB)*(v-lo)/(hi-lo) }
	// Grid and axes.
	b.WriteString(`<g class="axis">`)
	for _, t := range ticks {
		fmt.Fprintf(&b,
			`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="grid"/><text x="%.1f" y="%.1f" text-anchor="end">%s</text>`,
			padL, chartW-padR, y(t), y(t), padL-6, y(t)+4, fmtTick(t))
	}
	for _, t := range timeTicks(xmin, xmax) {
		if x(t) > chartW-padR-30 || x(t) < padL+30 {
			continue // its label would be cut at the edge
		}
		fmt.Fprintf(&b,
			`<line x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f" class="tick"/><text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`,
			x(t), x(t), chartH-padB, chartH-padB+4, x(t), chartH-padB+18, t.Format("2006-01-02"))
	}
	fmt.Fprintf(&b, `<text x="14" y="%.1f" transform="rotate(-90 14 %.1f)" text-anchor="middle">%s</text>`,
		(chartH-padB+padT)/2, (chartH-padB+padT)/2, html.EscapeString(c.YLabel))
	b.WriteString(`</g>`)
	if c.BandLo != nil && c.BandHi != nil {
		fmt.Fprintf(&b, `<rect class="band" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>%s</title></rect>`,
			padL, y(*c.BandHi), chartW-padL-padR, math.Max(y(*c.BandLo)-y(*c.BandHi), 1), html.EscapeString(c.BandLabel))
	}
	for i, l := range c.Lines {
		col := l.Color
		if col == "" {
			col = Palette[i%len(Palette)]
		}
		w := l.Width
		if w == 0 {
			w = 1.6
		}
		var d strings.Builder
		for j, p := range l.Points {
			cmd := "L"
			if j == 0 || p.X.Sub(l.Points[j-1].X) > gap {
				cmd = "M"
			}
			fmt.Fprintf(&d, "%s%.1f %.1f", cmd, x(p.X), y(p.Y))
			if cmd == "M" && (j == len(l.Points)-1 || l.Points[j+1].X.Sub(p.X) > gap) {
				fmt.Fprintf(&d, "h0.01") // a lone day: a dot, not nothing
			}
		}
		dash := ""
		if l.Dash {
			dash = ` stroke-dasharray="6 4"`
		}
		fmt.Fprintf(&b,
			`<path class="line" data-name="%s" d="%s" fill="none" stroke="%s" stroke-width="%.1f" stroke-linecap="round" `+
				`stroke-linejoin="round"%s><title>%s</title></path>`,
			html.EscapeString(l.Name), d.String(), col, w, dash, html.EscapeString(l.Name))
	}
	if c.Mark != nil {
		fmt.Fprintf(&b, `<circle class="mark" cx="%.1f" cy="%.1f" r="5"><title>%s</title></circle>`, x(c.Mark.X), y(c.Mark.Y),
			html.EscapeString(c.MarkLabel))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

// Legend is the chart's legend as HTML.
func (c Chart) Legend() template.HTML {
	var b strings.Builder
	b.WriteString(`<ul class="legend">`)
	for i, l := range c.Lines {
		col := l.Color
		if col == "" {
			col = Palette[i%len(Palette)]
		}
		style := "solid"
		if l.Dash {
			style = "dashed"
		}
		fmt.Fprintf(&b, `<li><span class="swatch" style="border-top:3px %s %s"></span>%s</li>`, style, col,
			html.EscapeString(l.Name))
	}
	if c.BandLo != nil && c.BandHi != nil {
		fmt.Fprintf(&b, `<li><span class="swatch band"></span>%s</li>`, html.EscapeString(c.BandLabel))
	}
	if c.Mark != nil {
		fmt.Fprintf(&b, `<li><span class="swatch mark"></span>%s</li>`, html.EscapeString(c.MarkLabel))
	}
	b.WriteString(`</ul>`)
	return template.HTML(b.String())
}

// niceTicks returns about n round tick values covering [lo, hi].
func niceTicks(lo, hi float64, n int) ([]float64, float64, float64) {
	if hi <= lo {
		d := math.Max(math.Abs(lo)*0.1, 0.01)
		lo, hi = lo-d, hi+d
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	start := math.Floor(lo/step) * step
	end := math.Ceil(hi/step) * step
	var ticks []float64
	for v := start; v <= end+step/2; v += step {
		ticks = append(ticks, v)
	}
	return ticks, start, end
}

func fmtTick(v float64) string {
	switch a := math.Abs(v); {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// timeTicks returns up to 8 round days between from and to.
func timeTicks(from, to time.Time) []time.Time {
	span := to.Sub(from)
	steps := []time.Duration{24 * time.Hour, 2 * 24 * time.Hour, 7 * 24 * time.Hour, 14 * 24 * time.Hour,
		30 * 24 * time.Hour,
		61 * 24 * time.Hour, 91 * 24 * time.Hour, 182 * 24 * time.Hour, 365 * 24 * time.Hour}
	step := steps[len(steps)-1]
	for _, s := range steps {
		if span/s <= 7 {
			step = s
			break
		}
	}
	var out []time.Time
	t := from.UTC().Truncate(24 * time.Hour)
	if step >= 30*24*time.Hour { // month starts
		t = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		months := int(step / (30 * 24 * time.Hour))
		if step == 61*24*time.Hour {
			months = 2
		} else if step == 91*24*time.Hour {
			months = 3
		} else if step == 182*24*time.Hour {
			months = 6
		} else if step == 365*24*time.Hour {
			months = 12
		}
		for ; !t.After(to); t = t.AddDate(0, months, 0) {
			if !t.Before(from) {
				out = append(out, t)
			}
		}
		return out
	}
	for ; !t.After(to); t = t.Add(step) {
		if !t.Before(from) {
			out = append(out, t)
		}
	}
	return out
}
