package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// A row the suspect gate held is listed by `gpuprice quarantine` with an id, the
// reason and the peer median, and `gpuprice quarantine release ID` stores it once a
// person confirms it; a row that failed another gate cannot be released.
func TestQuarantineReleaseSuspect(t *testing.T) {
	dsn := "duckdb://" + filepath.Join(t.TempDir(), "q.duckdb")
	cfg := writeConfig(t, "http://127.0.0.1:1")
	now := time.Now().UTC().Truncate(time.Second)
	rawRow := func(sku string, price float64) string {
		b, _ := json.Marshal(schemas.Observation{ObservedAt: now, EffectiveAt: now, Provider: "runpod", SKU: sku,
			GPUName: "H100 SXM", GPUMemoryGB: 80, GPUCount: 1, Pricing: schemas.OnDemand, PriceNative: price,
			Currency: "USD", Unit: schemas.UnitGPUHour, SourceKind: schemas.SourceAPI})
		return string(b)
	}
	ctx := context.Background()
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	held := schemas.Quarantined{QuarantinedAt: now, RunID: "r1", Source: "runpod",
		Reason: ingest.SuspectPrefix + " $0.5/GPU-h is 0.18× the peer median $2.79/GPU-h of 3 current marketplace H100-SXM-80GB on_demand instance prices",
		Raw:    rawRow("NVIDIA H100 80GB HBM3:community", 0.5)}
	bad := schemas.Quarantined{QuarantinedAt: now, RunID: "r1", Source: "runpod", Reason: "price 0 means not offered",
		Raw: rawRow("NVIDIA H100 80GB HBM3:secure", 0)}
	if err := st.WriteQuarantine(ctx, []schemas.Quarantined{held, bad}); err != nil {
		t.Fatal(err)
	}
	st.Close()

	out, code := run(t, "--config", cfg, "--store", dsn, "quarantine", "--format", "csv")
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if code != 0 || err != nil || len(recs) != 3 || recs[0][0] != "id" {
		t.Fatalf("quarantine: %d %v\n%s", code, err, out)
	}
	var heldID, badID string
	for _, r := range recs[1:] {
		if strings.HasPrefix(r[4], ingest.SuspectPrefix) && strings.Contains(r[4], "peer median $2.79") {
			heldID = r[0]
		} else {
			badID = r[0]
		}
	}
	if heldID != held.ID() || badID != bad.ID() {
		t.Fatalf("ids %q %q, want %q %q\n%s", heldID, badID, held.ID(), bad.ID(), out)
	}
	if out, code := run(t, "--config", cfg, "--store", dsn, "quarantine", "release", badID); code == 0 {
		t.Errorf("a row quarantined for another reason was released:\n%s", out)
	}
	out, code = run(t, "--config", cfg, "--store", dsn, "quarantine", "release", heldID)
	if code != 0 || !strings.Contains(out, "released "+heldID) || !strings.Contains(out, "$0.5/GPU-h") {
		t.Fatalf("release: %d\n%s", code, out)
	}
	var rows []schemas.Observation
	runJSON(t, &rows, "--config", cfg, "--store", dsn, "prices", "--provider", "runpod", "--format", "json")
	if len(rows) != 1 || rows[0].PriceUSDGPUHour != 0.5 || rows[0].GPU != "H100-SXM-80GB" ||
		rows[0].Attrs["released_from_quarantine"] != heldID || rows[0].RunID != "release-"+heldID {
		t.Errorf("released row: %+v", rows)
	}
}
