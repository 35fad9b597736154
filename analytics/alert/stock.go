package alert

import (
	"fmt"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
)

// Stock rules read each offer's stock signals (`gpuprice availability`,
// docs/risk.md): a signal holds until the next of its series, analytics.StockHold
// at most; an offer whose newest signal is older than that is not observed, and
// none of these rules fires for it (a firing one resolves: nothing says it is
// still so).

// stockNow is one stock series' state at now: the newest signal effective by now,
// whether it still holds, whether the series was out of stock at some time of the
// window (the signal in force when it began counts), since when it is out (when
// it is), and its last signal in stock.
type stockNow struct {
	cur      schemas.Signal
	holds    bool
	wasOut   bool
	outSince time.Time
	lastInAt time.Time
}

// stockStates reads each series of stock signals (ordered by series then time) at
// now, over the window since.
func stockStates(sigs []schemas.Signal, since, now time.Time) []stockNow {
	var out []stockNow
	for i := 0; i < len(sigs); {
		j := i
		for j < len(sigs) && sigs[j].SameSeries(sigs[i]) && sigs[j].Kind == sigs[i].Kind {
			j++
		}
		var st stockNow
		found := false
		for k := i; k < j && !sigs[k].EffectiveAt.After(now); k++ {
			s := sigs[k]
			inWindow := s.EffectiveAt.After(since) || k+1 == j || sigs[k+1].EffectiveAt.After(since)
			if s.Value <= 0 {
				st.wasOut = st.wasOut || inWindow
				if !found || st.cur.Value > 0 {
					st.outSince = s.EffectiveAt
				}
			} else {
				st.lastInAt = s.EffectiveAt
			}
			st.cur, found = s, true
		}
		i = j
		if !found {
			continue
		}
		st.holds = !st.cur.EffectiveAt.Add(analytics.StockHold).Before(now)
		out = append(out, st)
	}
	return out
}

// stockSubject names a stock series.
func stockSubject(s schemas.Signal) string {
	return strings.TrimSpace(strings.Join([]string{s.Provider, s.SKU, s.Region, s.Zone}, " "))
}

// stockInstance is the instance of a stock rule for series s.
func (r Rule) stockInstance(s schemas.Signal, firing bool, sum string, threshold float64) Instance {
	subject := stockSubject(s)
	unit := analytics.UnitOf(s)
	if s.GPU != "" {
		sum += " (" + s.GPU + ")"
	}
	return Instance{Rule: r.Name, Kind: r.Kind, Subject: subject, Value: s.Value, Threshold: threshold, Unit: unit,
		Firing: firing, Summary: sum, Detail: map[string]float64{"stock": s.Value},
		Labels: r.labels(subject, "gpu", s.GPU, "provider", s.Provider, "sku", s.SKU, "region", s.Region,
			"stock_label", s.Label),
		Series:   &SeriesRef{GPU: s.GPU, Provider: s.Provider, Region: s.Region, Zone: s.Zone, SKU: s.SKU},
		Compared: []Point{{Label: "stock", At: s.EffectiveAt, Value: s.Value, Unit: unit}}}
}

// EvalOutOfStock evaluates an out_of_stock rule over stock signals ordered by
// series then time: it fires for each offer whose newest stock signal, still
// holding at now, says none can be rented (value 0), and that was in stock before
// (an offer never seen in stock is not news). Back in stock, or no longer observed,
// it resolves.
func EvalOutOfStock(r Rule, sigs []schemas.Signal, now time.Time) []Instance {
	var out []Instance
	for _, st := range stockStates(sigs, now.Add(-r.window()), now) {
		if !st.holds || st.cur.Value > 0 || st.lastInAt.IsZero() {
			continue
		}
		sum := fmt.Sprintf("%s: out of stock since %s (last in stock %s)", stockSubject(st.cur),
			st.outSince.UTC().Format(time.RFC3339), st.lastInAt.UTC().Format(time.RFC3339))
		in := r.stockInstance(st.cur, true, sum, 0)
		in.Detail["out_since_unix"] = float64(st.outSince.Unix())
		out = append(out, in)
	}
	return out
}

// EvalBackInStock evaluates a back_in_stock rule: it fires for each offer in stock
// now (its newest signal holding, value > 0) that was out of stock within the
// window (the signal in force when it began counts). It resolves when the offer is
// out again, no longer observed, or has been in stock for a whole window.
func EvalBackInStock(r Rule, sigs []schemas.Signal, now time.Time) []Instance {
	since := now.Add(-r.window())
	var out []Instance
	for _, st := range stockStates(sigs, since, now) {
		if !st.holds || st.cur.Value <= 0 || !st.wasOut {
			continue
		}
		sum := fmt.Sprintf("%s: back in stock (%s %s) at %s, out of stock within the last %s", stockSubject(st.cur),
			formatStock(st.cur.Value), analytics.UnitOf(st.cur), st.cur.EffectiveAt.UTC().Format(time.RFC3339),
			Span(r.window()))
		out = append(out, r.stockInstance(st.cur, true, sum, 0))
	}
	return out
}

// EvalCapacityBelow evaluates a capacity_below rule: per provider and GPU, the
// GPUs its offers' newest holding stock signals can supply now (a count of
// instances times the GPUs per instance; a count of regions states no GPUs and is
// left out) against BelowGPUs: it fires while the sum is below it. A provider and
// GPU with no holding signal that counts GPUs is not observed and gets none.
func EvalCapacityBelow(r Rule, sigs []schemas.Signal, now time.Time) []Instance {
	type key struct{ provider, gpu string }
	sums := map[key]float64{}
	newest := map[key]schemas.Signal{}
	offers := map[key]int{}
	var order []key
	for _, st := range stockStates(sigs, now.Add(-r.window()), now) {
		if !st.holds {
			continue
		}
		n, stated := analytics.GPUsAvailable(st.cur, 0)
		if !stated {
			continue
		}
		k := key{st.cur.Provider, st.cur.GPU}
		if _, ok := sums[k]; !ok {
			order = append(order, k)
		}
		sums[k] += n
		offers[k]++
		if st.cur.EffectiveAt.After(newest[k].EffectiveAt) {
			newest[k] = st.cur
		}
	}
	var out []Instance
	for _, k := range order {
		subject := strings.TrimSpace(k.provider + " " + k.gpu)
		firing := sums[k] < float64(r.BelowGPUs)
		sum := fmt.Sprintf("%s: %s GPUs can be rented now over %d offers, below %d", subject, formatStock(sums[k]),
			offers[k], r.BelowGPUs)
		if !firing {
			sum = fmt.Sprintf("%s: %s GPUs can be rented now over %d offers (at least %d)", subject,
				formatStock(sums[k]), offers[k], r.BelowGPUs)
		}
		at := newest[k].EffectiveAt
		out = append(out, Instance{Rule: r.Name, Kind: r.Kind, Subject: subject, Value: sums[k],
			Threshold: float64(r.BelowGPUs), Unit: "gpus", Firing: firing, Summary: sum,
			Detail: map[string]float64{"gpus_available": sums[k], "offers": float64(offers[k])},
			Labels: r.labels(subject, "gpu", k.gpu, "provider", k.provider),
			Series: &SeriesRef{GPU: k.gpu, Provider: k.provider},
			Compared: []Point{{Label: "gpus_available", At: at, Value: sums[k], Unit: "gpus"},
				{Label: "below", At: at, Value: float64(r.BelowGPUs), Unit: "gpus"}}})
	}
	return out
}

func formatStock(v float64) string { return fmt.Sprintf("%g", v) }
