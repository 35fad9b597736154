package schemas

import (
	"fmt"
	"strings"
)

// Dashboard views (ClickHouse). The tables keep every write of an identity until
// merges, which are eventual, remove the older ones: a naive query on observations
// or bars counts a row collected twice twice. These views apply the stores' rule —
// group by the identity and take argMax(column, version), the last write — so a
// dashboard (Grafana) or an analyst can query them without knowing it. They are
// plain views (no materialised view: one fed on insert would count a re-collected
// row twice), written for ClickHouse 18.16 and 24.x alike: no window functions,
// arrays and aggregates only. docs/views.md describes every column.
//
// The statements are built here, once, from the names of the tables they read, so
// that the single-node migrations and a cluster migration (views ON CLUSTER over
// Distributed tables) share them. Migration 6 created every view; a change to a
// view is a new migration that drops and recreates it (LatestViewMigration, whose
// file is generated), so that after all migrations each view is its current
// ViewStatements definition (a test checks it).

// View names.
const (
	ViewObservations = "v_observations"
	ViewLatest       = "v_latest"
	ViewBars         = "v_bars"
	ViewDayPrices    = "v_day_prices"
	ViewSpreads      = "v_spreads"
	ViewIndex        = "v_index"
	ViewRuns         = "v_runs"
	ViewQuarantine   = "v_quarantine"
)

// ViewOptions are the names the view statements use. Empty fields take the
// single-node defaults: the tables observations, bars, runs and quarantine, no
// ON CLUSTER clause.
type ViewOptions struct {
	Observations string // table of observations (e.g. a Distributed table)
	Bars         string
	Runs         string
	Quarantine   string
	// Cluster, when set, adds ON CLUSTER `name` to every CREATE VIEW.
	Cluster string
}

func (o ViewOptions) withDefaults() ViewOptions {
	def := func(s *string, v string) {
		if *s == "" {
			*s = v
		}
	}
	def(&o.Observations, "observations")
	def(&o.Bars, "bars")
	def(&o.Runs, "runs")
	def(&o.Quarantine, "quarantine")
	return o
}

// ViewColumn is one column of a view, as docs/views.md lists it.
type ViewColumn struct {
	Name string
	Type string // the ClickHouse type the view returns
}

// View is one dashboard view: its name, its columns in order, and its SELECT.
type View struct {
	Name    string
	Key     []string // the columns that identify a row: each key appears once
	Columns []ViewColumn
	sel     func(o ViewOptions) string
}

// Select returns the view's SELECT statement over the tables of o.
func (v View) Select(o ViewOptions) string { return v.sel(o.withDefaults()) }

// Views returns the dashboard views in creation order (a view follows those it reads).
func Views() []View { return views }

// ViewStatements returns the CREATE VIEW IF NOT EXISTS statement of every view, in
// creation order, over the tables of o.
func ViewStatements(o ViewOptions) []string {
	o = o.withDefaults()
	on := ""
	if o.Cluster != "" {
		on = " ON CLUSTER `" + o.Cluster + "`"
	}
	out := make([]string, 0, len(views))
	for _, v := range views {
		out = append(out, "CREATE VIEW IF NOT EXISTS "+v.Name+on+" AS\n"+v.sel(o))
	}
	return out
}

// LatestViewMigration is the newest migration that (re)creates views. Version 7
// replaced v_day_prices, whose first form carried each series' whole array of bars
// along every day it expanded (series × bars² memory: 10 GB for 1000 series of a
// year of daily bars). Version 18 recreates the two views that join subqueries, now
// aliased: every ClickHouse since 20.x refuses a joined subquery without an alias
// (joined_subquery_requires_alias), so a database whose views 18.16 made fails
// there until they are made again. Migrations 6 and 7 were edited the same way (a
// current server stopped at migration 6 before), so a new database passes them.
var LatestViewMigration = struct {
	Version int
	Name    string
	Views   []string
}{18, "views_aliased_joins", []string{ViewLatest, ViewDayPrices}}

// ViewMigrationSQL is the text of LatestViewMigration's ClickHouse file: for each of
// its views, DROP TABLE IF EXISTS (18.16 has no DROP VIEW; it drops a view in every
// version) then the current CREATE VIEW.
func ViewMigrationSQL() string {
	var b strings.Builder
	fmt.Fprintf(&b, `-- gpuprice ClickHouse schema, version %d: %s recreated (schemas/views.go says why).
-- GENERATED from schemas/views.go (go test ./schemas -run TestViewMigration -update):
-- do not edit. docs/views.md describes the views' columns.
`, LatestViewMigration.Version, strings.Join(LatestViewMigration.Views, ", "))
	stmts := ViewStatements(ViewOptions{})
	for _, name := range LatestViewMigration.Views {
		for i, v := range views {
			if v.Name == name {
				fmt.Fprintf(&b, "\nDROP TABLE IF EXISTS %s;\n\n%s;\n", name, stmts[i])
			}
		}
	}
	return b.String()
}

// dailyBars is the last write of every daily bar, with the columns day prices need
// (d_<column>), read from the bars table itself: v_bars would deduplicate the hourly
// bars too before a width filter could apply (18.16 pushes no predicate into a view).
//
// Only comparable bars take part (analytics.Comparable): a listed price of a whole
// instance, never a derived price, a "from" floor or a GPU priced apart from its VM
// ("" reads as listed / instance: bars rolled up before schema version 5).
func dailyBars(o ViewOptions, cs ...string) string {
	cs = append(cs, "price_scope", "price_basis")
	return `
                        SELECT provider, sku, region, zone, pricing, bar_start,
                            ` + strings.ReplaceAll(lastWrite("version", cs...), "\n        ",
		"\n                            ") + `
                        FROM ` + o.Bars + `
                        WHERE width = 86400
                        GROUP BY provider, sku, region, zone, pricing, bar_start
                        HAVING d_price_basis IN ('', '` + BasisListed + `') AND d_price_scope IN ('', '` +
		ScopeInstance + `')
                    `
}

// cols builds a column list from "name Type" pairs.
func cols(pairs ...string) []ViewColumn {
	out := make([]ViewColumn, 0, len(pairs))
	for _, p := range pairs {
		n, t, _ := strings.Cut(p, " ")
		out = append(out, ViewColumn{Name: n, Type: t})
	}
	return out
}

// lastWrite returns "argMax(c, version) AS d_c" for each column.
func lastWrite(by string, cs ...string) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = fmt.Sprintf("argMax(%s, %s) AS d_%s", c, by, c)
	}
	return strings.Join(parts, ",\n        ")
}

// rename returns "d_c AS c" for each column.
func rename(cs ...string) string {
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = "d_" + c + " AS " + c
	}
	return strings.Join(parts, ", ")
}

// q7 is the p-quantile of the sorted array expression a by linear interpolation
// between closest ranks (Hyndman–Fan type 7, analytics.Percentile), 0 for an empty
// array. ClickHouse 18.16 has no quantileExactInclusive.
func q7(a string, p string) string {
	h := fmt.Sprintf("((length(%s) - 1) * %s)", a, p)
	lo := fmt.Sprintf("(toUInt64(floor(%s)) + 1)", h)
	return fmt.Sprintf(
		"if(length(%[1]s) = 0, 0, %[1]s[%[2]s] + (%[3]s - floor(%[3]s)) * (%[1]s[least(%[2]s + 1, length(%[1]s))] - "+
			"%[1]s[%[2]s]))",
		a,
		lo,
		h,
	)
}

var obsCols = []string{"observed_at", "tier", "gpu", "gpu_name", "gpu_count", "gpu_memory_gb",
	"price_usd_hour", "price_usd_gpu_hour", "currency", "price_native", "unit", "fx_rate",
	"interconnect", "source_kind", "source_url", "run_id", "attrs", "price_scope", "price_basis"}

var barCols = []string{
	"gpu",
	"tier",
	"interconnect",
	"price_scope",
	"price_basis",
	"open",
	"high",
	"low",
	"close",
	"mean",
	"count",
	"last_observed_at",
}

var views = []View{
	{
		Name: ViewObservations,
		Key:  []string{"provider", "sku", "region", "zone", "pricing", "effective_at"},
		Columns: cols("observed_at DateTime('UTC')", "effective_at DateTime('UTC')", "provider String",
			"tier String", "sku String", "region String", "zone String", "gpu String", "gpu_name String",
			"gpu_count Float64", "gpu_memory_gb Float64", "pricing String", "price_usd_hour Float64",
			"price_usd_gpu_hour Float64", "currency String", "price_native Float64", "unit String",
			"fx_rate Float64", "interconnect String", "source_kind String", "source_url String",
			"run_id String", "attrs String", "price_scope String", "price_basis String"),
		sel: func(o ViewOptions) string {
			return `SELECT d_observed_at AS observed_at, effective_at, provider, d_tier AS tier, sku, region, zone,
    ` + rename("gpu", "gpu_name", "gpu_count", "gpu_memory_gb") + `, pricing,
    ` + rename("price_usd_hour", "price_usd_gpu_hour", "currency", "price_native", "unit", "fx_rate",
				"interconnect", "source_kind", "source_url", "run_id", "attrs", "price_scope", "price_basis") + `
FROM (
    SELECT provider, sku, region, zone, pricing, effective_at,
        ` + lastWrite("version", obsCols...) + `
    FROM ` + o.Observations + `
    GROUP BY provider, sku, region, zone, pricing, effective_at
)`
		},
	},
	{
		Name: ViewLatest,
		Key:  []string{"provider", "sku", "region", "zone", "pricing"},
		Columns: cols("observed_at DateTime('UTC')", "effective_at DateTime('UTC')", "provider String",
			"tier String", "sku String", "region String", "zone String", "gpu String", "gpu_name String",
			"gpu_count Float64", "gpu_memory_gb Float64", "pricing String", "price_usd_hour Float64",
			"price_usd_gpu_hour Float64", "currency String", "price_native Float64", "unit String",
			"fx_rate Float64", "interconnect String", "source_kind String", "source_url String",
			"run_id String", "price_scope String", "price_basis String", "provider_last_seen DateTime('UTC')",
			"on_offer UInt8"),
		sel: func(o ViewOptions) string {
			latest := []string{"observed_at", "tier", "gpu", "gpu_name", "gpu_count", "gpu_memory_gb",
				"price_usd_hour", "price_usd_gpu_hour", "currency", "price_native", "unit", "fx_rate",
				"interconnect", "source_kind", "source_url", "run_id", "price_scope", "price_basis"}
			return `SELECT d_observed_at AS observed_at, d_effective_at AS effective_at, provider, d_tier AS tier,
    sku, region, zone, ` + rename("gpu", "gpu_name", "gpu_count", "gpu_memory_gb") + `, pricing,
    ` + rename("price_usd_hour", "price_usd_gpu_hour", "currency", "price_native", "unit", "fx_rate",
				"interconnect", "source_kind", "source_url", "run_id", "price_scope", "price_basis") + `,
    p_last_seen AS provider_last_seen,
    toUInt8(d_observed_at >= p_last_seen - 86400) AS on_offer
FROM (
    SELECT provider, sku, region, zone, pricing, max(effective_at) AS d_effective_at,
        ` + lastWrite("effective_at", latest...) + `
    FROM ` + ViewObservations + `
    GROUP BY provider, sku, region, zone, pricing
) AS l ANY LEFT JOIN (
    SELECT provider, max(d_observed_at) AS p_last_seen
    FROM (
        SELECT provider, argMax(observed_at, effective_at) AS d_observed_at
        FROM ` + ViewObservations + `
        GROUP BY provider, sku, region, zone, pricing
    )
    GROUP BY provider
) AS r USING provider`
		},
	},
	{
		Name: ViewBars,
		Key:  []string{"width", "provider", "sku", "region", "zone", "pricing", "bar_start"},
		Columns: cols(
			"width UInt32",
			"bar_start DateTime('UTC')",
			"provider String",
			"sku String",
			"region String",
			"zone String",
			"pricing String",
			"gpu String",
			"tier String",
			"interconnect String",
			"price_scope String",
			"price_basis String",
			"open Float64",
			"high Float64",
			"low Float64",
			"close Float64",
			"mean Float64",
			"count UInt64",
			"last_observed_at DateTime('UTC')",
		),
		sel: func(o ViewOptions) string {
			return `SELECT width, bar_start, provider, sku, region, zone, pricing,
    ` + rename(barCols...) + `
FROM (
    SELECT width, bar_start, provider, sku, region, zone, pricing,
        ` + lastWrite("version", barCols...) + `
    FROM ` + o.Bars + `
    GROUP BY width, bar_start, provider, sku, region, zone, pricing
)`
		},
	},
	{
		// docs/analytics.md, "Day price": over comparable bars only (listed instance
		// prices), the close of the series' last daily bar
		// on or before the day, carried forward through today (UTC), except that a
		// withdrawn series (last seen more than 24 h before its provider's newest
		// sighting) ends the day after the day it was last seen (and not before the
		// day after its last bar).
		Name: ViewDayPrices,
		Key:  []string{"provider", "sku", "region", "zone", "pricing", "day"},
		Columns: cols("day DateTime('UTC')", "provider String", "sku String", "region String", "zone String",
			"pricing String", "gpu String", "tier String", "interconnect String", "price_scope String",
			"price_basis String", "price Float64",
			"bar_start DateTime('UTC')", "last_seen DateTime('UTC')", "withdrawn UInt8"),
		sel: func(o ViewOptions) string {
			// Each series' bars are gathered into one array, then laid out again with
			// ARRAY JOIN (one row per bar, with the start of the next) and arrayJoin
			// over the days until then: an array carried along each expanded row would
			// cost series × bars² memory.
			return `SELECT toDateTime(toUInt32(b_start) + k * 86400, 'UTC') AS day, provider, sku, region, zone, pricing,
    b_gpu AS gpu, b_tier AS tier, b_interconnect AS interconnect, b_scope AS price_scope,
    b_basis AS price_basis, b_close AS price,
    b_start AS bar_start, s_last_seen AS last_seen, s_withdrawn AS withdrawn
FROM (
    SELECT provider, sku, region, zone, pricing, s_last_seen, s_withdrawn,
        b_start, b_close, b_gpu, b_tier, b_interconnect, b_scope, b_basis,
        arrayJoin(range(toUInt64(intDiv(b_next - toUInt32(b_start), 86400)))) AS k
    FROM (
        SELECT provider, sku, region, zone, pricing, s_last_seen, s_withdrawn,
            b_start, b_close, b_gpu, b_tier, b_interconnect, b_scope, b_basis, b_next
        FROM (
            SELECT provider, sku, region, zone, pricing, s_last_seen, s_withdrawn,
                arrayMap(x -> x.1, bs) AS starts, arrayMap(x -> x.2, bs) AS closes,
                arrayMap(x -> x.3, bs) AS gpus, arrayMap(x -> x.4, bs) AS tiers,
                arrayMap(x -> x.5, bs) AS ics, arrayMap(x -> x.6, bs) AS scopes,
                arrayMap(x -> x.7, bs) AS bases,
                arrayPushBack(arrayMap(x -> toUInt32(x.1), arrayPopFront(bs)), toUInt32(s_end)) AS nexts
            FROM (
                SELECT provider, sku, region, zone, pricing, bs, s_last_seen,
                    toUInt8(toUInt32(s_last_seen) > 0 AND toUInt32(s_last_seen) < toUInt32(p_last_seen) - 86400) AS ` +
				`s_withdrawn,
                    if(s_withdrawn,
                        greatest(intDiv(toUInt32(s_last_seen), 86400) * 86400 + 2 * 86400,
                            toUInt32(bs[length(bs)].1) + 86400),
                        greatest(intDiv(toUInt32(now()), 86400) * 86400 + 86400,
                            toUInt32(bs[length(bs)].1) + 86400)) AS s_end
                FROM (
                    SELECT provider, sku, region, zone, pricing,
                        arraySort(groupArray((bar_start, d_close, d_gpu, d_tier, d_interconnect, d_price_scope, ` +
				`d_price_basis))) AS bs,
                        max(d_last_observed_at) AS s_last_seen
                    FROM (` + dailyBars(
				o,
				"close",
				"gpu",
				"tier",
				"interconnect",
				"last_observed_at",
			) + `)
                    GROUP BY provider, sku, region, zone, pricing
                ) AS l ANY LEFT JOIN (
                    SELECT provider, max(d_last_observed_at) AS p_last_seen
                    FROM (` + dailyBars(
				o,
				"last_observed_at",
			) + `)
                    GROUP BY provider
                ) AS r USING provider
            )
        )
        ARRAY JOIN starts AS b_start, closes AS b_close, gpus AS b_gpu, tiers AS b_tier, ics AS b_interconnect,
            scopes AS b_scope, bases AS b_basis, nexts AS b_next
    )
)`
		},
	},
	{
		// docs/analytics.md, "Tier spreads": medians (type 7) of each tier's day
		// prices per GPU, pricing kind and day; ratio hyperscaler ÷ specialist.
		Name: ViewSpreads,
		Key:  []string{"gpu", "pricing", "day"},
		Columns: cols("gpu String", "pricing String", "day DateTime('UTC')", "hyperscaler Float64",
			"specialist Float64", "marketplace Float64", "n_hyperscaler UInt64", "n_specialist UInt64",
			"n_marketplace UInt64", "ratio Float64", "premium_pct Float64"),
		sel: func(o ViewOptions) string {
			return `SELECT gpu, pricing, day,
    ` + q7("h", "0.5") + ` AS hyperscaler,
    ` + q7("s", "0.5") + ` AS specialist,
    ` + q7("m", "0.5") + ` AS marketplace,
    toUInt64(length(h)) AS n_hyperscaler, toUInt64(length(s)) AS n_specialist, toUInt64(length(m)) AS n_marketplace,
    if(hyperscaler > 0 AND specialist > 0, hyperscaler / specialist, 0) AS ratio,
    if(ratio > 0, (ratio - 1) * 100, 0) AS premium_pct
FROM (
    SELECT gpu, pricing, day,
        arraySort(groupArrayIf(price, tier = 'hyperscaler')) AS h,
        arraySort(groupArrayIf(price, tier = 'specialist')) AS s,
        arraySort(groupArrayIf(price, tier = 'marketplace')) AS m
    FROM ` + ViewDayPrices + `
    GROUP BY gpu, pricing, day
)`
		},
	},
	{
		// docs/analytics.md, "Reference index" (gpuprice-index/2): per GPU, pricing,
		// day and group, the median of the day prices within 2.5 sample standard
		// deviations of their mean (with three or more), and how many were dropped.
		// 18.16's lambdas cannot read a column of the row: mu and sd go in as arrays.
		Name: ViewIndex,
		Key:  []string{"gpu", "pricing", "group_name", "day"},
		Columns: cols("gpu String", "pricing String", "group_name String", "day DateTime('UTC')",
			"price Float64", "offers UInt64", "dropped UInt64", "method String"),
		sel: func(o ViewOptions) string {
			return `SELECT gpu, pricing, g AS group_name, day, ` + q7("kept", "0.5") + ` AS price,
    toUInt64(length(xs)) AS offers, toUInt64(length(xs) - length(kept)) AS dropped,
    'gpuprice-index/2' AS method
FROM (
    SELECT gpu, pricing, g, day, xs,
        if(length(xs) >= 3 AND sd > 0, arrayFilter((x, m, d) -> abs(x - m) <= 2.5 * d, xs, replicate(mu, xs), ` +
				`replicate(sd, xs)), xs) AS kept
    FROM (
        SELECT gpu, pricing, if(tier = 'hyperscaler', 'hyperscaler', 'others') AS g, day,
            arraySort(groupArray(price)) AS xs, avg(price) AS mu,
            if(count() >= 2, stddevSamp(price), 0) AS sd
        FROM ` + ViewDayPrices + `
        GROUP BY gpu, pricing, g, day
    )
)`
		},
	},
	{
		Name: ViewRuns,
		Key:  []string{"run_id", "source"},
		Columns: cols("run_id String", "source String", "started_at DateTime('UTC')",
			"finished_at DateTime('UTC')", "status String", "rows_accepted Int64",
			"rows_quarantined Int64", "unknown_gpus Int64", "error String", "duration_seconds Int64"),
		sel: func(o ViewOptions) string {
			rc := []string{"started_at", "finished_at", "status", "rows_accepted", "rows_quarantined",
				"unknown_gpus", "error"}
			return `SELECT run_id, source, ` + rename(rc...) + `,
    toInt64(toUInt32(d_finished_at)) - toInt64(toUInt32(d_started_at)) AS duration_seconds
FROM (
    SELECT run_id, source,
        ` + lastWrite("version", rc...) + `
    FROM ` + o.Runs + `
    GROUP BY run_id, source
)`
		},
	},
	{
		// A quarantined row written twice (a replayed spool, a reparsed archive) is
		// listed once, at the time it was first quarantined, as Store.Quarantine does.
		Name: ViewQuarantine,
		Key:  []string{"run_id", "source", "reason", "raw"},
		Columns: cols("quarantined_at DateTime('UTC')", "run_id String", "source String", "reason String",
			"raw String"),
		sel: func(o ViewOptions) string {
			return `SELECT q_at AS quarantined_at, run_id, source, reason, raw
FROM (
    SELECT min(quarantined_at) AS q_at, run_id, source, reason, raw
    FROM ` + o.Quarantine + `
    GROUP BY run_id, source, reason, raw
)`
		},
	},
}
