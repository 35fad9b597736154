// Package fx reads the European Central Bank's euro foreign exchange reference rates
// (https://www.ecb.europa.eu/stats/eurofxref/, no credentials) and answers "how many US
// dollars is one unit of currency X worth on day D".
// The long story (modes, rules, limits) is in its README.md.
package fx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/ingest/fetch"
)

// DailyEndpoint is the ECB file of the latest reference day.
const DailyEndpoint = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml"

// History90Endpoint is the ECB file of the last 90 days of reference rates.
const History90Endpoint = "https://www.ecb.europa.eu/stats/eurofxref/eurofxref-hist-90d.xml"

// MaxStale is how old the latest ECB day may be, relative to the asked time, for its
// rate to be used. Seven days covers the longest gap in the ECB calendar (Easter: Good
// Friday to Easter Monday) with room to spare.
const MaxStale = 7 * 24 * time.Hour

// ErrNoRate means no usable rate is known for a currency at a time.
var ErrNoRate = errors.New("fx: no rate")

// Rate is the USD value of one unit of Currency on the ECB reference day Date
// (midnight UTC of that calendar day).
type Rate struct {
	Date       time.Time `json:"date"`
	Currency   string    `json:"currency"`
	USDPerUnit float64   `json:"usd_per_unit"`
}

// Fetch downloads one ECB file (DailyEndpoint, History90Endpoint or a mirror of them)
// through c and parses it. A file with no reference day at all is an error wrapping
// ErrNoRate: a run must not carry on as though the ECB had published nothing.
func Fetch(ctx context.Context, c *fetch.Client, endpoint string) ([]Rate, error) {
	if c == nil {
		return nil, errors.New("fx: nil fetch client")
	}
	resp, err := c.GetConditional(ctx, endpoint, http.Header{"Accept": {"application/xml, text/xml"}})
	if err != nil {
		return nil, fmt.Errorf("fx: %w", err)
	}
	rates, err := Parse(bytes.NewReader(resp.Body))
	if err != nil {
		return nil, fmt.Errorf("fx: %s: %w", endpoint, err)
	}
	if len(rates) == 0 {
		return nil, fmt.Errorf("%w: %s holds no reference day", ErrNoRate, endpoint)
	}
	return rates, nil
}

// Table answers rate questions from a set of Rates. It is read-only once built and
// safe for concurrent use.
type Table struct {
	byCurrency map[string][]Rate // sorted by Date, one per day
}

// NewTable builds a table. When the same currency and day appear more than once (the
// daily and the 90-day file overlap), the later one in rates wins.
func NewTable(rates []Rate) *Table {
	days := map[string]map[time.Time]Rate{}
	for _, r := range rates {
		cur := strings.ToUpper(r.Currency)
		if days[cur] == nil {
			days[cur] = map[time.Time]Rate{}
		}
		r.Currency = cur
		r.Date = dayOf(r.Date)
		days[cur][r.Date] = r
	}
	t := &Table{byCurrency: make(map[string][]Rate, len(days))}
	for cur, m := range days {
		list := make([]Rate, 0, len(m))
		for _, r := range m {
			list = append(list, r)
		}
		sort.Slice(list, func(i, j int) bool { return list[i].Date.Before(list[j].Date) })
		t.byCurrency[cur] = list
	}
	return t
}

// Rate returns the USD value of one unit of currency at time at: the rate of the latest
// ECB day on or before at, if that day is at most MaxStale older than at. USD is 1.
// Any other outcome is an error wrapping ErrNoRate.
func (t *Table) Rate(ctx context.Context, currency string, at time.Time) (float64, error) {
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("fx: %w", err)
	}
	cur := strings.ToUpper(strings.TrimSpace(currency))
	if cur == "USD" {
		return 1, nil
	}
	var list []Rate
	if t != nil {
		list = t.byCurrency[cur]
	}
	if len(list) == 0 {
		return 0, fmt.Errorf("%w for %q: the ECB reference rates do not quote it", ErrNoRate, currency)
	}
	day := dayOf(at)
	// The first day after `day`; the one before it is the latest on or before `day`.
	i := sort.Search(len(list), func(i int) bool { return list[i].Date.After(day) })
	if i == 0 {
		return 0, fmt.Errorf(
			"%w for %s on %s: the first known day is %s",
			ErrNoRate,
			cur,
			day.Format(time.DateOnly),
			list[0].Date.Format(time.DateOnly),
		)
	}
	r := list[i-1]
	if day.Sub(r.Date) > MaxStale {
		return 0, fmt.Errorf(
			"%w for %s on %s: the latest known day, %s, is more than %s older",
			ErrNoRate,
			cur,
			day.Format(time.DateOnly),
			r.Date.Format(time.DateOnly),
			MaxStale,
		)
	}
	return r.USDPerUnit, nil
}

// Latest returns the most recent ECB day the table holds, and false when it is empty.
func (t *Table) Latest() (time.Time, bool) {
	var latest time.Time
	if t == nil {
		return latest, false
	}
	for _, list := range t.byCurrency {
		if d := list[len(list)-1].Date; d.After(latest) {
			latest = d
		}
	}
	return latest, !latest.IsZero()
}

// Currencies returns the currency codes the table holds, sorted.
func (t *Table) Currencies() []string {
	if t == nil {
		return nil
	}
	out := make([]string, 0, len(t.byCurrency))
	for c := range t.byCurrency {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// dayOf is midnight UTC of t's calendar day in UTC.
func dayOf(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}
