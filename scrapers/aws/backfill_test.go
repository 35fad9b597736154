package aws

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
	"time"
)

func TestReadSpotHistoryPagesAndResumes(t *testing.T) {
	f := newFakeAWS(t)
	f.ec2 = spotPages(t)
	ac, _ := testAWS(f.Client())(context.Background())
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	q := SpotHistoryQuery{Region: "us-east-1", InstanceTypes: []string{"p5.48xlarge", "g5.xlarge"},
		Start: now.Add(-90 * 24 * time.Hour), End: now, Endpoint: f.URL, PageSize: 2}
	var pages []SpotPage
	err := ReadSpotHistory(context.Background(), ac, q, now, func(p SpotPage) error {
		pages = append(pages, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) != 2 || pages[0].NextToken == "" || pages[1].NextToken != "" || pages[1].Number != 2 {
		t.Fatalf("pages: %+v", pages)
	}
	if pages[0].Records != len(pages[0].Rows) || len(pages[0].Rows) == 0 || pages[0].Rows[0].SourceURL != f.URL ||
		pages[0].Rows[0].EffectiveAt.Equal(now) {
		t.Errorf("page 1 rows: %+v", pages[0].Rows)
	}
	form := f.ec2Req[0]
	if form.Get("MaxResults") != "2" || form.Get("InstanceType.1") != "p5.48xlarge" || form.Get("InstanceType.2") != "g5.xlarge" ||
		form.Get("StartTime") != "2026-08-03T12:00:00Z" || form.Get("EndTime") != "2026-11-01T12:00:00Z" ||
		form.Get("ProductDescription.1") != "Linux/UNIX" || f.ec2Reg[0] != "us-east-1" {
		t.Errorf("request: %v (region %q)", form, f.ec2Reg[0])
	}

	// Resuming from page 1's token reads page 2 only.
	q.NextToken = pages[0].NextToken
	var resumed []SpotPage
	if err := ReadSpotHistory(context.Background(), ac, q, now, func(p SpotPage) error {
		resumed = append(resumed, p)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(resumed) != 1 || len(resumed[0].Rows) != len(pages[1].Rows) || f.ec2Req[2].Get("NextToken") != q.NextToken {
		t.Fatalf("resumed pages: %+v", resumed)
	}
}

func TestReadSpotHistoryStops(t *testing.T) {
	f := newFakeAWS(t)
	f.ec2 = spotPages(t)
	ac, _ := testAWS(f.Client())(context.Background())
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	q := SpotHistoryQuery{Region: "us-east-1", Start: now.Add(-time.Hour), End: now, Endpoint: f.URL}
	stop := errors.New("stop")
	err := ReadSpotHistory(context.Background(), ac, q, now, func(SpotPage) error { return stop })
	if !errors.Is(err, stop) || len(f.ec2Req) != 1 {
		t.Fatalf("err = %v after %d requests", err, len(f.ec2Req))
	}
	if len(f.ec2Req[0]["InstanceType.1"]) == 0 || f.ec2Req[0].Get("MaxResults") != "1000" {
		t.Errorf("default query: %v", f.ec2Req[0])
	}
	f.ec2 = func(int, string, url.Values) (int, string) {
		return http.StatusForbidden, file(t, "testdata/spot_history/unauthorized.xml")
	}
	err = ReadSpotHistory(context.Background(), ac, q, now, func(SpotPage) error { return nil })
	if !IsAuthError(err) {
		t.Errorf("unauthorized: %v", err)
	}
}

func TestEnabledRegions(t *testing.T) {
	var action string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		action = r.PostForm.Get("Action")
		w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
		w.Write([]byte(file(t, "testdata/describe_regions/response.xml")))
	}))
	defer srv.Close()
	ac, _ := testAWS(srv.Client())(context.Background())
	got, err := EnabledRegions(context.Background(), ac, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ap-east-1", "us-east-1", "us-west-2"}; !slices.Equal(got, want) || action != "DescribeRegions" {
		t.Errorf("EnabledRegions = %v (action %q), want %v", got, action, want)
	}
}

func TestGPUInstanceTypesExported(t *testing.T) {
	ts := GPUInstanceTypes()
	if !slices.Contains(ts, "p5.48xlarge") || !slices.Contains(ts, "g6e.xlarge") || !slices.IsSorted(ts) {
		t.Errorf("GPUInstanceTypes = %v", ts)
	}
}
