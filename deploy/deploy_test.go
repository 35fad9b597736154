package deploy_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// servedPaths are the GET paths `gpuprice serve` registers (its routes).
func servedPaths(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("../analytics/api/routes.go")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`"GET (/[a-z0-9/_.-]*)"`).FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = true
	}
	if !out["/healthz"] || !out["/metrics"] {
		t.Fatalf("routes.go: no /healthz or /metrics among %v", out)
	}
	return out
}

// exportedMetrics are the metric names serve exports: its own run metrics and the
// market's collector (analytics/metrics).
func exportedMetrics(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for _, f := range []string{"../analytics/api/metrics.go", "../analytics/metrics/market.go"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`"(gpuprice_[a-z_]+)"`).FindAllStringSubmatch(string(b), -1) {
			out[m[1]] = true
		}
	}
	return out
}

// pinned reports whether an image names a version: a tag with a digit, not latest.
func pinned(image string) bool {
	if strings.Contains(image, "@sha256:") {
		return true
	}
	i := strings.LastIndex(image, ":")
	if i < 0 || strings.Contains(image[i:], "/") {
		return false
	}
	tag := image[i+1:]
	return tag != "latest" && strings.ContainsAny(tag, "0123456789")
}

var urlPath = regexp.MustCompile(`http://127\.0\.0\.1:8080(/[a-z0-9/_.-]*)`)

type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Build       map[string]string `yaml:"build"`
		Command     []string          `yaml:"command"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		Ports       []string          `yaml:"ports"`
		DependsOn   map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
		Healthcheck struct {
			Test []string `yaml:"test"`
		} `yaml:"healthcheck"`
	} `yaml:"services"`
	Volumes map[string]any `yaml:"volumes"`
}

func loadYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// TestCompose checks docker-compose.yml as far as it can be without Docker: the five
// services, a health check on each, depends_on only on healthy services, volumes
// declared and bind mounts that exist, no database port published, nothing published
// beyond 127.0.0.1, images pinned, and gpuprice's health check on a path serve answers.
func TestCompose(t *testing.T) {
	var c composeFile
	loadYAML(t, "../docker-compose.yml", &c)
	paths := servedPaths(t)
	for _, s := range []string{"clickhouse", "gpuprice", "grafana", "prometheus", "alertmanager"} {
		if _, ok := c.Services[s]; !ok {
			t.Errorf("no service %s", s)
		}
	}
	for name, s := range c.Services {
		if len(s.Healthcheck.Test) < 2 || s.Healthcheck.Test[0] != "CMD" {
			t.Errorf("%s: no health check", name)
		}
		for dep, d := range s.DependsOn {
			if d.Condition != "service_healthy" {
				t.Errorf("%s depends on %s with condition %q", name, dep, d.Condition)
			}
			if _, ok := c.Services[dep]; !ok {
				t.Errorf("%s depends on unknown %s", name, dep)
			}
		}
		if s.Build == nil && !pinned(s.Image) {
			t.Errorf("%s: image %q is not pinned", name, s.Image)
		}
		for _, p := range s.Ports {
			if !strings.HasPrefix(p, "127.0.0.1:") {
				t.Errorf("%s publishes %s beyond localhost", name, p)
			}
		}
		for _, v := range s.Volumes {
			src := strings.Split(v, ":")[0]
			if strings.HasPrefix(src, "./") {
				if _, err := os.Stat(filepath.Join("..", src)); err != nil {
					t.Errorf("%s mounts %s: %v", name, src, err)
				}
			} else if _, ok := c.Volumes[src]; !ok {
				t.Errorf("%s: volume %s not declared", name, src)
			}
		}
	}
	if ch := c.Services["clickhouse"]; len(ch.Ports) > 0 || !strings.HasPrefix(ch.Image, "clickhouse/clickhouse-server:") {
		t.Errorf("clickhouse: ports %v (none by default), image %s", ch.Ports, ch.Image)
	}
	g := c.Services["gpuprice"]
	hc := strings.Join(g.Healthcheck.Test, " ")
	if m := urlPath.FindStringSubmatch(hc); m == nil || !paths[m[1]] {
		t.Errorf("gpuprice health check %q: not a path serve answers (%v)", hc, paths)
	}
	if g.Build["dockerfile"] != "deploy/Dockerfile" || !slices.Contains(g.Command, "serve") ||
		!slices.Contains(g.Volumes, "./deploy/compose/gpuprice.yaml:/etc/gpuprice/gpuprice.yaml:ro") {
		t.Errorf("gpuprice service: build %v, command %v, volumes %v", g.Build, g.Command, g.Volumes)
	}
	if !strings.HasPrefix(g.Environment["GPUPRICE_STORE"], "clickhouse://gpuprice@clickhouse:9000/") {
		t.Errorf("gpuprice store %q", g.Environment["GPUPRICE_STORE"])
	}
	for name, s := range c.Services {
		for k, v := range s.Environment {
			if strings.Contains(k, "PASSWORD") && !strings.HasPrefix(v, "${") {
				t.Errorf("%s: %s is written in the file, not taken from the environment", name, k)
			}
		}
	}
	gf := c.Services["grafana"]
	if p := gf.Environment["GF_PLUGINS_PREINSTALL_SYNC"]; !regexp.MustCompile(`^grafana-clickhouse-datasource@\d+\.\d+\.\d+$`).MatchString(p) {
		t.Errorf("grafana plugin %q: not the ClickHouse plugin at a pinned version", p)
	}
	if !slices.Contains(gf.Volumes, "./deploy/grafana/provisioning:/etc/grafana/provisioning:ro") {
		t.Errorf("grafana provisioning not mounted: %v", gf.Volumes)
	}
	var prov struct {
		Providers []struct {
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	loadYAML(t, "grafana/provisioning/dashboards/gpuprice.yaml", &prov)
	if len(prov.Providers) != 1 || !slices.Contains(gf.Volumes, "./deploy/grafana/dashboards:"+prov.Providers[0].Options.Path+":ro") {
		t.Errorf("dashboards provider path %+v is not where compose mounts deploy/grafana/dashboards", prov.Providers)
	}
}

// TestPrometheusAndAlertmanager checks the scrape of serve's /metrics, the rules'
// metrics and the Alertmanager route.
func TestPrometheusAndAlertmanager(t *testing.T) {
	var p struct {
		RuleFiles []string `yaml:"rule_files"`
		Alerting  struct {
			Alertmanagers []struct {
				StaticConfigs []struct {
					Targets []string `yaml:"targets"`
				} `yaml:"static_configs"`
			} `yaml:"alertmanagers"`
		} `yaml:"alerting"`
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			MetricsPath   string `yaml:"metrics_path"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	loadYAML(t, "prometheus/prometheus.yml", &p)
	paths := servedPaths(t)
	if len(p.ScrapeConfigs) != 1 || !paths[p.ScrapeConfigs[0].MetricsPath] ||
		fmt.Sprint(p.ScrapeConfigs[0].StaticConfigs[0].Targets) != "[gpuprice:8080]" {
		t.Errorf("scrape configs %+v", p.ScrapeConfigs)
	}
	if len(p.Alerting.Alertmanagers) != 1 || fmt.Sprint(p.Alerting.Alertmanagers[0].StaticConfigs[0].Targets) != "[alertmanager:9093]" {
		t.Errorf("alertmanagers %+v", p.Alerting.Alertmanagers)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if len(p.RuleFiles) != 1 || filepath.Base(p.RuleFiles[0]) != "rules.yml" {
		t.Fatalf("rule files %v", p.RuleFiles)
	}
	loadYAML(t, "prometheus/rules.yml", &rules)
	metrics := exportedMetrics(t)
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			for _, m := range regexp.MustCompile(`gpuprice_[a-z_]+`).FindAllString(r.Expr, -1) {
				if !metrics[m] {
					t.Errorf("rule %s reads %s, which serve does not export", r.Alert, m)
				}
			}
		}
	}
	if n == 0 {
		t.Error("no rules")
	}
	var am struct {
		Route struct {
			Receiver string `yaml:"receiver"`
		} `yaml:"route"`
		Receivers []struct {
			Name string `yaml:"name"`
		} `yaml:"receivers"`
	}
	loadYAML(t, "alertmanager/alertmanager.yml", &am)
	ok := false
	for _, r := range am.Receivers {
		ok = ok || r.Name == am.Route.Receiver
	}
	if !ok {
		t.Errorf("alertmanager route receiver %q is not defined", am.Route.Receiver)
	}
	// gpuprice's own alerts reach the same Alertmanager.
	for _, cfg := range []string{"compose/gpuprice.yaml"} {
		b, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), `kind: alertmanager, url: "http://alertmanager:9093"`) {
			t.Errorf("%s: no alertmanager notifier for the compose Alertmanager", cfg)
		}
	}
}

// TestDockerfile checks the image: a non-root user, git, EXPOSE, a HEALTHCHECK on a
// path serve answers, base images pinned.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	// Join continuation lines.
	text := strings.ReplaceAll(string(b), "\\\n", " ")
	var user, expose, health string
	var froms []string
	installsGit := false
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		switch strings.ToUpper(f[0]) {
		case "FROM":
			froms = append(froms, f[1])
		case "USER":
			user = f[1]
		case "EXPOSE":
			expose = f[1]
		case "HEALTHCHECK":
			health = line
		case "RUN":
			if regexp.MustCompile(`apt-get install[^&]*\bgit\b`).MatchString(line) {
				installsGit = true
			}
		}
	}
	if user == "" || user == "root" || strings.HasPrefix(user, "0") {
		t.Errorf("USER %q: the image must run as non-root", user)
	}
	if expose != "8080" {
		t.Errorf("EXPOSE %q", expose)
	}
	if m := urlPath.FindStringSubmatch(health); m == nil || !servedPaths(t)[m[1]] {
		t.Errorf("HEALTHCHECK %q: not a path serve answers", health)
	}
	if !installsGit {
		t.Error("the runtime image does not install git (import skypilot-catalog needs it)")
	}
	for _, f := range froms {
		if !pinned(f) {
			t.Errorf("FROM %s: not pinned", f)
		}
	}
}

// render runs Kustomize on a directory.
func render(t *testing.T, dir string) resmap.ResMap {
	t.Helper()
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	m, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	return m
}

type object = map[string]any

func get(o any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := o.(map[string]any)
			if !ok {
				return nil
			}
			o = m[k]
		case int:
			l, ok := o.([]any)
			if !ok || k >= len(l) {
				return nil
			}
			o = l[k]
		}
	}
	return o
}

// TestKustomize renders the base and the example overlay with Kustomize's own
// engine (krusty) and checks the objects: a Deployment running non-root with a
// read-only root, no privilege escalation, resources bounded, probes on paths serve
// answers on a port it names, a pinned image, every ConfigMap, Secret and claim it
// mounts rendered; a Service selecting its pods; the Secret committed empty; the
// ConfigMap carrying the config `gpuprice config` accepts (see cmd/gpuprice).
func TestKustomize(t *testing.T) {
	paths := servedPaths(t)
	for _, dir := range []string{"k8s/base", "k8s/overlays/example"} {
		t.Run(dir, func(t *testing.T) {
			objs := map[string]object{} // kind/name
			var names []string
			for _, r := range render(t, dir).Resources() {
				m, err := r.Map()
				if err != nil {
					t.Fatal(err)
				}
				key := r.GetKind() + "/" + r.GetName()
				objs[key] = m
				names = append(names, key)
			}
			find := func(kind, prefix string) (string, object) {
				for _, n := range names {
					if strings.HasPrefix(n, kind+"/"+prefix) {
						return strings.TrimPrefix(n, kind+"/"), objs[n]
					}
				}
				t.Fatalf("%s: no %s %s* among %v", dir, kind, prefix, names)
				return "", nil
			}
			_, dep := find("Deployment", "gpuprice")
			pod := get(dep, "spec", "template", "spec")
			if get(pod, "securityContext", "runAsNonRoot") != true {
				t.Error("pod does not set runAsNonRoot")
			}
			if uid, _ := get(pod, "securityContext", "runAsUser").(int); uid == 0 {
				t.Error("pod runAsUser is root or unset")
			}
			containers, _ := get(pod, "containers").([]any)
			if len(containers) != 1 {
				t.Fatalf("%d containers", len(containers))
			}
			c := containers[0]
			if get(c, "securityContext", "allowPrivilegeEscalation") != false || get(c, "securityContext", "readOnlyRootFilesystem") != true ||
				fmt.Sprint(get(c, "securityContext", "capabilities", "drop")) != "[ALL]" {
				t.Errorf("container securityContext %v", get(c, "securityContext"))
			}
			for _, r := range []string{"requests", "limits"} {
				for _, k := range []string{"cpu", "memory"} {
					if get(c, "resources", r, k) == nil {
						t.Errorf("no resources.%s.%s", r, k)
					}
				}
			}
			img, _ := get(c, "image").(string)
			if !pinned(img) || !strings.Contains(img, "/") {
				t.Errorf("image %q is not pinned to a registry and version", img)
			}
			portName := get(c, "ports", 0, "name")
			for _, probe := range []string{"startupProbe", "readinessProbe", "livenessProbe"} {
				p, _ := get(c, probe, "httpGet", "path").(string)
				if !paths[p] || get(c, probe, "httpGet", "port") != portName {
					t.Errorf("%s: path %q port %v (serve answers %v on %v)", probe, p, get(c, probe, "httpGet", "port"), paths, portName)
				}
			}
			if get(c, "readinessProbe", "httpGet", "path") != "/healthz" {
				t.Error("readiness must follow the store (/healthz)")
			}
			// Everything the pod mounts or reads is rendered.
			vols, _ := get(pod, "volumes").([]any)
			for _, v := range vols {
				switch {
				case get(v, "configMap") != nil:
					if _, ok := objs["ConfigMap/"+get(v, "configMap", "name").(string)]; !ok {
						t.Errorf("volume %v: no such ConfigMap", v)
					}
				case get(v, "secret") != nil:
					if _, ok := objs["Secret/"+get(v, "secret", "secretName").(string)]; !ok {
						t.Errorf("volume %v: no such Secret", v)
					}
				case get(v, "persistentVolumeClaim") != nil:
					if _, ok := objs["PersistentVolumeClaim/"+get(v, "persistentVolumeClaim", "claimName").(string)]; !ok {
						t.Errorf("volume %v: no such claim", v)
					}
				}
			}
			envCM, _ := get(c, "envFrom", 0, "configMapRef", "name").(string)
			env, ok := objs["ConfigMap/"+envCM]
			if !ok {
				t.Fatalf("envFrom %q: no such ConfigMap", envCM)
			}
			dsn, _ := get(env, "data", "GPUPRICE_STORE").(string)
			if !strings.HasPrefix(dsn, "clickhouse://") || strings.Contains(strings.SplitN(dsn, "@", 2)[0], ":") && strings.Count(dsn, ":") > 2 {
				t.Errorf("GPUPRICE_STORE %q: a ClickHouse DSN without a password", dsn)
			}
			pwFile, _ := get(env, "data", "GPUPRICE_CLICKHOUSE_PASSWORD_FILE").(string)
			secretName, secret := find("Secret", "gpuprice-secrets")
			mounted := false
			for _, m := range get(c, "volumeMounts").([]any) {
				for _, v := range vols {
					if get(v, "name") == get(m, "name") && get(v, "secret", "secretName") == secretName {
						key := strings.TrimPrefix(pwFile, get(m, "mountPath").(string)+"/")
						_, has := get(secret, "data", key).(string)
						_, hasS := get(secret, "stringData", key).(string)
						mounted = has || hasS
					}
				}
			}
			if !mounted {
				t.Errorf("GPUPRICE_CLICKHOUSE_PASSWORD_FILE %q is not a key of the mounted Secret", pwFile)
			}
			for _, field := range []string{"data", "stringData"} {
				if m, _ := get(secret, field).(map[string]any); m != nil {
					for k, v := range m {
						if v != "" {
							t.Errorf("Secret %s.%s is committed with a value", field, k)
						}
					}
				}
			}
			_, cfg := find("ConfigMap", "gpuprice-config")
			want, err := os.ReadFile("k8s/base/gpuprice.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if get(cfg, "data", "gpuprice.yaml") != string(want) {
				t.Error("ConfigMap gpuprice-config does not carry k8s/base/gpuprice.yaml")
			}
			_, svc := find("Service", "gpuprice")
			sel, _ := get(svc, "spec", "selector").(map[string]any)
			labels, _ := get(dep, "spec", "template", "metadata", "labels").(map[string]any)
			for k, v := range sel {
				if labels[k] != v {
					t.Errorf("Service selects %s=%v; the pods have %v", k, v, labels[k])
				}
			}
			if len(sel) == 0 || get(svc, "spec", "ports", 0, "targetPort") != portName {
				t.Errorf("Service selector %v, targetPort %v", sel, get(svc, "spec", "ports", 0, "targetPort"))
			}
			if dir == "k8s/overlays/example" {
				for _, n := range names {
					if ns := get(objs[n], "metadata", "namespace"); !strings.HasPrefix(n, "Namespace/") && ns != "gpuprice" {
						t.Errorf("%s: namespace %v", n, ns)
					}
				}
				if !strings.Contains(dsn, "clickhouse.clickhouse.svc") || get(c, "resources", "limits", "memory") != "4Gi" {
					t.Errorf("overlay not applied: dsn %q, memory %v", dsn, get(c, "resources", "limits", "memory"))
				}
			}
		})
	}
}
