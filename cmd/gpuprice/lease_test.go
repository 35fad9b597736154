package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/analytics/digest"
	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/cli"
	"github.com/gpuprice/gpuprice/store/clickhouse/chtest"
)

// Two `gpuprice serve` processes on one ClickHouse store, each with its own data
// directory (so its own alert state file), evaluating the same firing rule every
// 2 s: the holder of the store's alerts lease notifies once, the other stands by;
// when the holder stops (SIGTERM, releasing the lease) the other takes over.
func TestIntegrationClickHouseTwoServesOneAlertEvaluator(t *testing.T) {
	chtest.RequireServer(t, "two gpuprice processes share the store (chDB runs one process per directory)")
	dsn := chtest.FreshDSN(t, "lease")
	srv := replay(t)
	if out, code := run(t, "--config", writeConfig(t, srv.URL), "--store", dsn, "collect"); !collected(code) {
		t.Fatalf("collect: %s", out)
	}
	hook := newReceiver(t)
	t.Setenv("GPUPRICE_ALERT_WEBHOOK_URL", hook.srv.URL+"/hook")
	procs := twoServes(t, srv.URL, dsn, `alerts:
  schedule: "@every 2s"
  rules:
    - {name: any-h100, kind: price_below, gpu: H100-SXM-80GB, pricing: on_demand, below_usd_gpu_hour: 1000}
  notifiers:
    - {name: hook, kind: webhook, url_env: GPUPRICE_ALERT_WEBHOOK_URL}
`)
	waitFor(t, "the first alert", func() bool { return hook.count() > 0 })
	waitFor(t, "both serves' evaluation turns", func() bool {
		n := 0
		for _, p := range procs {
			if strings.Contains(p.out.String(), "standing by") {
				n++
			}
		}
		return n >= 1
	})
	time.Sleep(7 * time.Second) // three more turns of each
	if n := hook.count(); n != 1 {
		t.Fatalf("the webhook got %d deliveries of one firing alert from two serves, want 1", n)
	}
	var leader, standby *serveProc
	for _, p := range procs {
		if strings.Contains(p.out.String(), "standing by") {
			standby = p
		} else {
			leader = p
		}
	}
	if leader == nil || standby == nil {
		t.Fatalf("want one leader and one standby:\n--- 1:\n%s\n--- 2:\n%s", procs[0].out.String(), procs[1].out.String())
	}
	if code := leader.stop(); code != cli.ExitInterrupted {
		t.Fatalf("leader exited %d", code)
	}
	// The standby takes the released lease at its next turn; its own state file has
	// not notified this alert, so it notifies once.
	waitFor(t, "the standby taking over", func() bool { return hook.count() == 2 })
	time.Sleep(5 * time.Second)
	if n := hook.count(); n != 2 {
		t.Errorf("after the takeover the webhook got %d deliveries, want 2", n)
	}
	if code := standby.stop(); code != cli.ExitInterrupted {
		t.Errorf("standby exited %d", code)
	}
}

// serveProc is a `gpuprice serve` process of a test: what it printed and how to
// stop it (SIGTERM; its exit status).
type serveProc struct {
	out  *syncBuffer
	stop func() int
}

// twoServes starts two `gpuprice serve` processes on the store dsn, each with the
// sources of the replay server at base, a data directory (so alert state) of its
// own, and extra appended to its configuration.
func twoServes(t *testing.T, base, dsn, extra string) []*serveProc {
	t.Helper()
	var procs []*serveProc
	for range 2 {
		cfg := writeConfig(t, base)
		appendConfig(t, cfg, extra)
		cmd, out, exited := startGPUPrice(t, "--config", cfg, "--store", dsn, "serve", "--listen", "127.0.0.1:0")
		procs = append(procs, &serveProc{out: out, stop: func() int { return terminate(t, cmd, out, exited) }})
	}
	return procs
}

// serve keeps the current prices as a snapshot; another process's collection into
// the same store moves the store's write marker, and the snapshot (and what the API
// answers) follows within seconds.
func TestIntegrationClickHouseServeSeesAnotherProcesssWrites(t *testing.T) {
	chtest.RequireServer(t, "another process writes to the store (chDB runs one process per directory)")
	dsn := chtest.FreshDSN(t, "snapshot")
	srv := replay(t)
	cfg := writeConfig(t, srv.URL)
	base, stop := startServe(t, "--config", cfg, "--store", dsn)
	defer stop()
	rows := func() int {
		var body struct {
			Data []json.RawMessage `json:"data"`
		}
		resp, err := http.Get(base + "/api/v1/prices?provider=lambda")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || resp.StatusCode != 200 {
			t.Fatalf("/api/v1/prices: %d %v", resp.StatusCode, err)
		}
		return len(body.Data)
	}
	if n := rows(); n != 0 {
		t.Fatalf("%d prices in an empty store", n)
	}
	// Another process (the CLI, with its own connection) collects.
	if out, code := run(t, "--config", cfg, "--store", dsn, "collect", "--source", "lambda"); !collected(code) {
		t.Fatalf("collect: %s", out)
	}
	var cliRows []json.RawMessage
	runJSON(t, &cliRows, "--config", cfg, "--store", dsn, "prices", "--provider", "lambda", "--format", "json")
	if len(cliRows) == 0 {
		t.Fatal("the CLI sees no lambda prices")
	}
	start := time.Now()
	waitFor(t, "serve to show the other process's prices", func() bool { return rows() == len(cliRows) })
	t.Logf("serve showed the %d new prices %s after the other process's collection", len(cliRows), time.Since(start).Round(100*time.Millisecond))
}

// Two `gpuprice serve` processes on one ClickHouse store with the same digest
// schedule (every 2 s, to a webhook): each turn the digest is sent by one of them,
// the holder of the store's alerts lease, and the other says it stands by; the
// webhook gets exactly the sends the holder logged, none twice.
func TestIntegrationClickHouseTwoServesOneDigest(t *testing.T) {
	chtest.RequireServer(t, "two gpuprice processes share the store (chDB runs one process per directory)")
	dsn := chtest.FreshDSN(t, "digestlease")
	srv := replay(t)
	if out, code := run(t, "--config", writeConfig(t, srv.URL), "--store", dsn, "collect"); !collected(code) {
		t.Fatalf("collect: %s", out)
	}
	hook := newReceiver(t)
	t.Setenv("GPUPRICE_DIGEST_WEBHOOK_URL", hook.srv.URL+"/digest")
	procs := twoServes(t, srv.URL, dsn, `alerts:
  notifiers:
    - {name: hook, kind: webhook, url_env: GPUPRICE_DIGEST_WEBHOOK_URL}
digest:
  gpus: [H100-SXM-80GB]
  schedule: "@every 2s"
`)
	const sent, standing = `"digest sent"`, "digest not sent here"
	waitFor(t, "three digests and a standing by", func() bool {
		return hook.count() >= 3 && (strings.Contains(procs[0].out.String(), standing) ||
			strings.Contains(procs[1].out.String(), standing))
	})
	for _, p := range procs {
		if code := p.stop(); code != cli.ExitInterrupted {
			t.Errorf("serve exited %d", code)
		}
	}
	logs := [2]string{procs[0].out.String(), procs[1].out.String()}
	leader := 0
	if strings.Contains(logs[0], standing) {
		leader = 1
	}
	if strings.Contains(logs[1-leader], sent) || strings.Contains(logs[leader], standing) {
		t.Fatalf("both serves sent the digest, or both stood by:\n--- 1:\n%s\n--- 2:\n%s", logs[0], logs[1])
	}
	if n, want := hook.count(), strings.Count(logs[leader], sent); n != want {
		t.Errorf("the webhook got %d digests, the sender logged %d", n, want)
	}
	var body struct {
		Digest digest.Digest `json:"digest"`
	}
	if hook.last(t, &body); len(body.Digest.GPUs) != 1 || body.Digest.GPUs[0].GPU != "H100-SXM-80GB" {
		t.Errorf("the webhook's digest: %+v", body.Digest)
	}
}
