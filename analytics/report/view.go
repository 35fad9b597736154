package report

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/schemas"
)

// Table is one table of a section: the rows of the command the section names
// (cells equal to query.Missing are missing values).
type Table struct {
	ID      string
	Caption string
	Header  []string // as the reader reads them (humanHeaders of Columns)
	Rows    [][]string
	// Columns are the command's names of the columns (its CSV header), kept in the
	// HTML's data-col attributes.
	Columns []string
}

// Section is one section of the document, for every format.
type Section struct {
	ID, Title string
	Command   string   // the command that gives the section's numbers
	Paras     []string // plain text
	Charts    []Chart
	Tables    []Table
	Notes     []string // after the tables
}

func f4(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

func opt(v *float64, prec int) string {
	if v == nil {
		return query.Missing
	}
	return strconv.FormatFloat(*v, 'f', prec, 64)
}

// txt writes an optional price for prose: "missing" when there is none.
func txt(v *float64) string {
	if v == nil {
		return "missing"
	}
	return "$" + f4(*v)
}

// pick keeps the named columns of a table, in the order named.
func pick(header []string, rows [][]string, names ...string) ([]string, [][]string) {
	idx := make([]int, 0, len(names))
	for _, n := range names {
		if i := slices.Index(header, n); i >= 0 {
			idx = append(idx, i)
		}
	}
	h := make([]string, len(idx))
	for j, i := range idx {
		h[j] = header[i]
	}
	out := make([][]string, len(rows))
	for r, row := range rows {
		out[r] = make([]string, len(idx))
		for j, i := range idx {
			out[r][j] = row[i]
		}
	}
	return h, out
}

func day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// Title is the document's title.
func (r *Report) Title() string {
	return fmt.Sprintf("%s %s: market price report", r.GPU, r.Pricing)
}

// Window is the window's text: first and last day.
func (r *Report) Window() string {
	return day(r.History.From) + " to " + day(r.History.To.Add(-time.Second))
}

// Sections lays the report out, section by section, for every format.
func (r *Report) Layout() []Section {
	var out []Section
	for _, id := range r.Sections() {
		s := Section{ID: id, Title: Titles[id], Command: r.Commands[id]}
		switch id {
		case SecSummary:
			r.summary(&s)
		case SecMarket:
			r.market(&s)
		case SecCheapest:
			h, rows := query.CheapestTable(analytics.History{Cheapest: r.Cheapest})
			s.Tables = append(s.Tables,
				Table{ID: "cheapest-table", Caption: fmt.Sprintf("The %d cheapest %s offers on %s, $/GPU-hour", len(rows),
					r.Pricing, day(r.History.To.Add(-time.Second))), Header: h, Rows: rows})
			if len(rows) == 0 {
				s.Paras = append(s.Paras, "Missing: no offer of this GPU was priced on the window's last day.")
			}
		case SecDiscounts:
			r.discounts(&s)
		case SecTerms:
			r.terms(&s)
		case SecSpreads:
			r.spreads(&s)
		case SecVolatility:
			r.volatility(&s)
		case SecTokens:
			r.tokens(&s)
		case SecInference:
			r.inference(&s)
		case SecIndex:
			r.index(&s)
		case SecRisk:
			r.risk(&s)
		case SecTarget:
			r.target(&s)
		case SecMethod:
			r.method(&s)
		}
		for i := range s.Tables {
			s.Tables[i].Columns = s.Tables[i].Header
			s.Tables[i].Header = humanHeaders(s.Tables[i].Header)
		}
		out = append(out, s)
	}
	return out
}

// humanHeaders are a table's column names as a reader of the document reads them:
// the commands' snake_case names (quote_vs_reference_pct) as words, a percentage
// marked % ("median discount %"), points and $ said.
func humanHeaders(h []string) []string {
	words := strings.NewReplacer("usd_gpu_hour", "$/GPU-hour", "usd_per_1b_tokens", "$ per 1B tokens", "_", " ")
	out := make([]string, len(h))
	for i, c := range h {
		if n, ok := strings.CutSuffix(c, "_pct"); ok {
			c = n + " %"
		} else if n, ok := strings.CutSuffix(c, "_pp"); ok {
			c = n + " (points)"
		}
		out[i] = words.Replace(c)
	}
	return out
}

func (r *Report) summary(s *Section) {
	o := r.History.Overall
	sel := ""
	if r.Query.Region != "" {
		sel += ", region " + r.Query.Region
	}
	if r.Query.Provider != "" {
		sel += ", providers " + r.Query.Provider
	}
	if r.Target != nil {
		// The verdict first: where the quote stands, like for like.
		t := r.Target
		s.Paras = append(s.Paras,
			fmt.Sprintf("Verdict on the quote ($%s per GPU-hour, %s, %d GPU(s)), among the offers in force on %s, %s:",
				f4(t.Quote), analytics.TermWords(t.Term), t.GPUs, r.History.To.Add(-time.Second).Format("2006-01-02"),
				verdictCounted(t.Verdict)))
		s.Paras = append(s.Paras, t.Verdict.Sentences()...)
	}
	if rec := r.RecordedSources(); len(rec) > 0 {
		s.Paras = append(s.Paras, fmt.Sprintf("Built from a recorded example, not from today's prices: the rows of %s "+
			"come from a recorded archive (gpuprice reparse examples/recorded), whose prices keep the time they were recorded "+
			"at. "+
			"Most of its responses are constructed in the providers' formats around real excerpts, with partly illustrative "+
			"values "+
			"(each row's provenance attribute says which; examples/recorded/README.md): no figure here is a provider's price.",
			strings.Join(rec, ", ")))
	}
	s.Paras = append(s.Paras, fmt.Sprintf("%s, %s prices per GPU-hour in USD, %s%s: %d series from %d providers, "+
		"%d days with offers in force. Every percentile is of the market at a time: each day's offers in force, "+
		"%s, then the median over the days (never a pool of series-days).",
		r.GPU, r.Pricing, r.Window(), sel, o.Series, len(r.History.Providers), o.Days, r.counted()))
	if o.P10 == nil {
		s.Paras = append(s.Paras,
			"Missing: no listed price of this GPU and pricing kind in the window; every figure below that needs one is shown "+
				"as missing.")
		return
	}
	s.Paras = append(s.Paras,
		fmt.Sprintf(
			"The market's p10–p90 band over the window is %s to %s (median %s, p25 %s). Today's lowest price is %s and the "+
				"median of today's offers %s: %s%s.",
			txt(o.P10), txt(o.P90), txt(o.P50), txt(o.P25), txt(o.Latest), txt(o.LatestMedian), bandPosition(o), notLike(o)),
		fmt.Sprintf("Trend of the same offers (matched day to day): %s per GPU-hour per 30 days (%s %%); "+
			"beside it, %d series entered and %d left the sample over the window.",
			optSigned(o.TrendPer30d, 4), opt(o.TrendPctPer30d, 2), o.SeriesEntered, o.SeriesLeft),
		query.Composition(o))
	if len(r.Cheapest) > 0 {
		c := r.Cheapest[0]
		s.Paras = append(s.Paras, fmt.Sprintf("Cheapest offer now: %s %s in %s at $%s.", c.Provider, c.SKU, c.Region,
			f4(c.Price)))
	}
	if len(r.Spreads.Summary) > 0 {
		ss := r.Spreads.Summary[0]
		s.Paras = append(s.Paras, fmt.Sprintf("Hyperscalers charged %s× the specialists' median on %s (%s× on %s).",
			strconv.FormatFloat(ss.LastRatio, 'f', 2, 64), ss.LastDay, strconv.FormatFloat(ss.FirstRatio, 'f', 2, 64),
			ss.FirstDay))
	}
}

// counted says how the report's cross-sections count the market: each offer once,
// or (--weight provider) each provider once, its offers' median standing for it.
func (r *Report) counted() string {
	if r.History.Weight == analytics.WeightProvider {
		return "each provider counted once (the median of its offers stands for it, --weight provider), " +
			"so one provider's many regions cannot outvote the rest"
	}
	return "each offer counted once"
}

// countedShort is counted for a caption.
func (r *Report) countedShort() string {
	if r.History.Weight == analytics.WeightProvider {
		return "each provider once"
	}
	return "each once"
}

// RecordedSources are the providers with rows of the report's GPU loaded from a
// recorded example (attrs origin "recorded"), by row: a live run since, failed or
// not, leaves those rows recorded, and the report says it is not of today's prices.
func (r *Report) RecordedSources() []string {
	out := make([]string, 0, len(r.RecordedRows))
	for p := range r.RecordedRows {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

func optSigned(v *float64, prec int) string {
	if v == nil {
		return "missing"
	}
	return strconv.FormatFloat(*v, 'f', prec, 64)
}

// notLike warns that today's prices and the window's band are of different offers
// when offers entered or left over the window (query.Composition says how).
func notLike(o analytics.HistoryStats) string {
	if o.SeriesEntered+o.SeriesLeft == 0 {
		return ""
	}
	return fmt.Sprintf(" — not like for like: %d of today's %d offers were not in force on the window's first day "+
		"and %d of its offers have left (composition, below)", o.SeriesEntered, o.LastDayOffers, o.SeriesLeft)
}

// bandPosition says where today's lowest price stands in the p10–p90 band.
func bandPosition(o analytics.HistoryStats) string {
	if o.Latest == nil || o.P10 == nil || o.P90 == nil {
		return "today's position in the band is missing (no price today)"
	}
	l := *o.Latest
	switch {
	case l < *o.P10:
		return "below the band"
	case l > *o.P90:
		return "above the band"
	case *o.P90 == *o.P10:
		return "inside the band"
	}
	return fmt.Sprintf("%.0f %% of the way up the band", (l-*o.P10)/(*o.P90-*o.P10)*100)
}

// MarketChart is the market price over time: each provider's daily median, each
// tier's, the p10–p90 band and today's lowest price.
func (r *Report) MarketChart() Chart {
	c := Chart{ID: "chart-market", Title: fmt.Sprintf("%s %s: daily median $/GPU-hour by provider and tier", r.GPU,
		r.Pricing),
		YLabel: "$ / GPU-hour", BandLo: r.History.Overall.P10, BandHi: r.History.Overall.P90,
		BandLabel: "market p10–p90 over the window"}
	lines := map[string]*Line{}
	var order []string
	for _, d := range r.History.Daily {
		if d.Group == "all" {
			continue
		}
		name := d.Name
		if d.Group == "tier" {
			name = "tier: " + d.Name
		}
		l := lines[name]
		if l == nil {
			l = &Line{Name: name}
			if d.Group == "tier" {
				l.Dash, l.Width = true, 2.6
			}
			lines[name] = l
			order = append(order, name)
		}
		l.Points = append(l.Points, Point{d.Day, d.Median})
	}
	for i, n := range order {
		l := *lines[n]
		l.Color = Palette[i%len(Palette)]
		c.Lines = append(c.Lines, l)
	}
	if o := r.History.Overall; o.Latest != nil {
		c.Mark = &Point{r.History.To.Add(-time.Second).Truncate(24 * time.Hour), *o.Latest}
		c.MarkLabel = "today's lowest price ($" + f4(*o.Latest) + ")"
	}
	return c
}

func (r *Report) market(s *Section) {
	s.Charts = append(s.Charts, r.MarketChart())
	h, rows := query.HistoryTable(r.History)
	s.Tables = append(s.Tables,
		Table{ID: "history-table", Caption: "Percentiles of the market day by day (each day's offers in force, " +
			r.countedShort() + "; the median over the days), latest, trend and reserved discount (all providers, then each)",
			Header: h, Rows: rows})
	s.Notes = append(s.Notes,
		"provider * is the whole market in the selection; p10…p90 are, for each day, the percentile (type 7) of the offers "+
			"in force that day, "+r.counted()+
			", then the median over the days (days: how many days the row rests on; samples: series-days, for information); "+
			"latest is the lowest price in force on the last day, latest median their median; trend is the change of the "+
			"same series, matched day to day (series entering or leaving never move it; entered and left count them).",
		query.Composition(r.History.Overall))
}

func (r *Report) discounts(s *Section) {
	h := []string{"provider", "pricing", "pairs", "median_discount_pct", "min_discount_pct", "max_discount_pct"}
	var rows [][]string
	for _, d := range r.Discounts {
		rows = append(rows, []string{d.Provider, d.Pricing, strconv.Itoa(d.Pairs), opt(d.Median, 2), opt(d.Min, 2),
			opt(d.Max, 2)})
	}
	s.Paras = append(s.Paras, "The one definition of a discount, used by every table of this report ("+
		analytics.DiscountExplain+
		"): the market table's reserved discount is the same figure for reserved_1y. Pairs 0 means the provider lists that "+
		"term without an on-demand twin: the discount is missing, not zero.")
	if len(rows) == 0 {
		s.Paras = append(s.Paras, "Missing: no reserved or commitment price of this GPU in the selection.")
	}
	s.Tables = append(s.Tables,
		Table{ID: "discounts-table", Caption: "Discounts against on-demand per provider and term, %", Header: h, Rows: rows})
}

// SpreadsChart is the daily median of each tier.
func (r *Report) SpreadsChart() Chart {
	c := Chart{ID: "chart-spreads", Title: fmt.Sprintf("%s %s: daily median by tier", r.GPU, r.Pricing),
		YLabel: "$ / GPU-hour"}
	tiers := []struct {
		name string
		get  func(analytics.SpreadDay) *float64
	}{
		{schemas.TierHyperscaler, func(d analytics.SpreadDay) *float64 { return d.Hyperscaler }},
		{schemas.TierSpecialist, func(d analytics.SpreadDay) *float64 { return d.Specialist }},
		{schemas.TierMarketplace, func(d analytics.SpreadDay) *float64 { return d.Marketplace }},
	}
	for i, t := range tiers {
		l := Line{Name: t.name, Color: Palette[i]}
		for _, d := range r.Spreads.Days {
			if v := t.get(d); v != nil {
				l.Points = append(l.Points, Point{d.Day, *v})
			}
		}
		if len(l.Points) > 0 {
			c.Lines = append(c.Lines, l)
		}
	}
	return c
}

func (r *Report) spreads(s *Section) {
	s.Paras = append(s.Paras,
		"The whole market of the GPU and pricing kind (not narrowed by region or provider): each day's median price of "+
			"each tier's series ("+
			r.counted()+"), the ratio hyperscaler / specialist and the premium (ratio − 1) × 100.")
	s.Charts = append(s.Charts, r.SpreadsChart())
	h := []string{"gpu", "pricing", "first_day", "last_day", "first_ratio", "last_ratio", "ratio_change",
		"premium_moved_pp", "min_ratio", "max_ratio", "days_with_ratio"}
	var rows [][]string
	for _, x := range r.Spreads.Summary {
		g := func(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }
		rows = append(rows, []string{x.GPU, x.Pricing, x.FirstDay, x.LastDay, g(x.FirstRatio), g(x.LastRatio),
			g(x.RatioChange),
			strconv.FormatFloat(x.PremiumMoved, 'f', 2, 64), g(x.MinRatio), g(x.MaxRatio), strconv.Itoa(x.Days)})
	}
	if len(rows) == 0 {
		s.Paras = append(s.Paras, "Missing: no day in the window had both a hyperscaler and a specialist price.")
	}
	s.Tables = append(s.Tables, Table{ID: "spreads-summary", Caption: "How the spread moved over the window", Header: h,
		Rows: rows})
	days := r.Spreads.Days
	if len(days) > 7 {
		days = days[len(days)-7:]
	}
	dh, drows := query.Spreads{Days: days}.Table()
	s.Tables = append(s.Tables, Table{ID: "spreads-days", Caption: "The last days", Header: dh, Rows: drows})
}

func (r *Report) volatility(s *Section) {
	if r.Spot == nil {
		s.Paras = append(s.Paras, "Missing: no spot price of this GPU in the selection.")
		return
	}
	vs := r.Spot.Series
	s.Paras = append(s.Paras,
		fmt.Sprintf(
			"%d spot series over the window (%s bars). Annualised is the standard deviation of log returns scaled to a year; "+
				"max drawdown the largest fall from a previous high.",
			len(vs), map[bool]string{true: "daily", false: "hourly"}[r.SpotQuery.Bar >= 24*time.Hour]))
	cols := []string{"provider", "sku", "region", "zone", "bars", "annualised_pct", "cv_pct", "range_pct",
		"max_drawdown_pct", "changes", "close"}
	top := vs[:min(len(vs), 10)]
	h, rows := query.Volatility{By: analytics.BySeries, Series: top}.Table()
	h, rows = pick(h, rows, cols...)
	s.Tables = append(s.Tables, Table{ID: "volatility-table", Caption: "Most volatile spot series", Header: h, Rows: rows})
	dd := slices.Clone(vs)
	sort.SliceStable(dd, func(i, j int) bool { return dd[i].MaxDrawdown > dd[j].MaxDrawdown })
	dd = dd[:min(len(dd), 5)]
	h, rows = query.Volatility{By: analytics.BySeries, Series: dd}.Table()
	h, rows = pick(h, rows, cols...)
	s.Tables = append(s.Tables, Table{ID: "drawdown-table", Caption: "Worst drawdowns", Header: h, Rows: rows})
}

// risk lays out the interruption bands in force of the GPU's spot offers (highest
// first, ten at most) and each provider's availability of it over the window.
func (r *Report) risk(s *Section) {
	if r.Risk == nil || r.Availability == nil {
		s.Paras = append(s.Paras, "Missing: this store keeps no interruption or stock signals.")
		return
	}
	bands := slices.Clone(r.Risk.Changes)
	sort.SliceStable(bands, func(i, j int) bool { return bands[i].To > bands[j].To })
	if len(bands) == 0 {
		s.Paras = append(s.Paras, "Missing: no interruption band of this GPU's spot offers is stored at the report's time "+
			"(AWS Spot Advisor, Azure eviction rates; gpuprice risk import-spot-advisor backfills AWS's).")
	} else {
		s.Paras = append(s.Paras, fmt.Sprintf("%d spot offer(s) of this GPU have an interruption band in force: AWS's "+
			"share of instances reclaimed over a month, Azure's chance of an eviction within the hour. The rate is the "+
			"band read as interruptions per hour (docs/risk.md); a job's expected cost is its price × (1 + rate × "+
			"(checkpoint/2 + restart)): the job factor, here for a checkpoint every 30 minutes and a 10-minute "+
			"restart (gpuprice prices --risk-adjusted prices each offer with it).", len(bands)))
		top := bands[:min(len(bands), 10)]
		h, rows := query.RiskHistory{Changes: top}.Table()
		h, rows = pick(h, rows, "provider", "sku", "region", "at", "to", "rate_per_hour")
		h = append(h, "job_factor")
		for i, c := range top {
			f := "–"
			if c.RatePerHour > 0 {
				jc, err := analytics.ExpectedJobCost(1, c.RatePerHour, analytics.SpotJob{Hours: 1, CheckpointMin: 30,
					RestartMin: 10})
				if err == nil {
					f = strconv.FormatFloat(jc.Factor, 'f', 6, 64)
				}
			}
			rows[i] = append(rows[i], f)
		}
		for i := range h {
			switch h[i] {
			case "at":
				h[i] = "since"
			case "to":
				h[i] = "band"
			}
		}
		s.Tables = append(s.Tables, Table{ID: "risk-table", Caption: "Interruption band in force, highest first",
			Header: h, Rows: rows})
		s.Notes = append(s.Notes, "The bands: "+r.RiskCommand)
	}
	a := r.Availability
	if len(a.Rows) == 0 {
		s.Paras = append(s.Paras, "Missing: no provider states the stock of this GPU in the window.")
		return
	}
	s.Paras = append(s.Paras, fmt.Sprintf("Stock of this GPU per provider from %s to %s: in stock while any of its "+
		"offers is, each stock signal holding until the next, 3 hours at most (then not observed). Least available "+
		"first; last is the providers' newest stock summed, in its unit.", day(a.Since), day(a.Until)))
	h, rows := a.Table()
	h, rows = pick(h, rows, "provider", "kind", "series", "in_stock_share", "observed_h", "outages", "longest_outage_h",
		"last", "unit")
	s.Tables = append(s.Tables, Table{ID: "availability-table", Caption: "Availability by provider", Header: h,
		Rows: rows})
}

func (r *Report) tokens(s *Section) {
	h, rows := r.Tokens.Table()
	costSection(s, fmt.Sprintf("Training cost of a %s-parameter model on a job of %s (6 × parameters FLOPs per token, "+
		"bf16 dense peak, the midpoint of the published MFU band of the job on each offer: a job that fits one node of "+
		"NVLink-class GPUs is single-node NVLink whatever the fabric between nodes; the interconnect counts only when the "+
		"job "+
		"crosses nodes) at the %s offers listed now.",
		query.FormatCount(r.Query.ModelParams), r.TokensJob.String(), r.Pricing),
		Table{ID: "tokens-table", Caption: "$ per 1B training tokens, cheapest first", Header: h, Rows: rows},
		r.Tokens.Skipped)
	// Which band each offer took, and why (`tokens --explain`).
	bands := map[string]int{}
	for _, row := range r.Tokens.Rows {
		bands[row.MFUSource]++
	}
	var band []string
	for b, n := range bands {
		band = append(band, fmt.Sprintf("MFU of %d offer(s): %s", n, b))
	}
	sort.Strings(band)
	s.Notes = append(s.Notes, band...)
}

func (r *Report) inference(s *Section) {
	h, rows := r.Inference.Table()
	costSection(s, fmt.Sprintf("Serving a %s-parameter model at fp16, one sequence at a time: decode reads every weight "+
		"once per token, so output tokens/s = GPUs × memory bandwidth × %s (the published efficiency band's midpoint) ÷ "+
		"weight bytes; a model that does not fit one GPU is split by tensor parallelism over the fewest GPUs of the "+
		"instance that hold it. Batching divides the cost per token (gpuprice inference --batch); see docs/analytics.md "+
		"for the sources and the gap to measured throughputs.", query.FormatCount(r.Query.ModelParams),
		analytics.FormatNumber(analytics.DecodeEfficiency.Mid(), 3)),
		Table{ID: "inference-table", Caption: "$ per 1M output tokens, cheapest first", Header: h, Rows: rows},
		r.Inference.Skipped)
}

// costSection lays out a cost-per-token section: what it computes, its table (or
// that it is missing) and the offers left out with why.
func costSection(s *Section, para string, t Table, skipped map[string]int) {
	s.Paras = append(s.Paras, para)
	if len(t.Rows) == 0 {
		s.Paras = append(s.Paras, "Missing: no offer on which to compute it (see the reasons below).")
	}
	s.Tables = append(s.Tables, t)
	var why []string
	for k, n := range skipped {
		why = append(why, fmt.Sprintf("%d left out: %s", n, k))
	}
	sort.Strings(why)
	s.Notes = append(s.Notes, why...)
}

// IndexChart is the reference index over time, each group's.
func (r *Report) IndexChart() Chart {
	c := Chart{ID: "chart-index", Title: fmt.Sprintf("%s %s: reference index", r.GPU, r.Pricing), YLabel: "$ / GPU-hour"}
	lines := map[string]*Line{}
	var order []string
	for _, p := range r.Index {
		for _, k := range []string{p.Group, p.Group + " (chained)"} {
			if lines[k] == nil {
				lines[k] = &Line{Name: k, Dash: strings.HasSuffix(k, "(chained)")}
				order = append(order, k)
			}
		}
		lines[p.Group].Points = append(lines[p.Group].Points, Point{p.Day, p.Price})
		lines[p.Group+" (chained)"].Points = append(lines[p.Group+" (chained)"].Points, Point{p.Day, p.Chained})
	}
	for i, k := range order {
		l := *lines[k]
		l.Color = Palette[(i/2)%len(Palette)]
		c.Lines = append(c.Lines, l)
	}
	return c
}

func (r *Report) index(s *Section) {
	s.Paras = append(s.Paras, "The whole market of the GPU and pricing kind. "+analytics.IndexMethod+". Beside it, "+
		analytics.ChainedMethod+".")
	s.Charts = append(s.Charts, r.IndexChart())
	last := map[string]analytics.IndexPoint{}
	var groups []string
	for _, p := range r.Index {
		if _, ok := last[p.Group]; !ok {
			groups = append(groups, p.Group)
		}
		last[p.Group] = p
	}
	var pts []analytics.IndexPoint
	for _, g := range groups {
		pts = append(pts, last[g])
	}
	// The report is about one GPU, so its column is left out (the table fits a page).
	h, rows := query.IndexTable(pts)
	h, rows = pick(h, rows, "pricing", "group", "day", "price_usd_gpu_hour", "offers", "dropped", "method",
		"chained_usd_gpu_hour", "chained_matched", "chained_method", "carried", "last_seen")
	if len(rows) == 0 {
		s.Paras = append(s.Paras, "Missing: no index day in the window.")
	}
	s.Tables = append(s.Tables, Table{ID: "index-table", Caption: "The index on its last day", Header: h, Rows: rows})
}

func (r *Report) target(s *Section) {
	t := r.Target
	s.Paras = append(s.Paras,
		fmt.Sprintf("Quote: $%s per GPU-hour for %d GPU(s) over %s (%s hours), placed among the %s offers "+
			"in force on the window's last day, %s; on-demand and spot are compared for the same hours.",
			f4(t.Quote), t.GPUs, t.Term, strconv.FormatFloat(t.Hours, 'f', 0, 64), analytics.TermWords(t.Term),
			verdictCounted(t.Verdict)))
	s.Paras = append(s.Paras, t.Verdict.Sentences()...)
	if c := t.AtUtilisation; c != nil {
		s.Paras = append(s.Paras,
			c.Sentence("quote", t.Term, fmt.Sprintf("today's on-demand median ($%s)", f4(c.Alternative)))+
				gpusTotal(c.Saving, t.GPUs))
	}
	h := []string{"reference", "$/GPU-hour", "quote − reference", "vs reference"}
	var rows [][]string
	for _, v := range t.Against {
		pct := opt(v.Pct, 1)
		if v.Pct != nil {
			pct += " %"
		}
		rows = append(rows, []string{v.Name, opt(v.Price, 4), opt(v.Diff, 4), pct})
	}
	s.Tables = append(s.Tables, Table{ID: "target-table", Caption: "The quote against like-for-like references", Header: h,
		Rows: rows})
	if t.SavingPerHour != nil {
		if *t.SavingPerHour > 0 {
			s.Paras = append(s.Paras,
				fmt.Sprintf("The cheapest %s offer ($%s) would save $%s per GPU-hour: $%s over the %s term for %d GPU(s).",
					analytics.TermWords(t.Term), f4(*t.TermMin), f4(*t.SavingPerHour), money(*t.SavingOverTerm), t.Term, t.GPUs))
		} else {
			s.Paras = append(s.Paras,
				fmt.Sprintf(
					"The quote is at or below the cheapest %s offer ($%s): $%s per GPU-hour under it, $%s over the %s term for %d "+
						"GPU(s).",
					analytics.TermWords(t.Term), f4(*t.TermMin), f4(-*t.SavingPerHour), money(-*t.SavingOverTerm), t.Term, t.GPUs))
		}
	}
	oh, orows := query.CheapestTable(analytics.History{Cheapest: t.TermOffers})
	oh = append([]string{"pricing"}, oh...)
	for i := range orows {
		orows[i] = append([]string{t.TermOffers[i].Pricing}, orows[i]...)
	}
	if len(orows) == 0 {
		s.Paras = append(s.Paras,
			fmt.Sprintf("Missing: no %s offer (%s) of this GPU in the selection on the window's last day.", t.Term,
				strings.Join(TermKinds(t.Term), ", ")))
	}
	s.Tables = append(s.Tables, Table{ID: "term-offers", Caption: fmt.Sprintf("The cheapest %s offers (%s)", t.Term,
		strings.Join(TermKinds(t.Term), ", ")), Header: oh, Rows: orows})
}

// verdictCounted says how the verdict counted the offers it ranks the quote among.
func verdictCounted(v analytics.Verdict) string {
	if v.Weight == analytics.WeightProvider {
		return "each provider counted once (the median of its offers stands for it, --weight provider: the counts, ranks " +
			"and medians are of providers)"
	}
	return "each offer counted once"
}

// gpusTotal says a saving over the term for the quote's GPUs.
func gpusTotal(saving float64, gpus int) string {
	if saving < 0 {
		return fmt.Sprintf(" For %d GPU(s): a loss of $%s.", gpus, money(-saving*float64(gpus)))
	}
	return fmt.Sprintf(" For %d GPU(s): a saving of $%s.", gpus, money(saving*float64(gpus)))
}

func (r *Report) terms(s *Section) {
	t := r.Terms
	s.Paras = append(s.Paras,
		fmt.Sprintf("Every offer of %s in force on %s, in $/GPU-hour with any upfront amortised over the term, "+
			"against the term's length: on-demand and spot at 0 months, then each reservation and commitment. The discount is "+
			"like for like (the same provider's on-demand price of the same SKU, region and zone; missing without one); "+
			"vs on demand median %% compares the medians, a different mix of offers.", t.GPU, day(t.Day)))
	h, rows := t.Table()
	if len(rows) == 0 {
		s.Paras = append(s.Paras, "Missing: no offer of this GPU is in force on that day.")
	}
	s.Tables = append(s.Tables, Table{ID: "terms-table", Caption: "The term curve: the market, then each provider",
		Header: h, Rows: rows})
}

// money writes dollars with thousands separators and cents.
func money(v float64) string {
	s := strconv.FormatFloat(v, 'f', 2, 64)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	whole, frac, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	out := b.String() + "." + frac
	if neg {
		out = "-" + out
	}
	return out
}

func (r *Report) method(s *Section) {
	c := r.Citation
	cite := fmt.Sprintf("Built %s from the store %s", r.Built.Format(time.RFC3339), orMissing(c.Store))
	if c.NewestRun != nil {
		cite += fmt.Sprintf(" (newest run %s of %s, %s)", c.NewestRun.RunID, c.NewestRun.Source,
			c.NewestRun.StartedAt.UTC().Format(time.RFC3339))
	}
	cite += ". Data SHA-256 " + c.DataSHA256 +
		": a hash over the answers of the commands named in each section; the same store and query give the same hash."
	s.Paras = append(s.Paras, cite)
	if c.Snapshot != nil {
		s.Paras = append(s.Paras, "Published snapshot: "+c.Snapshot.Sentence+".")
	} else {
		s.Paras = append(s.Paras,
			"No published snapshot is cited: `gpuprice publish --out DIR` writes immutable daily snapshots, and `gpuprice "+
				"report --snapshot DIR` cites the days that cover the window.")
	}
	s.Paras = append(s.Paras, fmt.Sprintf("Query: %s.", r.Commands[SecMarket]),
		"Definitions. Prices are USD per GPU-hour: an instance's price divided by its GPUs, converted at the ECB reference "+
			"rate of the day when published in another currency. A day's price of a series is its last daily close in force "+
			"that day; a series its provider no longer lists ends the day after its last sighting. Tiers: hyperscaler (AWS, "+
			"GCP, Azure, Oracle), specialist clouds, marketplaces. Missing values are shown as missing, never as zero.")
	// Sources and when each was collected.
	h := []string{"source", "provider", "tier", "method", "last_run", "status", "rows", "newest_sighting_in_report"}
	var rows [][]string
	for _, src := range r.Sources {
		last, status, n := query.Missing, query.Missing, query.Missing
		if src.LastRun != nil {
			last, status, n = src.LastRun.StartedAt.UTC().Format(time.RFC3339), src.LastRun.Status,
				strconv.Itoa(src.LastRun.RowsAccepted)
		}
		seen := query.Missing
		if t, ok := r.NewestSeen[src.Provider]; ok && !t.IsZero() {
			seen = t.UTC().Format(time.RFC3339)
		}
		if src.LastRun == nil && seen == query.Missing {
			continue // never ran, nothing of it in the report
		}
		rows = append(rows, []string{src.Name, src.Provider, src.Tier, src.Method, last, status, n, seen})
	}
	s.Tables = append(s.Tables,
		Table{ID: "sources-table", Caption: "Sources: when each last ran and when the report's offers were last seen",
			Header: h, Rows: rows})
	eh := []string{"excluded", "rows", "what"}
	var erows [][]string
	for _, e := range r.Excluded {
		erows = append(erows, []string{e.Reason, strconv.Itoa(e.Rows), e.What})
	}
	s.Tables = append(s.Tables,
		Table{ID: "excluded-table", Caption: "What was left out and why (rows of this GPU in the selection)", Header: eh,
			Rows: erows})
	var cmds []string
	for _, id := range r.Sections() {
		if c := r.Commands[id]; c != "" {
			cmds = append(cmds, Titles[id]+": "+c)
		}
	}
	s.Notes = append(s.Notes, cmds...)
}

func orMissing(s string) string {
	if s == "" {
		return "(not named)"
	}
	return s
}
