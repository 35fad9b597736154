package fx

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// ErrFormat means the document is not an ECB reference-rate file (or no longer has
// its layout).
var ErrFormat = errors.New("fx: not an ECB reference rates document")

// envelope is the gesmes:Envelope of the ECB files. Its Cube elements are in the
// eurofxref namespace; encoding/xml matches them by local name.
type envelope struct {
	XMLName xml.Name
	Subject string `xml:"subject"`
	Cube    *struct {
		Days []struct {
			Time  string `xml:"time,attr"`
			Rates []struct {
				Currency string `xml:"currency,attr"`
				Rate     string `xml:"rate,attr"`
			} `xml:"Cube"`
		} `xml:"Cube"`
	} `xml:"Cube"`
}

var currencyRE = regexp.MustCompile(`^[A-Z]{3}$`)

// Parse reads one ECB reference-rate file and returns, for every day in it, the USD
// value of one unit of each quoted currency, of the euro (rate(USD)) and of the dollar
// itself (1), sorted by day and currency. It is strict: a malformed date, currency or
// rate, a currency quoted twice on one day, or a day without a USD rate (nothing could
// be expressed in dollars) is an error; the last wraps ErrNoRate. A well-formed file
// with no day yields an empty, non-nil slice.
func Parse(r io.Reader) ([]Rate, error) {
	var env envelope
	dec := xml.NewDecoder(r)
	if err := dec.Decode(&env); err != nil {
		return nil, fmt.Errorf("fx: decoding XML: %w", err)
	}
	if env.XMLName.Local != "Envelope" {
		return nil, fmt.Errorf("%w: root element is <%s>, want gesmes:Envelope", ErrFormat, env.XMLName.Local)
	}
	if env.Cube == nil {
		return nil, fmt.Errorf("%w: no Cube element", ErrFormat)
	}
	out := []Rate{}
	seenDay := map[time.Time]bool{}
	for _, d := range env.Cube.Days {
		day, err := time.Parse(time.DateOnly, strings.TrimSpace(d.Time))
		if err != nil {
			return nil, fmt.Errorf("%w: Cube time %q is not a date", ErrFormat, d.Time)
		}
		if seenDay[day] {
			return nil, fmt.Errorf("%w: day %s appears twice", ErrFormat, d.Time)
		}
		seenDay[day] = true
		perEUR := map[string]float64{}
		for _, c := range d.Rates {
			cur := strings.TrimSpace(c.Currency)
			if !currencyRE.MatchString(cur) {
				return nil, fmt.Errorf("%w: %s: currency %q is not an ISO 4217 code", ErrFormat, d.Time, c.Currency)
			}
			if cur == "EUR" {
				return nil, fmt.Errorf("%w: %s: EUR quoted against itself", ErrFormat, d.Time)
			}
			v, err := strconv.ParseFloat(strings.TrimSpace(c.Rate), 64)
			if err != nil || v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, fmt.Errorf("%w: %s: rate %q of %s is not a positive number", ErrFormat, d.Time, c.Rate, cur)
			}
			if _, dup := perEUR[cur]; dup {
				return nil, fmt.Errorf("%w: %s: %s quoted twice", ErrFormat, d.Time, cur)
			}
			perEUR[cur] = v
		}
		usd, ok := perEUR["USD"]
		if !ok {
			return nil, fmt.Errorf(
				"%w: %s: the ECB file has no USD rate that day, so nothing can be expressed in dollars",
				ErrNoRate,
				d.Time,
			)
		}
		out = append(out, Rate{Date: day, Currency: "EUR", USDPerUnit: usd})
		for cur, v := range perEUR {
			out = append(out, Rate{Date: day, Currency: cur, USDPerUnit: usd / v})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Date.Equal(out[j].Date) {
			return out[i].Date.Before(out[j].Date)
		}
		return out[i].Currency < out[j].Currency
	})
	return out, nil
}
