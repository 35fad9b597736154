package main

import (
	"fmt"
	"strings"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
)

// Datasources the dashboards use; deploy/grafana/provisioning/datasources provisions
// them under these uids.
const (
	clickhouseType = "grafana-clickhouse-datasource"
	clickhouseUID  = "gpuprice-clickhouse"
	prometheusType = "prometheus"
	prometheusUID  = "gpuprice-prometheus"
)

// SpreadShiftThresholdPct and SpreadShiftWindowDays are drawn on the spreads
// dashboard: the spread_shift rule of the compose stack's config
// (deploy/compose/gpuprice.yaml), which a test keeps in step.
const (
	SpreadShiftThresholdPct = 10.0
	SpreadShiftWindowDays   = 7
	// SpotMoveThresholdPct is the compose config's spot_move threshold.
	SpotMoveThresholdPct = 15.0
)

// Kinds of panel.
const (
	kindTable      = "table"
	kindTimeSeries = "timeseries"
	kindBarChart   = "barchart"
)

// Panel is one panel of a dashboard: its SQL (or PromQL) and the columns the
// visualisation needs, in order.
type Panel struct {
	Title       string
	Description string
	Kind        string
	SQL         string   // ClickHouse (grafana-clickhouse-datasource), with Grafana variables and macros
	PromQL      string   // Prometheus, when SQL is empty
	Columns     []string // the columns SQL must return, in order
	Unit        string
	Thresholds  []float64 // drawn as lines on a time series
	Width       uint32
	Height      uint32
}

// Variable is a template variable: a ClickHouse query (Query) or fixed values.
type Variable struct {
	Name, Label string
	Query       string   // SQL returning one column; empty for a custom variable
	Values      []string // custom variable values, the first is the default
	Multi       bool     // multi-select with "All"
}

// Dashboard is one generated dashboard.
type Dashboard struct {
	UID, Title, Description string
	Tags                    []string
	From                    string // default time range: now-<From> … now
	Variables               []Variable
	Panels                  []Panel
}

// in is the filter of a column by a multi-value variable, dropped when "All" is
// selected: the plugin's $__conditionalAll. The values come ${v:percentencode}
// ("{a,b}" percent-encoded: only letters, digits, - _ . ~ and %), which no value can
// break out of, unlike ${v:singlequote} (which leaves a backslash: issue 29), and
// are decoded, unbraced (a value holds no brace: ingest made it boring) and split in
// ClickHouse.
func in(col, v string) string {
	return fmt.Sprintf("$__conditionalAll(has(splitByChar(',', replaceAll(replaceAll(decodeURLComponent("+
		"'${%s:percentencode}'), '{', ''), '}', '')), %s), $%s)", v, col, v)
}

// q7 is the p-quantile of the sorted array a (Hyndman–Fan type 7, as the analytics
// package and the views compute it; ClickHouse 18.16 has no quantileExactInclusive).
func q7(a, p string) string {
	h := fmt.Sprintf("((length(%s) - 1) * %s)", a, p)
	lo := fmt.Sprintf("(toUInt64(floor(%s)) + 1)", h)
	return fmt.Sprintf(
		"if(length(%[1]s) = 0, nan, %[1]s[%[2]s] + (%[3]s - floor(%[3]s)) * (%[1]s[least(%[2]s + 1, length(%[1]s))] - "+
			"%[1]s[%[2]s]))",
		a,
		lo,
		h,
	)
}

var gpuVar = Variable{Name: "gpu", Label: "GPU", Multi: true,
	Query: "SELECT DISTINCT gpu FROM v_latest WHERE gpu != 'unknown' ORDER BY gpu"}
var providerVar = Variable{Name: "provider", Label: "Provider", Multi: true,
	Query: "SELECT DISTINCT provider FROM v_latest ORDER BY provider"}
var pricingVar = Variable{Name: "pricing", Label: "Pricing", Multi: true,
	Query: "SELECT DISTINCT pricing FROM v_latest ORDER BY pricing"}
var regionVar = Variable{Name: "region", Label: "Region", Multi: true,
	Query: "SELECT DISTINCT region FROM v_latest ORDER BY region"}

// onePricing is a single-valued pricing kind, on-demand by default.
var onePricing = Variable{
	Name:   "kind",
	Label:  "Pricing",
	Values: []string{"on_demand", "spot", "reserved_1y", "reserved_3y"},
}

func dashboards() []Dashboard {
	return []Dashboard{
		priceBoard(), seriesExplorer(), spotVolatility(), spreads(), tokens(), negotiation(), index(), sourceHealth(),
		risk(),
	}
}

// signalBands are the interruption signals as stored (one row per series and
// effective time, the newest version: what store.Signals reads), for the risk
// dashboard.
const signalBands = `SELECT provider, sku, region, zone, effective_at, argMax(gpu, version) AS s_gpu,
        argMax(value, version) AS s_band, argMax(label, version) AS s_label
    FROM signals
    WHERE kind = 'interruption'
    GROUP BY provider, sku, region, zone, effective_at`

// signalStock are the stock signals as stored (the newest version of each series
// and effective time), with the unit their value counts (docs/risk.md), for the
// risk dashboard's stock panels.
const signalStock = `SELECT provider, sku, region, zone, effective_at, argMax(gpu, version) AS s_gpu,
        argMax(value, version) AS s_stock, argMax(label, version) AS s_label,
        argMax(visitParamExtractString(attrs, 'unit'), version) AS s_unit
    FROM signals
    WHERE kind = 'stock'
    GROUP BY provider, sku, region, zone, effective_at`

func risk() Dashboard {
	riskGPU := Variable{Name: "gpu", Label: "GPU", Multi: true,
		Query: "SELECT DISTINCT gpu FROM signals WHERE kind IN ('interruption', 'stock') AND gpu != '' ORDER BY gpu"}
	return Dashboard{
		UID: "gpuprice-risk", Title: "gpuprice · Interruption risk and stock", From: "90d",
		Description: "The interruption bands of spot offers (AWS Spot Advisor, gpuprice risk): the band in force of each " +
			"offer and how many offers were in each band per day; and the stock offers state (gpuprice availability): " +
			"the stock in force per offer and the GPUs in stock per provider over time (docs/risk.md).",
		Variables: []Variable{riskGPU},
		Panels: []Panel{
			{
				Title: "Interruption band in force by spot offer", Kind: kindTable, Width: 24, Height: 14,
				Description: "Per provider, SKU and region, the band of the newest copy stored (band 0 <5% … 4 >20%) " +
					"and the copy's date; highest band first.",
				Columns: []string{"provider", "sku", "region", "gpu", "band", "label", "as_of"},
				SQL: `SELECT provider, sku, region, argMax(s_gpu, effective_at) AS gpu, argMax(s_band, effective_at) AS band,
    argMax(s_label, effective_at) AS label, max(effective_at) AS as_of
FROM (
    ` + signalBands + `
)
WHERE ` + in("s_gpu", "gpu") + `
GROUP BY provider, sku, region, zone
ORDER BY band DESC, provider, sku, region
LIMIT 1000`,
			},
			{
				Title: "Spot offers per interruption band, per day", Kind: kindTimeSeries, Width: 24, Height: 10,
				Description: "Offers whose band a copy stated that day, by band label.",
				Columns:     []string{"time", "label", "offers"},
				SQL: `SELECT toDateTime(intDiv(toUInt32(effective_at), 86400) * 86400, 'UTC') AS time, s_label AS label,
    count() AS offers
FROM (
    ` + signalBands + `
)
WHERE $__timeFilter(effective_at) AND ` + in("s_gpu", "gpu") + `
GROUP BY time, label
ORDER BY time, label`,
			},
			{
				Title: "Stock in force by offer", Kind: kindTable, Width: 24, Height: 14,
				Description: "Per provider, SKU and region, the newest stock signal: what can be rented now, in its " +
					"unit (gpus; instances; regions with capacity), the provider's status word and when; out of stock " +
					"(0) first. A signal older than 3 hours no longer says the stock (gpuprice availability).",
				Columns: []string{"provider", "sku", "region", "gpu", "stock", "unit", "label", "as_of"},
				SQL: `SELECT provider, sku, region, argMax(s_gpu, effective_at) AS gpu, argMax(s_stock, effective_at) AS stock,
    if(argMax(s_unit, effective_at) = '', 'gpus', argMax(s_unit, effective_at)) AS unit,
    argMax(s_label, effective_at) AS label, max(effective_at) AS as_of
FROM (
    ` + signalStock + `
)
WHERE ` + in("s_gpu", "gpu") + `
GROUP BY provider, sku, region, zone
ORDER BY stock, provider, sku, region
LIMIT 1000`,
			},
			{
				Title: "GPUs in stock per provider, per hour", Kind: kindTimeSeries, Width: 24, Height: 10,
				Description: "Per provider, the sum over its offers of the GPUs the last stock signal of each hour states " +
					"(offers whose stock counts GPUs; instances and regions are left out).",
				Columns: []string{"time", "provider", "gpus"},
				SQL: `SELECT time, provider, sum(stock) AS gpus
FROM (
    SELECT toStartOfHour(effective_at) AS time, provider, sku, region, zone, argMax(s_stock, effective_at) AS stock
    FROM (
        ` + signalStock + `
    )
    WHERE $__timeFilter(effective_at) AND s_unit IN ('', 'gpus') AND ` + in("s_gpu", "gpu") + `
    GROUP BY time, provider, sku, region, zone
)
GROUP BY time, provider
ORDER BY time, provider`,
			},
			{
				Title:  "Interruption band in force (Prometheus)",
				Kind:   kindTable,
				Width:  24,
				Height: 10,
				PromQL: `max by (provider, sku, region) (gpuprice_interruption_band{gpu=~"${gpu:regex}"})`,
			},
		},
	}
}

func priceBoard() Dashboard {
	return Dashboard{
		UID: "gpuprice-price-board", Title: "gpuprice · Price board", From: "7d",
		Description: "Cheapest current $/GPU-hour per GPU and provider (series still on offer: seen within 24 h of their " +
			"provider's newest observation).",
		Variables: []Variable{gpuVar, pricingVar},
		Panels: []Panel{
			{
				Title: "Cheapest $/GPU-hour by GPU × provider", Kind: kindTable, Width: 24, Height: 14, Unit: "currencyUSD",
				Columns: []string{
					"gpu",
					"provider",
					"pricing",
					"usd_gpu_hour",
					"cheapest_sku",
					"cheapest_region",
					"offers",
					"last_observed_at",
				},
				SQL: `SELECT gpu, provider, pricing, min(price_usd_gpu_hour) AS usd_gpu_hour,
    argMin(sku, price_usd_gpu_hour) AS cheapest_sku, argMin(region, price_usd_gpu_hour) AS cheapest_region,
    count() AS offers, max(observed_at) AS last_observed_at
FROM v_latest
WHERE on_offer = 1 AND gpu != 'unknown' AND ` + in("gpu", "gpu") + ` AND ` + in("pricing", "pricing") + `
GROUP BY gpu, provider, pricing
ORDER BY gpu, pricing, usd_gpu_hour`,
			},
			{
				Title: "Cheapest on-demand $/GPU-hour per GPU", Kind: kindBarChart, Width: 24, Height: 10, Unit: "currencyUSD",
				Columns: []string{"gpu", "usd_gpu_hour"},
				SQL: `SELECT gpu, min(price_usd_gpu_hour) AS usd_gpu_hour
FROM v_latest
WHERE on_offer = 1 AND gpu != 'unknown' AND pricing = 'on_demand' AND ` + in("gpu", "gpu") + `
GROUP BY gpu
ORDER BY usd_gpu_hour`,
			},
		},
	}
}

func seriesExplorer() Dashboard {
	filters := in(
		"gpu",
		"gpu",
	) + ` AND ` + in(
		"provider",
		"provider",
	) + ` AND ` + in(
		"pricing",
		"pricing",
	) + ` AND ` + in(
		"region",
		"region",
	)
	return Dashboard{
		UID: "gpuprice-series", Title: "gpuprice · Series explorer", From: "7d",
		Description: "Every series (provider, sku, region, zone, pricing) matching the filters: hourly closes and its " +
			"observations.",
		Variables: []Variable{gpuVar, providerVar, pricingVar, regionVar},
		Panels: []Panel{
			{
				Title: "Hourly close, $/GPU-hour", Kind: kindTimeSeries, Width: 24, Height: 12, Unit: "currencyUSD",
				Columns: []string{"time", "series", "close"},
				SQL: `SELECT bar_start AS time, concat(provider, ' ', sku, ' ', region, if(zone = '', '', concat('/', zone)), ` +
					`' ', pricing) AS series, close
FROM v_bars
WHERE width = 3600 AND $__timeFilter(bar_start) AND ` + filters + `
ORDER BY time`,
			},
			{
				Title: "Observations", Kind: kindTable, Width: 24, Height: 12, Unit: "currencyUSD",
				Columns: []string{
					"effective_at",
					"observed_at",
					"provider",
					"sku",
					"region",
					"zone",
					"pricing",
					"gpu",
					"gpu_count",
					"price_usd_gpu_hour",
					"price_usd_hour",
					"currency",
					"price_native",
					"source_kind",
					"source_url",
				},
				SQL: `SELECT effective_at, observed_at, provider, sku, region, zone, pricing, gpu, gpu_count,
    price_usd_gpu_hour, price_usd_hour, currency, price_native, source_kind, source_url
FROM v_observations
WHERE $__timeFilter(effective_at) AND ` + filters + `
ORDER BY effective_at DESC
LIMIT 1000`,
			},
		},
	}
}

func spotVolatility() Dashboard {
	// Per series over the time range: the sample standard deviation of the log
	// returns of consecutive non-empty hourly bars, annualised by √8760
	// (docs/analytics.md, "Volatility").
	return Dashboard{
		UID: "gpuprice-spot-volatility", Title: "gpuprice · Spot volatility", From: "7d",
		Description: "Spot series: hourly closes and annualised volatility of hourly log returns over the time range (as " +
			"gpuprice volatility --bar 1h).",
		Variables: []Variable{gpuVar, providerVar, regionVar},
		Panels: []Panel{
			{
				Title: "Annualised volatility by series", Kind: kindTable, Width: 24, Height: 12, Unit: "percentunit",
				Columns: []string{
					"gpu",
					"provider",
					"region",
					"zone",
					"sku",
					"bars",
					"std_log_return",
					"annualised",
					"price_range",
				},
				SQL: `SELECT gpu, provider, region, zone, sku, length(closes) AS bars,
    if(length(rets) >= 2, arrayReduce('stddevSamp', rets), 0) AS std_log_return,
    std_log_return * sqrt(8760) AS annualised,
    arrayReduce('max', closes) / arrayReduce('min', closes) - 1 AS price_range
FROM (
    SELECT gpu, provider, region, zone, sku, closes, arrayPopFront(arrayDifference(arrayMap(x -> log(x), closes))) ` +
					`AS rets
    FROM (
        SELECT gpu, provider, region, zone, sku,
            arrayMap(x -> x.2, arraySort(groupArray((bar_start, close)))) AS closes
        FROM v_bars
        WHERE width = 3600 AND pricing = 'spot' AND close > 0 AND $__timeFilter(bar_start)
            AND ` + in("gpu", "gpu") + ` AND ` + in("provider", "provider") + ` AND ` + in("region", "region") + `
        GROUP BY gpu, provider, sku, region, zone
    )
)
ORDER BY annualised DESC
LIMIT 200`,
			},
			{
				Title: "Hourly spot close by GPU × provider (median over series)", Kind: kindTimeSeries, Width: 24, Height: 12,
				Unit:    "currencyUSD",
				Columns: []string{"time", "series", "median_close"},
				SQL: `SELECT bar_start AS time, concat(gpu, ' ', provider) AS series, median(close) AS median_close
FROM v_bars
WHERE width = 3600 AND pricing = 'spot' AND $__timeFilter(bar_start)
    AND ` + in("gpu", "gpu") + ` AND ` + in("provider", "provider") + ` AND ` + in("region", "region") + `
GROUP BY time, series
ORDER BY time`,
			},
			{
				Title: fmt.Sprintf(
					"Largest 24 h spot move per GPU × provider, %% (alert spot_move at ±%g %%)",
					SpotMoveThresholdPct,
				),
				Kind: kindTimeSeries, Width: 24, Height: 10, Unit: "percent",
				Thresholds: []float64{-SpotMoveThresholdPct, SpotMoveThresholdPct},
				Columns:    []string{"time", "series", "move_pct"},
				SQL: `SELECT day AS time, concat(gpu, ' ', provider) AS series, (max(close) / min(open) - 1) * 100 AS move_pct
FROM (
    SELECT toDateTime(intDiv(toUInt32(bar_start), 86400) * 86400, 'UTC') AS day, gpu, provider, open, close
    FROM v_bars
    WHERE width = 3600 AND pricing = 'spot' AND open > 0 AND $__timeFilter(bar_start)
        AND ` + in(
					"gpu",
					"gpu",
				) + ` AND ` + in(
					"provider",
					"provider",
				) + ` AND ` + in(
					"region",
					"region",
				) + `
)
GROUP BY time, series
ORDER BY time`,
			},
		},
	}
}

func spreads() Dashboard {
	return Dashboard{
		UID: "gpuprice-spreads", Title: "gpuprice · Tier spreads", From: "90d",
		Description: "Hyperscaler ÷ specialist median day price per GPU (gpuprice spreads), and its move against the ratio " +
			"a window earlier with the spread_shift alert threshold.",
		Variables: []Variable{gpuVar, onePricing},
		Panels: []Panel{
			{
				Title: "Hyperscaler ÷ specialist ratio", Kind: kindTimeSeries, Width: 24, Height: 10, Unit: "none",
				Thresholds: []float64{1},
				Columns:    []string{"time", "gpu", "ratio"},
				SQL: `SELECT day AS time, gpu, ratio
FROM v_spreads
WHERE ratio > 0 AND pricing = '${kind}' AND $__timeFilter(day) AND ` + in("gpu", "gpu") + `
ORDER BY time`,
			},
			{
				Title: fmt.Sprintf(
					"Ratio change against %d days earlier, %% (spread_shift alert at ±%g %%)",
					SpreadShiftWindowDays,
					SpreadShiftThresholdPct,
				),
				Kind: kindTimeSeries, Width: 24, Height: 10, Unit: "percent",
				Thresholds: []float64{-SpreadShiftThresholdPct, SpreadShiftThresholdPct},
				Columns:    []string{"time", "gpu", "change_pct"},
				SQL: fmt.Sprintf(`SELECT day AS time, gpu, (ratio / ratio_before - 1) * 100 AS change_pct
FROM (
    SELECT day, gpu, pricing, ratio FROM v_spreads
    WHERE ratio > 0 AND pricing = '${kind}' AND $__timeFilter(day) AND `+in("gpu", "gpu")+`
) AS now_ratio ANY INNER JOIN (
    SELECT toDateTime(toUInt32(d) + %d, 'UTC') AS day, gpu, pricing, ratio_before
    FROM (SELECT day AS d, gpu, pricing, ratio AS ratio_before FROM v_spreads WHERE ratio > 0 AND pricing = '${kind}')
) AS before_ratio USING (day, gpu, pricing)
ORDER BY time`, SpreadShiftWindowDays*86400),
			},
			{
				Title: "Median day price per tier", Kind: kindTimeSeries, Width: 24, Height: 10, Unit: "currencyUSD",
				Columns: []string{"time", "series", "usd_gpu_hour"},
				SQL: `SELECT day AS time, concat(gpu, ' ', tier) AS series, usd_gpu_hour
FROM (
    SELECT day, gpu, arrayJoin([('hyperscaler', hyperscaler), ('specialist', specialist), ('marketplace', ` +
					`marketplace)]) AS t,
        t.1 AS tier, t.2 AS usd_gpu_hour
    FROM v_spreads
    WHERE pricing = '${kind}' AND $__timeFilter(day) AND ` + in("gpu", "gpu") + `
)
WHERE usd_gpu_hour > 0
ORDER BY time`,
			},
		},
	}
}

func tokens() Dashboard {
	// Per offering (series still on offer): its MFU is the midpoint of its published
	// band (analytics.MFUBands, first match) unless a fixed MFU is chosen; offerings
	// with no band, or whose GPU has no dense figure, are left out, as in
	// `gpuprice tokens`.
	offers := `SELECT gpu, provider, interconnect, price_usd_gpu_hour, ` + denseFlops("gpu") + ` AS flops,
        if('${mfu}' = 'band', ` + mfuBandMid("gpu", "interconnect", "'${job}' = 'multi_node'") +
		`, toFloat64OrZero('${mfu}')) AS mfu,
        price_usd_gpu_hour * 1e9 * 6 * ${params} / (flops * mfu * 3600) AS usd
    FROM v_latest
    WHERE on_offer = 1 AND pricing = '${kind}' AND ` + in("gpu", "gpu")
	return Dashboard{
		UID: "gpuprice-tokens", Title: "gpuprice · $ per 1B training tokens", From: "7d",
		Description: "Effective cost of training at current prices (gpuprice tokens): $/1B tokens = price × 1e9 × 6 × " +
			"params ÷ (dense peak FLOP/s × MFU × 3600), dense BF16 (FP16 where no BF16) from the GPU catalog; MFU the " +
			"midpoint of the offering's published band for the job's shape (docs/analytics.md: a job inside one node of " +
			"NVLink-class GPUs is single-node NVLink whatever the fabric between nodes; the interconnect counts only when " +
			"the job crosses nodes) or the value chosen. Offerings without a band are left out.",
		Variables: []Variable{gpuVar, onePricing,
			{Name: "params", Label: "Parameters", Values: []string{"7e9", "13e9", "70e9", "405e9"}},
			{Name: "mfu", Label: "MFU", Values: []string{"band", "0.3", "0.4", "0.5", "0.6"}},
			{Name: "job", Label: "Job", Values: []string{"one_node", "multi_node"}}},
		Panels: []Panel{
			{
				Title: "$ per 1B tokens by GPU (cheapest offering)", Kind: kindBarChart, Width: 24, Height: 12, Unit: "currencyUSD",
				Columns: []string{"gpu", "usd_per_1b_tokens"},
				SQL: `SELECT gpu, min(usd) AS usd_per_1b_tokens
FROM (
    ` + offers + `
)
WHERE flops > 0 AND mfu > 0
GROUP BY gpu
ORDER BY usd_per_1b_tokens`,
			},
			{
				Title: "$ per 1B tokens by GPU × provider (cheapest offering)", Kind: kindTable, Width: 24, Height: 12,
				Unit: "currencyUSD",
				Columns: []string{
					"gpu",
					"provider",
					"usd_per_1b_tokens",
					"usd_gpu_hour",
					"offer_mfu",
					"offer_interconnect",
					"dense_tflops",
					"gpu_hours_per_1b_tokens",
				},
				SQL: `SELECT gpu, provider, min(usd) AS usd_per_1b_tokens, argMin(price_usd_gpu_hour, usd) AS usd_gpu_hour,
    argMin(mfu, usd) AS offer_mfu, argMin(interconnect, usd) AS offer_interconnect, any(flops) / 1e12 AS dense_tflops,
    1e9 * 6 * ${params} / (dense_tflops * 1e12 * offer_mfu * 3600) AS gpu_hours_per_1b_tokens
FROM (
    ` + offers + `
)
WHERE flops > 0 AND mfu > 0
GROUP BY gpu, provider
ORDER BY usd_per_1b_tokens`,
			},
		},
	}
}

// TermCurveTitle is the term curve panel's title (the SQL test finds it by it).
const TermCurveTitle = "Term curve: lowest and median $/GPU-hour per pricing kind, against the term (offers on offer " +
	"now)"

func negotiation() Dashboard {
	pct := func(p string) string { return q7("xs", p) }
	return Dashboard{
		UID: "gpuprice-negotiation", Title: "gpuprice · Negotiation percentiles", From: "365d",
		Description: "Percentiles (type 7) of the day prices (docs/analytics.md) over the last 90, 180 and 365 days, per " +
			"provider and overall (*), as gpuprice history.",
		Variables: []Variable{gpuVar, onePricing, regionVar},
		Panels: []Panel{
			{
				Title: "p10 / p50 / p90 of day prices, last 90 / 180 / 365 days", Kind: kindTable, Width: 24, Height: 14,
				Unit:    "currencyUSD",
				Columns: []string{"gpu", "provider", "window_days", "p10", "p50", "p90", "lowest", "series_days"},
				SQL: `SELECT gpu, p AS provider, window_days, ` + pct(
					"0.1",
				) + ` AS p10, ` + pct(
					"0.5",
				) + ` AS p50, ` + pct(
					"0.9",
				) + ` AS p90,
    xs[1] AS lowest, length(xs) AS series_days
FROM (
    SELECT gpu, p, window_days, arraySort(groupArray(price)) AS xs
    FROM (
        SELECT gpu, arrayJoin([provider, '*']) AS p, arrayJoin([90, 180, 365]) AS window_days, price, day
        FROM v_day_prices
        WHERE pricing = '${kind}' AND ` + in(
					"gpu",
					"gpu",
				) + ` AND ` + in(
					"region",
					"region",
				) + `
            AND day >= toDateTime(intDiv(toUInt32(now()), 86400) * 86400 - 365 * 86400, 'UTC')
    )
    WHERE day > toDateTime(intDiv(toUInt32(now()), 86400) * 86400 - window_days * 86400, 'UTC')
    GROUP BY gpu, p, window_days
)
ORDER BY gpu, provider = '*' DESC, provider, window_days`,
			},
			{
				Title: TermCurveTitle,
				Description: "gpuprice terms: every listed instance offer on offer now, per GPU and pricing kind, against the " +
					"term in months (on-demand and spot 0, commitment_<n>m n, reserved 12 and 36), upfront amortised; the median is " +
					"type 7.",
				Kind: kindTable, Width: 24, Height: 12, Unit: "currencyUSD",
				Columns: []string{"gpu", "pricing", "term_months", "offers", "lowest", "median"},
				SQL: `SELECT gpu, pricing, term_months, length(xs) AS offers, xs[1] AS lowest, ` + q7(
					"xs",
					"0.5",
				) + ` AS median
FROM (
    SELECT gpu, pricing,
        multiIf(pricing IN ('on_demand', 'spot'), 0, pricing = 'reserved_1y', 12, pricing = 'reserved_3y', 36,
            toFloat64OrZero(substring(pricing, 12, length(pricing) - 12))) AS term_months,
        arraySort(groupArray(price_usd_gpu_hour)) AS xs
    FROM v_latest
    WHERE on_offer = 1 AND gpu != 'unknown' AND price_scope IN ('', 'instance') AND price_basis IN ('', 'listed')
        AND (pricing IN ('on_demand', 'spot', 'reserved_1y', 'reserved_3y')
            OR (substring(pricing, 1, 11) = 'commitment_' AND substring(pricing, length(pricing), 1) = 'm'))
        AND ` + in(
					"gpu",
					"gpu",
				) + ` AND ` + in(
					"region",
					"region",
				) + `
    GROUP BY gpu, pricing
)
ORDER BY gpu, term_months, pricing`,
			},
			{
				Title: "Median day price per provider", Kind: kindTimeSeries, Width: 24, Height: 10, Unit: "currencyUSD",
				Columns: []string{"time", "series", "median_price"},
				SQL: `SELECT day AS time, concat(gpu, ' ', provider) AS series, median(price) AS median_price
FROM v_day_prices
WHERE pricing = '${kind}' AND $__timeFilter(day) AND ` + in("gpu", "gpu") + ` AND ` + in("region", "region") + `
GROUP BY time, series
ORDER BY time`,
			},
		},
	}
}

func index() Dashboard {
	return Dashboard{
		UID: "gpuprice-index", Title: "gpuprice · Reference index", From: "90d",
		Description: "gpuprice-index/2 per GPU, pricing kind and group (hyperscaler / others): trimmed median of the day " +
			"prices (docs/analytics.md).",
		Variables: []Variable{gpuVar, onePricing},
		Panels: []Panel{
			{
				Title: "Index, $/GPU-hour", Kind: kindTimeSeries, Width: 24, Height: 12, Unit: "currencyUSD",
				Columns: []string{"time", "series", "price"},
				SQL: `SELECT day AS time, concat(gpu, ' ', group_name) AS series, price
FROM v_index
WHERE pricing = '${kind}' AND $__timeFilter(day) AND ` + in("gpu", "gpu") + `
ORDER BY time`,
			},
			{
				Title: "Index points", Kind: kindTable, Width: 24, Height: 12, Unit: "currencyUSD",
				Columns: []string{"day", "gpu", "group_name", "price", "offers", "dropped", "method"},
				SQL: `SELECT day, gpu, group_name, price, offers, dropped, method
FROM v_index
WHERE pricing = '${kind}' AND $__timeFilter(day) AND ` + in("gpu", "gpu") + `
ORDER BY day DESC, gpu, group_name
LIMIT 500`,
			},
		},
	}
}

func sourceHealth() Dashboard {
	srcVar := Variable{
		Name:  "source",
		Label: "Source",
		Multi: true,
		Query: "SELECT DISTINCT source FROM v_runs ORDER BY source",
	}
	return Dashboard{
		UID: "gpuprice-source-health", Title: "gpuprice · Source health", From: "7d",
		Description: "Runs, rows, quarantined rows and failures per source: from the store (run records, quarantine) and " +
			"from gpuprice serve's /metrics (Prometheus).",
		Variables: []Variable{srcVar},
		Panels: []Panel{
			{
				Title: "Last run per source (store)", Kind: kindTable, Width: 24, Height: 10,
				Columns: []string{
					"source",
					"last_started_at",
					"status",
					"rows_accepted",
					"rows_quarantined",
					"unknown_gpus",
					"duration_seconds",
					"error",
					"failed_runs",
					"runs",
				},
				SQL: `SELECT source, max(started_at) AS last_started_at, argMax(r_status, started_at) AS status,
    argMax(r_accepted, started_at) AS rows_accepted, argMax(r_quarantined, started_at) AS rows_quarantined,
    argMax(r_unknown, started_at) AS unknown_gpus, argMax(r_duration, started_at) AS duration_seconds,
    argMax(r_error, started_at) AS error, countIf(r_status = 'failed') AS failed_runs, count() AS runs
FROM (
    SELECT source, started_at, status AS r_status, rows_accepted AS r_accepted, rows_quarantined AS r_quarantined,
        unknown_gpus AS r_unknown, duration_seconds AS r_duration, error AS r_error
    FROM v_runs
)
WHERE $__timeFilter(started_at) AND ` + in("source", "source") + `
GROUP BY source
ORDER BY source`,
			},
			{
				Title: "Runs per day by status (store)", Kind: kindTimeSeries, Width: 12, Height: 9,
				Columns: []string{"time", "status", "runs"},
				SQL: `SELECT toDateTime(intDiv(toUInt32(started_at), 86400) * 86400, 'UTC') AS time, status, count() AS runs
FROM v_runs
WHERE $__timeFilter(started_at) AND ` + in(
					"source",
					"source",
				) + `
GROUP BY time, status
ORDER BY time`,
			},
			{
				Title: "Rows accepted and quarantined per day (store)", Kind: kindTimeSeries, Width: 12, Height: 9,
				Columns: []string{"time", "accepted", "quarantined"},
				SQL: `SELECT toDateTime(intDiv(toUInt32(started_at), 86400) * 86400, 'UTC') AS time,
    sum(rows_accepted) AS accepted, sum(rows_quarantined) AS quarantined
FROM v_runs
WHERE $__timeFilter(started_at) AND ` + in("source", "source") + `
GROUP BY time
ORDER BY time`,
			},
			{
				Title: "Quarantined rows by reason (store)", Kind: kindTable, Width: 24, Height: 9,
				Columns: []string{"source", "reason", "quarantined", "last_at"},
				SQL: `SELECT source, reason, count() AS quarantined, max(quarantined_at) AS last_at
FROM v_quarantine
WHERE $__timeFilter(quarantined_at) AND ` + in("source", "source") + `
GROUP BY source, reason
ORDER BY quarantined DESC
LIMIT 200`,
			},
			{
				Title: "Failed runs (store)", Kind: kindTable, Width: 24, Height: 8,
				Columns: []string{"started_at", "source", "run_id", "error"},
				SQL: `SELECT started_at, source, run_id, error
FROM v_runs
WHERE status = 'failed' AND $__timeFilter(started_at) AND ` + in("source", "source") + `
ORDER BY started_at DESC
LIMIT 100`,
			},
			{
				Title:  "Source up (Prometheus)",
				Kind:   kindTimeSeries,
				Width:  12,
				Height: 8,
				PromQL: `gpuprice_source_up{source=~"${source:regex}"}`,
			},
			{
				Title:  "Runs per hour by status (Prometheus)",
				Kind:   kindTimeSeries,
				Width:  12,
				Height: 8,
				PromQL: `sum by (source, status) (increase(gpuprice_runs_total{source=~"${source:regex}"}[1h]))`,
			},
			{
				Title:  "Rows accepted, last run (Prometheus)",
				Kind:   kindTimeSeries,
				Width:  12,
				Height: 8,
				PromQL: `gpuprice_source_last_rows_accepted{source=~"${source:regex}"}`,
			},
			{
				Title:  "Rows quarantined, last run (Prometheus)",
				Kind:   kindTimeSeries,
				Width:  12,
				Height: 8,
				PromQL: `gpuprice_source_last_rows_quarantined{source=~"${source:regex}"}`,
			},
			{
				Title:  "Run duration p90, s (Prometheus)",
				Kind:   kindTimeSeries,
				Width:  12,
				Height: 8,
				Unit:   "s",
				PromQL: `histogram_quantile(0.9, sum by (source, le) ` +
					`(rate(gpuprice_source_run_duration_seconds_bucket{source=~"${source:regex}"}[6h])))`,
			},
			{
				Title:  "Spool rows and alerts firing (Prometheus)",
				Kind:   kindTimeSeries,
				Width:  12,
				Height: 8,
				PromQL: `gpuprice_spool_rows or sum by (rule) (gpuprice_alerts_firing)`,
			},
		},
	}
}

// mfuBandMid is the midpoint of the MFU band of the job on the offering
// (analytics.MFUForJob: the GPU's form factor, and the offering's interconnect only
// when the job crosses nodes, which crosses, a SQL condition, says), 0 when the
// class has no published band or the GPU is not in the catalog.
func mfuBandMid(gpu, interconnect, crosses string) string {
	cat, err := schemas.LoadCatalog()
	if err != nil {
		panic(err) // the embedded catalog is validated by its own tests
	}
	// The band of each GPU (analytics.MFUForJob on an 8-GPU instance) for a job in
	// one node or across nodes, over an RDMA fabric or not.
	var ids, oneRDMA, oneOther, multiRDMA, multiOther []string
	for _, g := range cat.All() {
		mid := func(ic string, j analytics.Job) string {
			b, _, err := analytics.MFUForJob(g, ic, 8, j)
			if err != nil {
				return "0."
			}
			return fmt.Sprintf("%g", b.Mid())
		}
		one, multi := analytics.Job{}, analytics.Job{Nodes: 2}
		ids = append(ids, "'"+strings.ReplaceAll(g.ID, "'", "")+"'")
		oneRDMA, oneOther = append(oneRDMA, mid(schemas.InterconnectInfiniband, one)), append(oneOther,
			mid(schemas.InterconnectEthernet, one))
		multiRDMA = append(multiRDMA, mid(schemas.InterconnectInfiniband, multi))
		multiOther = append(multiOther, mid(schemas.InterconnectEthernet, multi))
	}
	rdma := fmt.Sprintf("%s IN ('%s', '%s', '%s')", interconnect, schemas.InterconnectInfiniband, schemas.InterconnectRoCE,
		schemas.InterconnectEFA)
	pick := func(a, b []string) string {
		return fmt.Sprintf("if(%s, transform(%s, [%s], [%s], 0.), transform(%s, [%s], [%s], 0.))", rdma,
			gpu, strings.Join(ids, ", "), strings.Join(a, ", "), gpu, strings.Join(ids, ", "), strings.Join(b, ", "))
	}
	return fmt.Sprintf("if(%s, %s, %s)", crosses, pick(multiRDMA, multiOther), pick(oneRDMA, oneOther))
}

// denseFlops is the dense BF16 (else FP16) FLOP/s of the GPU column col, from the
// GPU catalog, 0 for a GPU without a figure.
func denseFlops(col string) string {
	ids, flops := catalogFlops()
	q := make([]string, len(ids))
	f := make([]string, len(ids))
	for i := range ids {
		q[i] = "'" + strings.ReplaceAll(ids[i], "'", "") + "'"
		f[i] = fmt.Sprintf("%g", flops[i])
	}
	return fmt.Sprintf("transform(%s, [%s], [%s], 0.)", col, strings.Join(q, ", "), strings.Join(f, ", "))
}
