package main

import (
	"testing"
	"time"

	"github.com/gpuprice/gpuprice/schemas/textsafe"
)

// TestIntegrationClickHouseHostileOption: a variable option of issue 29's corpus
// (`Texas, US\') OR 1=1 --` and the rest) selected beside "a" filters exactly as a
// clean selection of "a": the filter every panel uses (in) cannot be broken out of.
func TestIntegrationClickHouseHostileOption(t *testing.T) {
	_, conn := testDB(t)
	const sql = "SELECT r FROM (SELECT arrayJoin(['a', 'b', 'US']) AS r) WHERE "
	now := time.Now()
	hostile := append([]string{`Texas, US\') OR 1=1 --`, `US\') OR 1=1 --`}, textsafe.Hostile...)
	for _, h := range hostile {
		q, err := interpolate(sql+in("r", "region"), map[string]selection{
			"region": {multi: true, values: []string{h, "a"}}}, now, now)
		if err != nil {
			t.Fatal(err)
		}
		got := column(t, conn, q)
		if len(got) != 1 || got[0] != "a" {
			t.Errorf("option %.60q: rows %q, want [a]\n%.300s", h, got, q)
		}
	}
}
