package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

const dashDir = "../dashboards"

// TestDashboardsUpToDate fails when the committed JSON differs from what the
// generator writes: run `go run ./deploy/grafana/dashgen` after changing a panel.
func TestDashboardsUpToDate(t *testing.T) {
	files, err := render()
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dashDir)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		seen[e.Name()] = true
		want, ok := files[e.Name()]
		if !ok {
			t.Errorf("%s: not generated (delete it, or add it to the generator)", e.Name())
			continue
		}
		got, err := os.ReadFile(filepath.Join(dashDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s is stale: run go run ./deploy/grafana/dashgen", e.Name())
		}
	}
	for name := range files {
		if !seen[name] {
			t.Errorf("%s: generated but not committed: run go run ./deploy/grafana/dashgen", name)
		}
	}
}

// grafanaDashboard is the part of a dashboard's JSON the tests read.
type grafanaDashboard struct {
	UID   string `json:"uid"`
	Title string `json:"title"`
	Time  struct {
		From string `json:"from"`
		To   string `json:"to"`
	} `json:"time"`
	Templating struct {
		List []struct {
			Name       string          `json:"name"`
			Type       string          `json:"type"`
			Query      json.RawMessage `json:"query"`
			Multi      bool            `json:"multi"`
			IncludeAll bool            `json:"includeAll"`
			Datasource *dsRef          `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		Type       string `json:"type"`
		Title      string `json:"title"`
		Datasource dsRef  `json:"datasource"`
		Targets    []struct {
			Datasource dsRef  `json:"datasource"`
			RawSQL     string `json:"rawSql"`
			Expr       string `json:"expr"`
			Format     *int   `json:"format"`
		} `json:"targets"`
		FieldConfig struct {
			Defaults struct {
				Thresholds struct {
					Steps []struct {
						Value *float64 `json:"value"`
					} `json:"steps"`
				} `json:"thresholds"`
				Custom struct {
					ThresholdsStyle struct {
						Mode string `json:"mode"`
					} `json:"thresholdsStyle"`
				} `json:"custom"`
			} `json:"defaults"`
		} `json:"fieldConfig"`
	} `json:"panels"`
}

type dsRef struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

func loadDashboards(t *testing.T) []grafanaDashboard {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(dashDir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no dashboards in %s: %v", dashDir, err)
	}
	var out []grafanaDashboard
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var d grafanaDashboard
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if d.UID+".json" != filepath.Base(p) {
			t.Errorf("%s: uid %q", p, d.UID)
		}
		out = append(out, d)
	}
	return out
}

// TestDashboardsStructure checks what Grafana would resolve when it loads the
// provisioned files: every datasource uid is provisioned with its type, every
// variable a query uses is defined, every panel has one query of its datasource,
// thresholds are drawn where the generator says, and every metric a Prometheus
// panel reads is one gpuprice serve exports.
func TestDashboardsStructure(t *testing.T) {
	var prov struct {
		APIVersion  int `yaml:"apiVersion"`
		Datasources []struct {
			Name, Type, UID, URL string
			JSONData             map[string]any `yaml:"jsonData"`
			SecureJSONData       map[string]any `yaml:"secureJsonData"`
		} `yaml:"datasources"`
	}
	b, err := os.ReadFile("../provisioning/datasources/gpuprice.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &prov); err != nil {
		t.Fatal(err)
	}
	types := map[string]string{}
	for _, d := range prov.Datasources {
		types[d.UID] = d.Type
	}
	if prov.APIVersion != 1 || types[clickhouseUID] != clickhouseType || types[prometheusUID] != prometheusType {
		t.Fatalf("provisioned datasources: %v", types)
	}
	for _, d := range prov.Datasources {
		if d.Type == clickhouseType {
			if d.JSONData["defaultDatabase"] != "gpuprice" || d.JSONData["host"] == nil || d.JSONData["protocol"] != "native" {
				t.Errorf("clickhouse datasource jsonData: %v", d.JSONData)
			}
			if pw, _ := d.SecureJSONData["password"].(string); !strings.HasPrefix(pw, "$") {
				t.Errorf("clickhouse password must come from the environment, not the file")
			}
		}
	}

	// serve's own run metrics and the market's collector (analytics/metrics)
	var metricsSrc []byte
	for _, f := range []string{"../../../analytics/api/metrics.go", "../../../analytics/metrics/market.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		metricsSrc = append(metricsSrc, b...)
	}
	exported := map[string]bool{}
	for _, m := range regexp.MustCompile(`"(gpuprice_[a-z_]+)"`).FindAllStringSubmatch(string(metricsSrc), -1) {
		exported[m[1]] = true
	}

	gen := map[string]Dashboard{}
	for _, d := range dashboards() {
		gen[d.UID] = d
	}
	varRef := regexp.MustCompile(`\$\{(\w+)(?::\w+)?\}|\$(\w+)`)
	for _, d := range loadDashboards(t) {
		defined := map[string]bool{}
		for _, v := range d.Templating.List {
			defined[v.Name] = true
			if v.Type == "query" && (v.Datasource == nil || v.Datasource.UID != clickhouseUID) {
				t.Errorf("%s: variable %s has no ClickHouse datasource", d.UID, v.Name)
			}
		}
		g := gen[d.UID]
		if len(d.Panels) != len(g.Panels) || len(d.Panels) == 0 {
			t.Fatalf("%s: %d panels, generator has %d", d.UID, len(d.Panels), len(g.Panels))
		}
		for i, p := range d.Panels {
			if len(p.Targets) != 1 {
				t.Errorf("%s / %s: %d targets", d.UID, p.Title, len(p.Targets))
				continue
			}
			tg := p.Targets[0]
			if types[p.Datasource.UID] != p.Datasource.Type || tg.Datasource != p.Datasource {
				t.Errorf("%s / %s: datasource %+v / %+v not provisioned", d.UID, p.Title, p.Datasource, tg.Datasource)
			}
			q := tg.RawSQL + tg.Expr
			if q == "" {
				t.Errorf("%s / %s: no query", d.UID, p.Title)
			}
			for _, m := range varRef.FindAllStringSubmatch(q, -1) {
				name := m[1] + m[2]
				if !strings.HasPrefix(name, "__") && !defined[name] {
					t.Errorf("%s / %s: variable $%s is not defined", d.UID, p.Title, name)
				}
			}
			if tg.Expr != "" {
				for _, m := range regexp.MustCompile(`gpuprice_[a-z_]+`).FindAllString(tg.Expr, -1) {
					base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(m, "_bucket"), "_sum"), "_count")
					if !exported[base] {
						t.Errorf("%s / %s: metric %s is not exported by serve", d.UID, p.Title, m)
					}
				}
			}
			if tg.RawSQL != "" && (tg.Format == nil || (*tg.Format == formatTimeSeries) != (p.Type == kindTimeSeries)) {
				t.Errorf("%s / %s: format %v for a %s panel", d.UID, p.Title, tg.Format, p.Type)
			}
			if want := g.Panels[i].Thresholds; len(want) > 0 {
				var got []float64
				for _, s := range p.FieldConfig.Defaults.Thresholds.Steps {
					if s.Value != nil {
						got = append(got, *s.Value)
					}
				}
				sort.Float64s(want)
				if fmt.Sprint(got) != fmt.Sprint(want) || p.FieldConfig.Defaults.Custom.ThresholdsStyle.Mode == "" ||
					p.FieldConfig.Defaults.Custom.ThresholdsStyle.Mode == "off" {
					t.Errorf("%s / %s: thresholds %v (%q), want %v drawn", d.UID, p.Title, got,
						p.FieldConfig.Defaults.Custom.ThresholdsStyle.Mode, want)
				}
			}
		}
	}

	// The thresholds drawn are those of the compose stack's alert rules.
	var cfg struct {
		Alerts struct {
			Rules []struct {
				Kind         string  `yaml:"kind"`
				Window       string  `yaml:"window"`
				ThresholdPct float64 `yaml:"threshold_pct"`
			} `yaml:"rules"`
		} `yaml:"alerts"`
	}
	b, err = os.ReadFile("../../compose/gpuprice.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, r := range cfg.Alerts.Rules {
		switch r.Kind {
		case "spread_shift":
			found[r.Kind] = true
			if r.ThresholdPct != SpreadShiftThresholdPct || r.Window != fmt.Sprintf("%dd", SpreadShiftWindowDays) {
				t.Errorf("compose spread_shift rule %+v; the spreads dashboard draws ±%g %% over %dd", r, SpreadShiftThresholdPct, SpreadShiftWindowDays)
			}
		case "spot_move":
			found[r.Kind] = true
			if r.ThresholdPct != SpotMoveThresholdPct || r.Window != "24h" {
				t.Errorf("compose spot_move rule %+v; the volatility dashboard draws ±%g %% per day", r, SpotMoveThresholdPct)
			}
		}
	}
	if !found["spread_shift"] || !found["spot_move"] {
		t.Errorf("compose config lacks the rules the dashboards draw: %v", found)
	}
}

// TestInterpolate pins the substitution the tests apply to what the plugin does.
func TestInterpolate(t *testing.T) {
	from := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	to := from.Add(48 * time.Hour)
	vars := map[string]selection{
		"gpu":  {multi: true, values: []string{"H100-SXM-80GB", "A100's"}},
		"all":  {multi: true, all: true, options: []string{"a", "b"}},
		"kind": {values: []string{"spot"}},
	}
	got, err := interpolate(`SELECT 1 WHERE $__conditionalAll(gpu IN (${gpu:singlequote}), $gpu) AND $__conditionalAll(x IN ($all), $all) AND y IN ($all) AND pricing = '${kind}' AND k = $kind AND $__timeFilter(day) AND $__fromTime < $__toTime`,
		vars, from, to)
	if err != nil {
		t.Fatal(err)
	}
	want := `SELECT 1 WHERE gpu IN ('H100-SXM-80GB','A100\'s') AND 1=1 AND y IN ('a','b') AND pricing = 'spot' AND k = spot AND day >= toDateTime(1793491200) AND day <= toDateTime(1793664000) AND toDateTime(1793491200) < toDateTime(1793664000)`
	if got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := interpolate(`SELECT $nope`, vars, from, to); err == nil {
		t.Fatal("an undefined variable must fail")
	}
	if _, err := interpolate(`SELECT $__timeInterval(t)`, vars, from, to); err == nil {
		t.Fatal("a macro the tests do not expand must fail")
	}
}
