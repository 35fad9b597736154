package alert

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/ingest/fetch"
)

// TestOnlyAlertmanagerPostsAreRetried: a webhook or Slack post that fails is not sent
// again within the evaluation (a receiver that failed after acting would act twice);
// Alertmanager deduplicates, so its post is retried like a GET.
func TestOnlyAlertmanagerPostsAreRetried(t *testing.T) {
	var posts atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		posts.Add(1)
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	client := fetch.New(fetch.Options{Timeout: 5 * time.Second,
		Backoff: fetch.Backoff{MaxTries: 3, Initial: time.Millisecond, Max: 5 * time.Millisecond}})
	env := map[string]string{"HOOK": srv.URL + "/hook", "SLACK": srv.URL + "/slack"}
	targets, err := BuildTargets([]NotifierConfig{
		{Name: "w", Kind: Webhook, URLEnv: "HOOK"},
		{Name: "s", Kind: Slack, URLEnv: "SLACK"},
		{Name: "am", Kind: Alertmanager, URL: srv.URL},
	}, client, func(k string) string { return env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	ev := []Event{{Status: StatusFiring, Rule: "r", Summary: "s", StartsAt: t0, Labels: map[string]string{"alertname": "r"}}}
	for i, want := range []int32{1, 1, 3} {
		posts.Store(0)
		if err := targets[i].Notifier.Notify(context.Background(), ev); err == nil {
			t.Errorf("%s: a 503 was not an error", targets[i].Config.Name)
		}
		if got := posts.Load(); got != want {
			t.Errorf("%s: %d posts, want %d", targets[i].Config.Name, got, want)
		}
	}
}
