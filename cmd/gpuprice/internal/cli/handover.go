package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/analytics/api"
	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// heldByServer explains, when the embedded store is locked by a running `gpuprice
// serve`, what to do instead; the error still matches store.ErrLocked.
func (a *app) heldByServer(err error) error {
	if !errors.Is(err, store.ErrLocked) {
		return err
	}
	base, ok := a.runningServer()
	if !ok {
		return err
	}
	return fmt.Errorf(
		"the embedded store is held by gpuprice serve at %s: read commands (prices, volatility, history, …) ask it; "+
			"collect hands its work to it when $%s holds serve's token; to import, reparse, backfill, roll up or export, stop "+
			"serve first "+
			"or keep the data in ClickHouse: %w", base, api.TokenEnv, err)
}

// collectViaServer asks the running serve to collect the sources now (POST
// /api/v1/collect with the token) and prints their runs.
func (a *app) collectViaServer(ctx context.Context, base string, only []string, record string) error {
	token := os.Getenv(api.TokenEnv)
	if token == "" || record != "" {
		why := "set $" + api.TokenEnv + " to serve's token to have it collect"
		if record != "" {
			why = "--record needs the store: stop serve first"
		}
		return fmt.Errorf(
			"the embedded store is held by gpuprice serve at %s: %s (or POST %s/api/v1/collect?source=NAME with it): %w",
			base, why, base, store.ErrLocked)
	}
	names := only
	if len(names) == 0 {
		for _, r := range a.sourceDefs() {
			if r.Enabled {
				names = append(names, r.Name)
			}
		}
	}
	v := url.Values{"source": names}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/v1/collect?"+v.Encode(), nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	fmt.Fprintf(a.stderr, "gpuprice: the store is held by gpuprice serve; asking it at %s to collect\n", base)
	resp, err := (&http.Client{Timeout: a.cfg.Ingest.SourceTimeout + 2*time.Minute}).Do(req)
	if err != nil {
		return fmt.Errorf("asking serve at %s to collect: %w", base, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	var ans struct {
		Data    []schemas.Run `json:"data"`
		Running []string      `json:"skipped_running"`
		Error   string        `json:"error"`
	}
	_ = json.Unmarshal(body, &ans)
	if resp.StatusCode != http.StatusOK {
		msg := ans.Error
		if msg == "" {
			msg = strings.TrimSpace(string(body))
		}
		return fmt.Errorf("serve at %s did not collect (%d): %s", base, resp.StatusCode, msg)
	}
	statuses := make([]string, 0, len(ans.Data))
	var rows [][]string
	for _, r := range ans.Data {
		statuses = append(statuses, r.Status)
		rows = append(rows, a.resultRow(r, r.RowsSpooled, r.FinishedAt.Sub(r.StartedAt)))
	}
	for _, n := range ans.Running {
		rows = append(rows, []string{n, "skipped", query.Missing, query.Missing, query.Missing, query.Missing,
			query.Missing, query.Missing, query.Missing, "already running in serve"})
	}
	if err := output(a.stdout, "table", resultColumns, rows, nil, ""); err != nil {
		return err
	}
	return sourcesVerdict(statuses)
}
