package fx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/scrapers/scrapertest"
)

// rates is what a parser case records: the rates and their count.
type rates struct {
	Rates []Rate `json:"rates,omitempty"`
	Count int    `json:"count"`
}

func TestParse(t *testing.T) {
	scrapertest.GoldenCases(t, "testdata/*/input.xml", func(_ string, data []byte) (rates, error) {
		rs, err := Parse(bytes.NewReader(data))
		return rates{Rates: rs, Count: len(rs)}, err
	})
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func parseFile(t *testing.T, path string) []Rate {
	t.Helper()
	rates, err := Parse(bytes.NewReader(readFile(t, path)))
	if err != nil {
		t.Fatal(err)
	}
	return rates
}

func TestParseConversion(t *testing.T) {
	rates := parseFile(t, "testdata/daily/input.xml")
	// 29 quoted currencies (USD among them) plus EUR.
	if len(rates) != 30 {
		t.Fatalf("rates = %d, want 30", len(rates))
	}
	got := map[string]float64{}
	for _, r := range rates {
		if !r.Date.Equal(time.Date(2026, 10, 30, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("%s dated %v", r.Currency, r.Date)
		}
		got[r.Currency] = r.USDPerUnit
	}
	for cur, want := range map[string]float64{
		"USD": 1,
		"EUR": 1.1612,
		"GBP": 1.1612 / 0.87215,
		"JPY": 1.1612 / 177.42,
		"CHF": 1.1612 / 0.9291,
	} {
		if math.Abs(got[cur]-want) > 1e-12 {
			t.Errorf("USD per %s = %v, want %v", cur, got[cur], want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		file string
		is   error
	}{
		{"no USD", "testdata/no_usd/input.xml", ErrNoRate},
		{"HTML instead of XML", "testdata/changed_layout/input.xml", ErrFormat},
	} {
		_, err := Parse(bytes.NewReader(readFile(t, c.file)))
		if !errors.Is(err, c.is) || !strings.HasPrefix(err.Error(), "fx: ") {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.is)
		}
	}
	env := func(days string) string {
		return `<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref"><Cube>` + days + `</Cube></gesmes:Envelope>`
	}
	for _, doc := range []string{
		env(`<Cube time='30 Oct 2026'><Cube currency='USD' rate='1.16'/></Cube>`),
		env(`<Cube time='2026-10-30'><Cube currency='USD' rate='-1.16'/></Cube>`),
		env(`<Cube time='2026-10-30'><Cube currency='USD' rate='NaN'/></Cube>`),
		env(`<Cube time='2026-10-30'><Cube currency='usd' rate='1.16'/></Cube>`),
		env(`<Cube time='2026-10-30'><Cube currency='USD' rate='1.16'/><Cube currency='USD' rate='1.17'/></Cube>`),
		env(`<Cube time='2026-10-30'><Cube currency='USD' rate='1.16'/><Cube currency='EUR' rate='1'/></Cube>`),
		env(`<Cube time='2026-10-30'><Cube currency='USD' rate='1.16'/></Cube><Cube time='2026-10-30'><Cube currency='USD' rate='1.16'/></Cube>`),
		`<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01"><gesmes:subject>Reference rates</gesmes:subject></gesmes:Envelope>`,
	} {
		if _, err := Parse(strings.NewReader(doc)); !errors.Is(err, ErrFormat) {
			t.Errorf("Parse(%s) err = %v, want ErrFormat", doc, err)
		}
	}
}

func TestTableRate(t *testing.T) {
	table := NewTable(parseFile(t, "testdata/hist_90d/input.xml"))
	ctx := context.Background()
	day := func(d int, h int) time.Time { return time.Date(2026, 10, d, h, 0, 0, 0, time.UTC) }
	rateOn := func(cur string, d int) float64 {
		t.Helper()
		r, err := table.Rate(ctx, cur, day(d, 0))
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	for _, c := range []struct {
		name   string
		cur    string
		at     time.Time
		wantOn int // the ECB day whose rate must be returned; 0: an ErrNoRate error
	}{
		{"same day", "EUR", day(28, 15), 28},
		{"lower case", "eur", day(28, 15), 28},
		{"Saturday uses Friday", "GBP", day(24, 12), 23},
		{"Sunday uses Friday", "EUR", day(25, 23), 23},
		{"first day", "JPY", day(19, 0), 19},
		{"before the first day", "EUR", day(18, 23), 0},
		{"7 days after the last day", "EUR", time.Date(2026, 11, 6, 23, 0, 0, 0, time.UTC), 30},
		{"8 days after the last day", "EUR", time.Date(2026, 11, 7, 0, 0, 0, 0, time.UTC), 0},
		{"unquoted currency", "XYZ", day(28, 0), 0},
		{"empty currency", "", day(28, 0), 0},
	} {
		got, err := table.Rate(ctx, c.cur, c.at)
		if c.wantOn == 0 {
			if !errors.Is(err, ErrNoRate) {
				t.Errorf("%s: Rate = %v, %v; want ErrNoRate", c.name, got, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if want := rateOn(strings.ToUpper(c.cur), c.wantOn); got != want {
			t.Errorf("%s: Rate = %v, want %v (day %d)", c.name, got, want, c.wantOn)
		}
	}
	if a, b := rateOn("EUR", 27), rateOn("EUR", 28); a == b {
		t.Errorf("consecutive days give the same rate %v: the fixture no longer tells days apart", a)
	}
	for _, at := range []time.Time{{}, day(1, 0), time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC)} {
		if r, err := table.Rate(ctx, "usd", at); err != nil || r != 1 {
			t.Errorf("USD at %v = %v, %v; want 1", at, r, err)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := table.Rate(cancelled, "EUR", day(28, 0)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: err = %v", err)
	}
	latest, ok := table.Latest()
	if !ok || !latest.Equal(day(30, 0)) {
		t.Errorf("Latest = %v %v", latest, ok)
	}
	if cs := table.Currencies(); len(cs) != 30 || cs[0] != "AUD" {
		t.Errorf("Currencies = %v", cs)
	}
	var empty *Table
	if _, err := empty.Rate(ctx, "EUR", day(28, 0)); !errors.Is(err, ErrNoRate) {
		t.Errorf("nil table: err = %v", err)
	}
}

func TestNewTableLaterWins(t *testing.T) {
	d := time.Date(2026, 10, 30, 16, 0, 0, 0, time.FixedZone("CET", 3600))
	table := NewTable([]Rate{
		{Date: d, Currency: "EUR", USDPerUnit: 1.10},
		{Date: d, Currency: "eur", USDPerUnit: 1.20},
	})
	r, err := table.Rate(context.Background(), "EUR", d)
	if err != nil || r != 1.20 {
		t.Errorf("Rate = %v, %v; want the later 1.20", r, err)
	}
}

func TestFetch(t *testing.T) {
	srv := scrapertest.NewServer(t, map[string][]scrapertest.Route{
		"/daily.xml":  {{File: "testdata/daily/input.xml", Header: map[string]string{"Content-Type": "text/xml"}}},
		"/retry.xml":  {{Status: http.StatusTooManyRequests, Header: map[string]string{"Retry-After": "0"}}, {File: "testdata/hist_90d/input.xml"}},
		"/down.xml":   {{Status: http.StatusInternalServerError, Body: "oops"}},
		"/empty.xml":  {{File: "testdata/empty/input.xml"}},
		"/broken.xml": {{File: "testdata/malformed/input.xml"}},
		"/no_usd.xml": {{File: "testdata/no_usd/input.xml"}},
	})
	c := scrapertest.Config(t, "fx", "", nil).Client
	ctx := context.Background()

	rates, err := Fetch(ctx, c, srv.URL+"/daily.xml")
	if err != nil || len(rates) != 30 {
		t.Fatalf("daily: %d rates, %v", len(rates), err)
	}
	rates, err = Fetch(ctx, c, srv.URL+"/retry.xml")
	if err != nil || len(rates) != 300 || srv.Hits["/retry.xml"] != 2 {
		t.Fatalf("429 then 200: %d rates, %v, %d hits", len(rates), err, srv.Hits["/retry.xml"])
	}
	for _, f := range []struct {
		path string
		is   error
		msg  string
	}{
		{"/down.xml", fetch.ErrStatus, "HTTP 500"},
		{"/empty.xml", ErrNoRate, "no reference day"},
		{"/broken.xml", nil, "decoding XML"},
		{"/no_usd.xml", ErrNoRate, "no USD rate"},
	} {
		_, err := Fetch(ctx, c, srv.URL+f.path)
		if err == nil || !strings.HasPrefix(err.Error(), "fx: ") || !strings.Contains(err.Error(), f.msg) {
			t.Errorf("%s: err = %v, want one containing %q", f.path, err, f.msg)
		}
		if f.is != nil && !errors.Is(err, f.is) {
			t.Errorf("%s: err = %v, want errors.Is %v", f.path, err, f.is)
		}
	}
	if n := srv.Hits["/down.xml"]; n != 3 {
		t.Errorf("500 forever: %d requests, want the client's 3 tries", n)
	}
	if _, err := Fetch(ctx, nil, srv.URL+"/daily.xml"); err == nil {
		t.Error("nil client accepted")
	}
}

func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/*/input.xml")
	for _, p := range files {
		f.Add(readFile(f, p))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		rates, err := Parse(bytes.NewReader(data))
		if err != nil {
			return
		}
		if rates == nil {
			t.Fatal("nil rates without an error")
		}
		for _, r := range rates {
			if !(r.USDPerUnit > 0) || math.IsInf(r.USDPerUnit, 0) {
				t.Fatalf("rate %+v is not a positive finite number", r)
			}
			if r.Currency == "USD" && r.USDPerUnit != 1 {
				t.Fatalf("USD per USD = %v", r.USDPerUnit)
			}
		}
		table := NewTable(rates)
		for _, r := range rates {
			if got, err := table.Rate(context.Background(), r.Currency, r.Date); err != nil || got != r.USDPerUnit {
				t.Fatalf("table lost %+v: %v %v", r, got, err)
			}
		}
	})
}

// ExampleTable converts a EUR price at the rate of the latest ECB day before a weekend.
func ExampleTable() {
	rates, err := Parse(strings.NewReader(`<gesmes:Envelope xmlns:gesmes="http://www.gesmes.org/xml/2002-08-01" xmlns="http://www.ecb.int/vocabulary/2002-08-01/eurofxref">
	<Cube><Cube time='2026-10-30'><Cube currency='USD' rate='1.1612'/><Cube currency='GBP' rate='0.87215'/></Cube></Cube></gesmes:Envelope>`))
	if err != nil {
		panic(err)
	}
	saturday := time.Date(2026, 10, 31, 9, 0, 0, 0, time.UTC)
	usdPerEUR, _ := NewTable(rates).Rate(context.Background(), "EUR", saturday)
	fmt.Printf("2.80 EUR = %.5f USD\n", 2.80*usdPerEUR)
	// Output: 2.80 EUR = 3.25136 USD
}

// A Table is what ingest consumes as its FX (ingest.FX has this method set); the
// assertion is local so that ingest may import this package without a cycle.
var _ interface {
	Rate(ctx context.Context, currency string, at time.Time) (float64, error)
} = (*Table)(nil)
