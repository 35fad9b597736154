// Command dashgen generates gpuprice's Grafana dashboards (deploy/grafana/dashboards/*.json)
// with the Grafana Foundation SDK. The panels read the ClickHouse views of
// docs/views.md through the official ClickHouse datasource plugin
// (grafana-clickhouse-datasource) and gpuprice serve's metrics through Prometheus.
//
//	go run ./deploy/grafana/dashgen            # rewrite deploy/grafana/dashboards
//	go run ./deploy/grafana/dashgen -out DIR
//
// The JSON is committed; a test fails when it is stale, and runs every panel's SQL
// on a real ClickHouse filled through the ingest path.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"

	"github.com/grafana/grafana-foundation-sdk/go/barchart"
	"github.com/grafana/grafana-foundation-sdk/go/cog"
	"github.com/grafana/grafana-foundation-sdk/go/cog/variants"
	"github.com/grafana/grafana-foundation-sdk/go/common"
	"github.com/grafana/grafana-foundation-sdk/go/dashboard"
	"github.com/grafana/grafana-foundation-sdk/go/table"
	"github.com/grafana/grafana-foundation-sdk/go/timeseries"

	"github.com/gpuprice/gpuprice/schemas"
)

func main() {
	out := flag.String("out", "deploy/grafana/dashboards", "directory to write the dashboards to")
	flag.Parse()
	files, err := render()
	if err != nil {
		fmt.Fprintln(os.Stderr, "dashgen:", err)
		os.Exit(1)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "dashgen:", err)
		os.Exit(1)
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(*out, name), body, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "dashgen:", err)
			os.Exit(1)
		}
	}
}

// render returns every dashboard's file name and JSON.
func render() (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, d := range dashboards() {
		built, err := build(d)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", d.UID, err)
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(built); err != nil {
			return nil, fmt.Errorf("%s: %w", d.UID, err)
		}
		out[d.UID+".json"] = buf.Bytes()
	}
	return out, nil
}

func ref(typ, uid string) common.DataSourceRef {
	return common.DataSourceRef{Type: &typ, Uid: &uid}
}

// target is a panel query as the datasource plugins store it.
type target variants.UnknownDataquery

func (t target) Build() (variants.Dataquery, error) { return variants.UnknownDataquery(t), nil }

// Plugin query formats (grafana-clickhouse-datasource's Format enum).
const (
	formatTimeSeries = 0
	formatTable      = 1
)

func chTarget(sql string, kind string) target {
	format, qt := formatTable, "table"
	if kind == kindTimeSeries {
		format, qt = formatTimeSeries, "timeSeries"
	}
	return target{"refId": "A", "datasource": map[string]string{"type": clickhouseType, "uid": clickhouseUID},
		"editorType": "sql", "rawSql": sql, "format": format, "queryType": qt}
}

func promTarget(expr string) target {
	return target{"refId": "A", "datasource": map[string]string{"type": prometheusType, "uid": prometheusUID},
		"expr": expr, "legendFormat": "__auto", "range": true}
}

func build(d Dashboard) (dashboard.Dashboard, error) {
	b := dashboard.NewDashboardBuilder(d.Title).Uid(d.UID).Description(d.Description).
		Tags(append([]string{"gpuprice"}, d.Tags...)).Timezone("utc").Time("now-"+d.From, "now").
		Refresh("5m").Tooltip(dashboard.DashboardCursorSyncCrosshair).Editable()
	for _, v := range d.Variables {
		b = b.WithVariable(variable(v))
	}
	for _, p := range d.Panels {
		b = b.WithPanel(panel(p))
	}
	return b.Build()
}

func variable(v Variable) cog.Builder[dashboard.VariableModel] {
	if v.Query == "" {
		vals := ""
		for i, x := range v.Values {
			if i > 0 {
				vals += ","
			}
			vals += x
		}
		first := v.Values[0]
		return dashboard.NewCustomVariableBuilder(v.Name).Label(v.Label).
			Values(dashboard.StringOrMap{String: &vals}).
			Current(dashboard.VariableOption{Text: dashboard.StringOrArrayOfString{String: &first},
				Value: dashboard.StringOrArrayOfString{String: &first}})
	}
	q := v.Query
	all := "$__all"
	allText := "All"
	return dashboard.NewQueryVariableBuilder(v.Name).Label(v.Label).
		Datasource(ref(clickhouseType, clickhouseUID)).Query(dashboard.StringOrMap{String: &q}).Definition(q).
		Refresh(dashboard.VariableRefreshOnTimeRangeChanged).Sort(dashboard.VariableSortAlphabeticalAsc).
		Multi(v.Multi).IncludeAll(v.Multi).
		Current(dashboard.VariableOption{Text: dashboard.StringOrArrayOfString{ArrayOfString: []string{allText}},
			Value: dashboard.StringOrArrayOfString{ArrayOfString: []string{all}}})
}

// thresholds draws the levels: outside them is red. Two levels (−x, +x) make a
// green band between them; one level is red from it up.
func thresholds(levels []float64) *dashboard.ThresholdsConfigBuilder {
	sorted := append([]float64(nil), levels...)
	sort.Float64s(sorted)
	var steps []dashboard.Threshold
	if len(sorted) == 2 {
		steps = []dashboard.Threshold{
			{Color: "red"},
			{Value: &sorted[0], Color: "green"},
			{Value: &sorted[1], Color: "red"},
		}
	} else {
		steps = []dashboard.Threshold{{Color: "green"}, {Value: &sorted[0], Color: "red"}}
	}
	return dashboard.NewThresholdsConfigBuilder().Mode(dashboard.ThresholdsModeAbsolute).Steps(steps)
}

func panel(p Panel) cog.Builder[dashboard.Panel] {
	var t cog.Builder[variants.Dataquery]
	ds := ref(clickhouseType, clickhouseUID)
	if p.SQL != "" {
		t = chTarget(p.SQL, p.Kind)
	} else {
		t = promTarget(p.PromQL)
		ds = ref(prometheusType, prometheusUID)
	}
	switch p.Kind {
	case kindTimeSeries:
		b := timeseries.NewPanelBuilder().Title(p.Title).Description(p.Description).Datasource(ds).WithTarget(t).
			Span(p.Width).Height(p.Height).Unit(p.Unit).SpanNulls(common.BoolOrFloat64{Bool: cog.ToPtr(true)}).
			ShowPoints(common.VisibilityModeAuto).
			Legend(common.NewVizLegendOptionsBuilder().ShowLegend(true).DisplayMode(common.LegendDisplayModeTable).
				Placement(common.LegendPlacementRight).Calcs([]string{"lastNotNull", "min", "max"}))
		if len(p.Thresholds) > 0 {
			b = b.Thresholds(thresholds(p.Thresholds)).
				ThresholdsStyle(common.NewGraphThresholdsStyleConfigBuilder().Mode(common.GraphThresholdsStyleModeDashed))
		}
		return b
	case kindBarChart:
		return barchart.NewPanelBuilder().Title(p.Title).Description(p.Description).Datasource(ds).WithTarget(t).
			Span(p.Width).
			Height(p.Height).Unit(p.Unit).XField(p.Columns[0]).Orientation(common.VizOrientationHorizontal)
	default:
		return table.NewPanelBuilder().Title(p.Title).Description(p.Description).Datasource(ds).WithTarget(t).
			Span(p.Width).Height(p.Height).Unit(p.Unit).CellHeight(common.TableCellHeightSm)
	}
}

// catalogFlops lists the catalog's GPUs with their dense BF16 (else FP16) FLOP/s.
func catalogFlops() ([]string, []float64) {
	cat, err := schemas.LoadCatalog()
	if err != nil {
		panic(err) // the embedded catalog is validated by its own tests
	}
	var ids []string
	var flops []float64
	for _, g := range cat.All() {
		if p := g.PeakDenseTFLOPS(); p > 0 {
			ids = append(ids, g.ID)
			flops = append(flops, p*1e12)
		}
	}
	return ids, flops
}
