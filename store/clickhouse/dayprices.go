package clickhouse

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// ServerDayPrices returns st (a ClickHouse store) computing spreads and history on
// the server (store.DayPriceStats). The plain store does not: measured on
// ClickHouse 18.16 (BENCHMARKS.md), these array queries were slower than reading
// the window's daily bars and computing in Go (0.43 s against 0.27 s for 30 days of
// spreads at 100M raw rows), so `spreads` and `history` read bars; this is kept,
// tested against the Go definitions, for servers and data where it pays (a remote
// server: one row per day instead of every bar) and for the benchmark.
func ServerDayPrices(st store.Store) (store.Store, error) {
	s, ok := st.(*Store)
	if !ok {
		return nil, fmt.Errorf("clickhouse: ServerDayPrices of a %T", st)
	}
	return serverDayPrices{s}, nil
}

// serverDayPrices is a Store whose spreads and history are computed on the server.
type serverDayPrices struct{ *Store }

var _ store.DayPriceStats = serverDayPrices{}

// Spreads is Store.ServerSpreads.
func (s serverDayPrices) Spreads(ctx context.Context, f store.Filter) ([]store.SpreadDay, error) {
	return s.ServerSpreads(ctx, f)
}

// History is Store.ServerHistory.
func (s serverDayPrices) History(ctx context.Context, f store.Filter, gpu, pricing string, cheapest int) (store.History, error) {
	return s.ServerHistory(ctx, f, gpu, pricing, cheapest)
}

// query is a query's text with its arguments, built in the order they appear.
type query struct {
	b    strings.Builder
	args []any
}

func (q *query) add(text string, args ...any) *query {
	q.b.WriteString(text)
	q.args = append(q.args, args...)
	return q
}

// pct is the text of the p-th quantile of the sorted Array(Float64) a, as
// analytics.Percentile computes it (type 7: with h = (n−1)·p and l = ⌊h⌋,
// a[l] + (h − l)·(a[l+1] − a[l]) in the same order of operations), NaN for an
// empty array. p is a constant of the code, written exactly ('g', −1).
func pct(a string, p float64) string {
	h := `((toFloat64(length(` + a + `)) - 1) * ` + strconv.FormatFloat(p, 'g', -1, 64) + `)`
	l := `floor(` + h + `)`
	at := func(off string) string { return `arrayElement(` + a + `, toUInt64(` + l + `) + ` + off + `)` }
	return `if(length(` + a + `) = 0, nan, if(` + l + ` >= toFloat64(length(` + a + `)) - 1, arrayElement(` + a + `, length(` + a + `)), ` +
		at("1") + ` + (` + h + ` - ` + l + `) * (` + at("2") + ` - ` + at("1") + `)))`
}

// comparable is analytics.Comparable on a bar's columns: a listed price ("" before
// schema version 5) for a whole instance.
const comparable = `(price_basis IN ('', '` + schemas.BasisListed + `') AND price_scope IN ('', '` + schemas.ScopeInstance + `'))`

// dayPrices writes the text of a subquery of every day price that
// analytics.DailyPrices lays the daily bars of f (with carry-in) on over the days
// [f.Since, f.Until): one row per series and day with the series' columns p, k,
// r, z, pr, its last sighting seen (Unix seconds, 0 unknown), the day d (Unix
// seconds), and the price, gpu g, tier t and start bst of the bar it comes from.
//
// Per series, the window's bars (each its last version) and the bar carried in
// from before the window go into arrays sorted by start, keeping the comparable
// ones; per provider, the newest sighting among its series decides which are
// withdrawn (analytics.PriceEnd); per day, the price in force is the close of the
// last bar starting on or before it.
func dayPrices(q *query, f store.Filter) {
	from := f.Since.UTC().Truncate(store.Daily)
	days := int64(0)
	for d := from; d.Before(f.Until); d = d.Add(store.Daily) {
		days++
	}
	bq := store.BarQuery{Filter: f, Width: store.Daily}
	// The bar tuple: (start, close, gpu, tier, last sighting, comparable).
	const tuple = `(toUInt32(bar_start), close, gpu, tier, toUInt32(last_observed_at), toUInt8(` + comparable + `))`
	const names = `any(provider) AS bp, any(sku) AS bk, any(region) AS br, any(zone) AS bz, any(pricing) AS bpr`
	stale, grace := int64(24*time.Hour/time.Second), int64(store.Daily/time.Second)
	// No lambda here reads a column of its query other than its arguments
	// (arrayResize repeats one): ClickHouse 18.16 drops a subquery's column that an
	// outer query uses only inside a lambda.
	q.add(`SELECT p, k, r, z, pr, seen, d, arrayCount((s, x) -> s <= x, starts, arrayResize([d], length(starts), d)) AS i,
		closes[i] AS price, gpus[i] AS g, tiers[i] AS t, starts[i] AS bst
	FROM (SELECT p, k, r, z, pr, seen, starts, closes, gpus, tiers,
			if(seen = 0 OR toInt64(seen) >= toInt64(newest) - ?, toInt64(0),
				greatest(intDiv(toInt64(seen), 86400) * 86400 + 86400 + ?, intDiv(toInt64(starts[length(starts)]), 86400) * 86400 + 86400)) AS e,
			arrayMap(n -> toUInt32(? + n * 86400), range(?)) AS days,
			arrayFilter((x, s1, ee) -> x >= s1 AND (ee = 0 OR x < ee), days,
				arrayResize([starts[1]], length(days), starts[1]), arrayResize([e], length(days), e)) AS ds
		FROM (SELECT p, max(seen) AS newest, groupArray(k) AS ks, groupArray(r) AS rs, groupArray(z) AS zs,
				groupArray(pr) AS prs, groupArray(seen) AS seens, groupArray(starts) AS startss,
				groupArray(closes) AS closess, groupArray(gpus) AS gpuss, groupArray(tiers) AS tierss
			FROM (SELECT any(bp) AS p, any(bk) AS k, any(br) AS r, any(bz) AS z, any(bpr) AS pr,
					arraySort(x -> x.1, groupArrayIf(b, b.6 = 1)) AS bs,
					arrayMap(x -> x.1, bs) AS starts, arrayMap(x -> x.2, bs) AS closes,
					arrayMap(x -> x.3, bs) AS gpus, arrayMap(x -> x.4, bs) AS tiers,
					arrayReduce('max', arrayMap(x -> x.5, bs)) AS seen
				FROM (`, stale, grace, uint64(clampTime(from).Unix()), uint64(days))
	// The window's bars, each its last version (the tier is the last version's).
	where, args := barConds(bq, f.Since, f.Until)
	q.add(`SELECT h1, h2, `+names+`, argMax(`+tuple+`, version) AS b
					FROM bars WHERE `+where+`
					GROUP BY cityHash64(provider, sku, region, zone, pricing) AS h1,
						sipHash64(provider, sku, region, zone, pricing) AS h2, bar_start`, args...)
	if f.Tier != "" {
		q.add(` HAVING b.4 = ?`, f.Tier)
	}
	// The bar in force before the window: the last version of the series' latest
	// bar before it (with a tier filter, of the latest whose last version has it).
	where, args = barConds(bq, time.Time{}, f.Since)
	if f.Tier == "" {
		// Only bars at or after the earliest of the series' latest starts before
		// the window can be carried in: a first pass over bar_start alone finds
		// that bound (typically the day before the window), so that the second,
		// which reads every column, reads days, not the whole history.
		q.add(`
					UNION ALL
					SELECT h1, h2, `+names+`, argMax(`+tuple+`, (bar_start, version)) AS b
					FROM bars WHERE `+where+` AND bar_start >= (SELECT min(m) FROM (SELECT max(bar_start) AS m
						FROM bars WHERE `+where+` GROUP BY provider, sku, region, zone, pricing))
					GROUP BY cityHash64(provider, sku, region, zone, pricing) AS h1,
						sipHash64(provider, sku, region, zone, pricing) AS h2`, append(args, args...)...)
	} else {
		q.add(`
					UNION ALL
					SELECT h1, h2, any(cp) AS bp, any(ck) AS bk, any(cr) AS br, any(cz) AS bz, any(cpr) AS bpr,
						argMax(cb, cb.1) AS b
					FROM (SELECT h1, h2, any(provider) AS cp, any(sku) AS ck, any(region) AS cr, any(zone) AS cz,
							any(pricing) AS cpr, argMax(`+tuple+`, version) AS cb
						FROM bars WHERE `+where+`
						GROUP BY cityHash64(provider, sku, region, zone, pricing) AS h1,
							sipHash64(provider, sku, region, zone, pricing) AS h2, bar_start
						HAVING cb.4 = ?)
					GROUP BY h1, h2`, append(args, f.Tier)...)
	}
	q.add(`)
				GROUP BY h1, h2
				HAVING length(bs) > 0)
			GROUP BY p)
		ARRAY JOIN ks AS k, rs AS r, zs AS z, prs AS pr, seens AS seen, startss AS starts, closess AS closes,
			gpuss AS gpus, tierss AS tiers)
	ARRAY JOIN ds AS d`)
}

// ServerSpreads computes the daily tier spreads on the server: the day prices
// (dayPrices) grouped by GPU, pricing and day, with each tier's median.
func (s *Store) ServerSpreads(ctx context.Context, f store.Filter) ([]store.SpreadDay, error) {
	if f.Since.IsZero() || f.Until.IsZero() {
		return nil, fmt.Errorf("clickhouse: spreads: a window with both ends")
	}
	q := &query{}
	q.add(`SELECT g, pr, toUInt32(d), length(hs), ` + pct("hs", .5) + `, length(ss), ` + pct("ss", .5) +
		`, length(ms), ` + pct("ms", .5) + `
	FROM (SELECT g, pr, d, arraySort(groupArrayIf(price, t = '` + schemas.TierHyperscaler + `')) AS hs,
			arraySort(groupArrayIf(price, t = '` + schemas.TierSpecialist + `')) AS ss,
			arraySort(groupArrayIf(price, t = '` + schemas.TierMarketplace + `')) AS ms
		FROM (`)
	dayPrices(q, f)
	q.add(`)
		GROUP BY g, pr, d)
	ORDER BY g, pr, d`)
	rows, err := s.conn.Query(ctx, q.b.String(), q.args...)
	if err != nil {
		return nil, s.wrap("spreads", err)
	}
	defer rows.Close()
	var out []store.SpreadDay
	for rows.Next() {
		var (
			d          store.SpreadDay
			day        uint32
			nh, ns, nm uint64
			h, sp, m   float64
		)
		if err := rows.Scan(&d.GPU, &d.Pricing, &day, &nh, &h, &ns, &sp, &nm, &m); err != nil {
			return nil, s.wrap("spreads", err)
		}
		d.Day = time.Unix(int64(day), 0).UTC()
		d.NHyperscaler, d.NSpecialist, d.NMarketplace = int(nh), int(ns), int(nm)
		d.Hyperscaler, d.Specialist, d.Marketplace = opt(h), opt(sp), opt(m)
		SetRatio(&d)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, s.wrap("spreads", err)
	}
	return out, nil
}

// SetRatio sets a spread day's ratio and premium from its tier medians, as
// analytics.Spreads does.
func SetRatio(d *store.SpreadDay) {
	if d.Hyperscaler != nil && d.Specialist != nil && *d.Hyperscaler > 0 && *d.Specialist > 0 {
		r := *d.Hyperscaler / *d.Specialist
		d.Ratio, d.PremiumPct = opt(r), opt((r-1)*100)
	}
}

// opt is analytics.Opt: a pointer to x, nil when x is NaN or infinite.
func opt(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

// ServerHistory computes the negotiation report on the server: the day prices
// (dayPrices) of every pricing kind, grouped by day for all series ("*"), per
// provider and per tier, then per group: the percentiles of the samples, the
// latest prices, the least-squares trend of the daily medians, the reserved
// discount on the last day, each day's median, p10, p90 and minimum, and (for all)
// the cheapest offers on the last day. The overall reserved discount, over the
// providers that publish both prices, is taken here from their last-day prices.
func (s *Store) ServerHistory(ctx context.Context, f store.Filter, gpu, pricing string, cheapest int) (store.History, error) {
	h := store.History{GPU: gpu, Pricing: pricing, From: f.Since, To: f.Until}
	if f.Since.IsZero() || f.Until.IsZero() {
		return h, fmt.Errorf("clickhouse: history: a window with both ends")
	}
	lastDay := f.Until.UTC().Truncate(store.Daily)
	if lastDay.Equal(f.Until.UTC()) {
		lastDay = lastDay.Add(-store.Daily)
	}
	last := uint32(clampTime(lastDay).Unix())
	limit := uint64(math.MaxUint32)
	if cheapest >= 0 {
		limit = uint64(cheapest)
	}
	field := func(arr string, n int) string { return fmt.Sprintf("arrayMap(x -> x.%d, %s)", n, arr) }
	var fields []string
	for n := 1; n <= 10; n++ {
		if n != 2 {
			fields = append(fields, field("top", n))
		}
	}
	for n := 1; n <= 6; n++ {
		fields = append(fields, field("dl", n))
	}
	fields = append(fields, field("odp", 1), field("odp", 2), field("resp", 1), field("resp", 2))
	q := &query{}
	q.add(`SELECT kind, name, nser, samples, `+pct("vs", .10)+`, `+pct("vs", .25)+`, `+pct("vs", .5)+`, `+pct("vs", .75)+`, `+
		pct("vs", .90)+`, if(samples = 0, nan, vs[1]), if(length(latest) = 0, nan, latest[1]), `+pct("latest", .5)+`,
		if(length(xs) < 2 OR sxx = 0, nan, sxy / sxx), my, `+pct("od", .5)+`, `+pct("res", .5)+`,
		`+strings.Join(fields, ", ")+`
	FROM (SELECT kind, name, nser, samples, vs, latest, xs, ys, mx, my, od, res, top, dl, odp, resp,
			arraySum(arrayMap((x, y, a, b) -> (x - a) * (y - b), xs, ys, arrayResize([mx], length(xs), mx),
				arrayResize([my], length(xs), my))) AS sxy,
			arraySum(arrayMap((x, a) -> (x - a) * (x - a), xs, arrayResize([mx], length(xs), mx))) AS sxx
		FROM (SELECT kind, name, length(groupUniqArrayArray(ser)) AS nser, arraySort(groupArrayArray(vals)) AS vs,
				length(vs) AS samples, anyIf(vals, d = ?) AS latest,
				arraySort(x -> x.1, groupArrayIf((d, length(vals), med, p10, p90, vals[1]), length(vals) > 0)) AS dl,
				arrayMap(x -> toFloat64(x.1) / 86400, dl) AS xs, arrayMap(x -> x.3, dl) AS ys,
				arraySum(xs) / length(xs) AS mx, arraySum(ys) / length(ys) AS my,
				arraySort(groupArrayArray(ods)) AS od, arraySort(groupArrayArray(ress)) AS res,
				groupArrayArray(odps) AS odp, groupArrayArray(resps) AS resp,
				arraySlice(arraySort(groupArrayArray(offers)), 1, ?) AS top
			FROM (SELECT gk.1 AS kind, gk.2 AS name, d, arraySort(groupArrayIf(price, pr = ?)) AS vals,
					`+pct("vals", .5)+` AS med, `+pct("vals", .1)+` AS p10, `+pct("vals", .9)+` AS p90,
					groupUniqArrayIf(concat(p, '|', k, '|', r, '|', z, '|', pr), pr = ?) AS ser,
					groupArrayIf(price, pr = '`+schemas.OnDemand+`' AND d = ?) AS ods,
					groupArrayIf(price, pr = '`+schemas.Reserved1Y+`' AND d = ?) AS ress,
					groupArrayIf((p, price), pr = '`+schemas.OnDemand+`' AND d = ? AND kind = 'all') AS odps,
					groupArrayIf((p, price), pr = '`+schemas.Reserved1Y+`' AND d = ? AND kind = 'all') AS resps,
					groupArrayIf((price, concat(p, k, r, z), p, k, r, z, pr, t, bst, seen), pr = ? AND d = ? AND kind = 'all') AS offers
				FROM (`, last, limit, pricing, pricing, last, last, last, last, pricing, last)
	dayPrices(q, f)
	q.add(`)
				ARRAY JOIN [('all', '*'), ('provider', p), ('tier', t)] AS gk
				GROUP BY kind, name, d)
			GROUP BY kind, name))
	WHERE kind = 'all' OR samples > 0
	ORDER BY kind = 'all' DESC, kind = 'provider' DESC, name`)
	rows, err := s.conn.Query(ctx, q.b.String(), q.args...)
	if err != nil {
		return h, s.wrap("history", err)
	}
	defer rows.Close()
	h.Overall = store.HistoryStats{Provider: "*"}
	for rows.Next() {
		var (
			kind                         string
			st                           store.HistoryStats
			nser, samples                uint64
			p10, p25, p50, p75, p90, min float64
			latest, latestMed, slope, my float64
			odMed, resMed                float64
			prices                       []float64
			ps, ks, rs, zs, prs, ts      []string
			starts, seens                []uint32
			days                         []uint32
			ns                           []uint64
			meds, p10s, p90s, mins       []float64
			odP, resP                    []string
			odV, resV                    []float64
		)
		if err := rows.Scan(&kind, &st.Provider, &nser, &samples, &p10, &p25, &p50, &p75, &p90, &min, &latest, &latestMed,
			&slope, &my, &odMed, &resMed, &prices, &ps, &ks, &rs, &zs, &prs, &ts, &starts, &seens,
			&days, &ns, &meds, &p10s, &p90s, &mins, &odP, &odV, &resP, &resV); err != nil {
			return h, s.wrap("history", err)
		}
		for i := range days {
			h.Daily = append(h.Daily, store.HistoryDay{Day: time.Unix(int64(days[i]), 0).UTC(), Group: kind, Name: st.Provider,
				Series: int(ns[i]), Median: meds[i], P10: p10s[i], P90: p90s[i], Min: mins[i]})
		}
		if kind == "tier" {
			continue
		}
		st.Series, st.Samples = int(nser), int(samples)
		st.P10, st.P25, st.P50, st.P75, st.P90 = opt(p10), opt(p25), opt(p50), opt(p75), opt(p90)
		st.Min, st.Latest, st.LatestMedian = opt(min), opt(latest), opt(latestMed)
		st.TrendPer30d = opt(slope * 30)
		st.TrendPctPer30d = opt(slope * 30 / my * 100)
		if kind == "all" {
			odMed, resMed = bothMedians(odP, odV, resP, resV)
		}
		if odMed > 0 && resMed > 0 {
			st.ReservedDiscountPct = opt((1 - resMed/odMed) * 100)
		}
		if kind == "provider" {
			h.Providers = append(h.Providers, st)
			continue
		}
		h.Overall = st
		for i := range prices {
			h.Cheapest = append(h.Cheapest, store.Offer{Provider: ps[i], SKU: ks[i], Region: rs[i], Zone: zs[i],
				Pricing: prs[i], Tier: ts[i], Price: prices[i], Since: time.Unix(int64(starts[i]), 0).UTC(),
				LastSeen: unixOrZero(int64(seens[i]))})
		}
	}
	if err := rows.Err(); err != nil {
		return h, s.wrap("history", err)
	}
	return h, nil
}

// bothMedians returns the medians of the on-demand and the reserved prices of the
// providers that have both (analytics.HistoryOf's overall discount), NaN for none.
func bothMedians(odP []string, odV []float64, resP []string, resV []float64) (float64, float64) {
	has := func(ps []string) map[string]bool {
		m := map[string]bool{}
		for _, p := range ps {
			m[p] = true
		}
		return m
	}
	hasOD, hasRes := has(odP), has(resP)
	var od, res []float64
	for i, p := range odP {
		if hasRes[p] {
			od = append(od, odV[i])
		}
	}
	for i, p := range resP {
		if hasOD[p] {
			res = append(res, resV[i])
		}
	}
	return median(od), median(res)
}

// median is analytics.Median (type 7 at 0.5), NaN for no values.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	sort.Float64s(xs)
	h := float64(len(xs)-1) * .5
	l := int(math.Floor(h))
	if l >= len(xs)-1 {
		return xs[len(xs)-1]
	}
	return xs[l] + (h-float64(l))*(xs[l+1]-xs[l])
}
