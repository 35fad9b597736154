package gcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/ingest/fetch"
	"github.com/gpuprice/gpuprice/scrapers/scrapertest"
)

const testAccessToken = "ya29.fixture-access-token-not-real"

// The documented answer shape: a machine type, its zone as a URL, daily preemption
// rates and Spot list prices.
func TestParseCapacityHistory(t *testing.T) {
	h, err := ParseCapacityHistory(bytes.NewReader(scrapertest.ReadFile(t, "testdata/capacity_history/response.json")))
	if err != nil {
		t.Fatal(err)
	}
	if h.MachineType != "a3-highgpu-8g" || h.Region != "us-central1" || h.Zone != "us-central1-a" ||
		len(h.Preemption) != 7 || len(h.Prices) != 7 || len(h.Rejects) != 0 {
		t.Fatalf("history %+v", h)
	}
	first := h.Preemption[0]
	if !first.Start.Equal(time.Date(2026, 10, 20, 7, 0, 0, 0, time.UTC)) || first.End.Sub(first.Start) != 24*time.Hour ||
		first.Rate != 0.12 {
		t.Errorf("first preemption record %+v", first)
	}
	if p := h.Prices[2]; p.Currency != "USD" || p.Price != 26.98 {
		t.Errorf("third price record %+v, want USD 26.98 (units 26 + nanos 980000000)", p)
	}
	scrapertest.Golden(t, "testdata/capacity_history/expected.json", h)
}

// Records that cannot be read are rejected one by one with the reason; a region
// location has no zone.
func TestParseCapacityHistoryOddRecords(t *testing.T) {
	h, err := ParseCapacityHistory(bytes.NewReader(scrapertest.ReadFile(t, "testdata/capacity_history/odd_records.json")))
	if err != nil {
		t.Fatal(err)
	}
	if h.Region != "us-east4" || h.Zone != "" {
		t.Errorf("region %q zone %q", h.Region, h.Zone)
	}
	if len(h.Preemption) != 1 || h.Preemption[0].Rate != 0.5 || len(h.Prices) != 1 || h.Prices[0].Price != 0.28 {
		t.Errorf("kept %+v / %+v", h.Preemption, h.Prices)
	}
	want := []string{
		"without interval or preemptionRate",
		"preemption rate 1.3 is not within 0…1",
		`interval start "yesterday"`,
		"without interval or preemptionRate",
		"preemption record not readable",
		"price record not readable",
		"price record: interval ends",
	}
	if len(h.Rejects) != len(want) {
		t.Fatalf("rejects %+v", h.Rejects)
	}
	for i, w := range want {
		if !strings.Contains(h.Rejects[i].Reason, w) || !strings.HasPrefix(h.Rejects[i].Reason, "gcp: capacity history: ") {
			t.Errorf("reject %d: %q, want it to say %q", i, h.Rejects[i].Reason, w)
		}
	}
	for _, body := range []string{`{"error":{"code":403,"message":"Required 'compute.regions.get' permission","status":"PERMISSION_DENIED"}}`, `[`, `{}`} {
		if _, err := ParseCapacityHistory(strings.NewReader(body)); err == nil {
			t.Errorf("%s: no error", body)
		}
	}
}

// The request: POST to the documented path with a bearer token and the documented
// body (SPOT, the zone, both history types); the token never shows in an error.
func TestFetchCapacityHistory(t *testing.T) {
	var mu sync.Mutex
	var got []*http.Request
	var bodies []map[string]any
	status := http.StatusOK
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b map[string]any
		_ = json.NewDecoder(r.Body).Decode(&b)
		mu.Lock()
		got, bodies = append(got, r.Clone(r.Context())), append(bodies, b)
		st := status
		mu.Unlock()
		if st != http.StatusOK {
			http.Error(w, `{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}`, st)
			return
		}
		body, _ := os.ReadFile("testdata/capacity_history/response.json")
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	defer srv.Close()
	c := fetch.New(fetch.Options{Timeout: 5 * time.Second,
		Backoff: fetch.Backoff{MaxTries: 2, Initial: time.Millisecond, Max: time.Millisecond}})
	q := CapacityHistoryQuery{Endpoint: srv.URL + "/compute/v1", Project: "gpuprice-fixture", Region: "us-central1",
		Location: "zones/us-central1-a", MachineType: "a3-highgpu-8g"}
	h, err := FetchCapacityHistory(t.Context(), c, q, testAccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Preemption) != 7 || len(got) != 1 {
		t.Fatalf("history %+v, requests %d", h, len(got))
	}
	r := got[0]
	if r.Method != http.MethodPost || r.URL.Path != "/compute/v1/projects/gpuprice-fixture/regions/us-central1/advice/capacityHistory" ||
		r.URL.RawQuery != "" || r.Header.Get("Authorization") != "Bearer "+testAccessToken ||
		r.Header.Get("Content-Type") != "application/json" {
		t.Errorf("request %s %s?%s auth %q", r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"))
	}
	wantBody := `{"instanceProperties":{"machineType":"a3-highgpu-8g","scheduling":{"provisioningModel":"SPOT"}},` +
		`"locationPolicy":{"location":"zones/us-central1-a"},"types":["PREEMPTION","PRICE"]}`
	if b, _ := json.Marshal(bodies[0]); !jsonEqual(t, string(b), wantBody) {
		t.Errorf("body %s, want %s", b, wantBody)
	}
	if u := (CapacityHistoryQuery{Project: "p", Region: "europe-west4"}).URL(); u !=
		"https://compute.googleapis.com/compute/v1/projects/p/regions/europe-west4/advice/capacityHistory" {
		t.Errorf("default URL %s", u)
	}

	mu.Lock()
	status = http.StatusUnauthorized
	mu.Unlock()
	_, err = FetchCapacityHistory(t.Context(), c, q, testAccessToken)
	if !errors.Is(err, fetch.ErrStatus) || strings.Contains(err.Error(), testAccessToken) {
		t.Errorf("err = %v, want an HTTP status error without the token", err)
	}
	n := len(got)
	if _, err := FetchCapacityHistory(t.Context(), c, q, " "); !errors.Is(err, ErrNoAccessToken) || len(got) != n {
		t.Errorf("without a token: err %v, %d requests sent", err, len(got)-n)
	}
	if _, err := FetchCapacityHistory(t.Context(), c, CapacityHistoryQuery{Project: "p"}, testAccessToken); err == nil {
		t.Error("a query without region and machine type was sent")
	}
}

func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatal(err)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func FuzzParseCapacityHistory(f *testing.F) {
	for _, p := range []string{"response", "odd_records"} {
		data, err := os.ReadFile("testdata/capacity_history/" + p + ".json")
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		h, err := ParseCapacityHistory(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, p := range h.Preemption {
			if p.Rate < 0 || p.Rate > 1 || !p.End.After(p.Start) {
				t.Fatalf("record %+v", p)
			}
		}
	})
}
