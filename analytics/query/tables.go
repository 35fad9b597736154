package query

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// GPUsTable is the table of `gpuprice gpus`: the catalog's figures per GPU, the
// dense BF16 TFLOPS said as FP16 where the GPU has no BF16 and "none known" where
// it has no dense figure.
func GPUsTable(gpus []schemas.GPU) ([]string, [][]string) {
	header := []string{"id", "memory_gb", "memory_type", "bandwidth_tbs", "dense_bf16_tflops", "dense_fp8_tflops",
		"tdp_watts", "sources"}
	var rows [][]string
	for _, g := range gpus {
		bf16 := Num(g.DenseBF16TFLOPS)
		if g.DenseBF16TFLOPS == 0 && g.DenseFP16TFLOPS > 0 {
			bf16 = Num(g.DenseFP16TFLOPS) + " (FP16)"
		}
		if g.PeakDenseTFLOPS() == 0 {
			bf16 = "none known"
		}
		rows = append(rows, []string{g.ID, Num(g.MemoryGB), g.MemoryType, Num(g.BandwidthTBs),
			bf16, Num(g.DenseFP8TFLOPS), Num(g.TDPWatts), strings.Join(g.Sources, " ")})
	}
	return header, rows
}

// SourcesTable is the table of `gpuprice sources`: each source with its last run.
func SourcesTable(sources []SourceRow) ([]string, [][]string) {
	header := []string{"name", "tier", "method", "pricing", "credentials", "schedule", "enabled", "last_run"}
	var rows [][]string
	for _, r := range sources {
		lr := "never"
		if r.LastRun != nil {
			lr = fmt.Sprintf("%s %s (%d rows)", r.LastRun.FinishedAt.Format(time.RFC3339), r.LastRun.Status,
				r.LastRun.RowsAccepted)
		}
		rows = append(rows, []string{r.Name, r.Tier, r.Method, strings.Join(r.Pricing, ","),
			ShortCredentials(r.Credentials), r.Schedule, strconv.FormatBool(r.Enabled), lr})
	}
	return header, rows
}

// ShortCredentials keeps what to set, e.g. "RUNPOD_API_KEY (optional)".
func ShortCredentials(c string) string {
	if c == "" {
		return "none"
	}
	head, _, _ := strings.Cut(c, "(")
	head = strings.TrimSpace(head)
	if strings.Contains(strings.ToLower(c), "optional") {
		head += " (optional)"
	}
	return head
}

// IndexDay is one day's index members of a GPU and pricing kind and the series left
// out, with why (analytics.ExplainIndexDay over the daily bars around the day): what
// `gpuprice index --explain DAY` lists. It is never nil.
func IndexDay(ctx context.Context, ro store.Rollups, gpu, pricing string, day time.Time) (
	[]analytics.IndexMember, error) {
	bars, err := ro.Bars(ctx, store.BarQuery{Filter: store.Filter{GPU: gpu, Pricing: pricing,
		Since: day.Add(-store.Daily), Until: day.Add(store.Daily)}, Width: store.Daily, CarryIn: true})
	if err != nil {
		return nil, err
	}
	if members := analytics.ExplainIndexDay(bars, day); members != nil {
		return members, nil
	}
	return []analytics.IndexMember{}, nil
}

// IndexDayTable is the table of IndexDay's members.
func IndexDayTable(members []analytics.IndexMember) ([]string, [][]string) {
	header := []string{"group", "status", "matched", "provider", "series", "price_usd_gpu_hour"}
	var rows [][]string
	for _, m := range members {
		rows = append(rows, []string{m.Group, m.Status, strconv.FormatBool(m.Matched), m.Provider, m.Series,
			Num(m.Price)})
	}
	return header, rows
}
