package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestDeployConfigsAccepted runs `gpuprice config` on the configuration files the
// deployments mount — deploy/compose/gpuprice.yaml with the environment
// docker-compose.yml gives the gpuprice service, deploy/k8s/base/gpuprice.yaml with
// the environment of the Kustomize base — and checks they are accepted, with the
// ClickHouse store and the Alertmanager notifier, and no password printed.
func TestDeployConfigsAccepted(t *testing.T) {
	const password = "pw-deploy-test-7f3a"
	var compose struct {
		Services map[string]struct {
			Environment map[string]string `yaml:"environment"`
			Volumes     []string          `yaml:"volumes"`
		} `yaml:"services"`
	}
	b, err := os.ReadFile("../../docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &compose); err != nil {
		t.Fatal(err)
	}
	svc := compose.Services["gpuprice"]
	composeCfg := ""
	for _, v := range svc.Volumes {
		if src, dst, ok := strings.Cut(v, ":"); ok && strings.HasPrefix(dst, "/etc/gpuprice/gpuprice.yaml") {
			composeCfg = filepath.Join("../..", src)
		}
	}
	if composeCfg == "" {
		t.Fatalf("docker-compose.yml mounts no /etc/gpuprice/gpuprice.yaml: %v", svc.Volumes)
	}
	composeEnv := map[string]string{}
	interp := regexp.MustCompile(`\$\{(\w+)(:\?[^}]*)?\}`)
	for k, v := range svc.Environment {
		composeEnv[k] = interp.ReplaceAllStringFunc(v, func(string) string { return password })
	}

	var kust struct {
		ConfigMapGenerator []struct {
			Name     string   `yaml:"name"`
			Literals []string `yaml:"literals"`
		} `yaml:"configMapGenerator"`
	}
	b, err = os.ReadFile("../../deploy/k8s/base/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &kust); err != nil {
		t.Fatal(err)
	}
	pwFile := filepath.Join(t.TempDir(), "clickhouse-password")
	if err := os.WriteFile(pwFile, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	k8sEnv := map[string]string{}
	for _, g := range kust.ConfigMapGenerator {
		for _, l := range g.Literals {
			k, v, _ := strings.Cut(l, "=")
			if strings.HasSuffix(k, "_FILE") {
				v = pwFile // the Secret's key, mounted as a file
			}
			k8sEnv[k] = v
		}
	}
	if k8sEnv["GPUPRICE_STORE"] == "" || k8sEnv["GPUPRICE_CLICKHOUSE_PASSWORD_FILE"] == "" {
		t.Fatalf("kustomize base env: %v", k8sEnv)
	}

	for _, c := range []struct {
		name, file string
		env        map[string]string
	}{
		{"compose", composeCfg, composeEnv},
		{"k8s", "../../deploy/k8s/base/gpuprice.yaml", k8sEnv},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, k := range []string{"GPUPRICE_STORE", "GPUPRICE_CLICKHOUSE_PASSWORD", "GPUPRICE_CLICKHOUSE_PASSWORD_FILE"} {
				t.Setenv(k, "")
				os.Unsetenv(k)
			}
			for k, v := range c.env {
				t.Setenv(k, v)
			}
			out, code := run(t, "--config", c.file, "config")
			if code != 0 {
				t.Fatalf("gpuprice config rejected %s", c.file)
			}
			if !strings.Contains(out, "clickhouse://gpuprice") || !strings.Contains(out, "kind: alertmanager") ||
				!strings.Contains(out, "kind: spread_shift") {
				t.Errorf("effective configuration lacks the store or the alerts:\n%s", out)
			}
			if strings.Contains(out, password) {
				t.Error("gpuprice config printed the password")
			}
		})
	}
}

// TestDeployProbesAnswer starts `gpuprice serve` and asks it every path a deployment
// probes — the Dockerfile's HEALTHCHECK, the compose health check, the Kubernetes
// probes, Prometheus' metrics_path — each must answer 200.
func TestDeployProbesAnswer(t *testing.T) {
	paths := map[string]string{}
	urlPath := regexp.MustCompile(`http://127\.0\.0\.1:8080(/[a-z0-9/_.-]*)`)
	for _, f := range []string{"../../deploy/Dockerfile", "../../docker-compose.yml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range urlPath.FindAllStringSubmatch(string(b), -1) {
			paths[m[1]] = f
		}
	}
	for f, re := range map[string]*regexp.Regexp{
		"../../deploy/k8s/base/deployment.yaml":  regexp.MustCompile(`httpGet: \{path: (/\S+),`),
		"../../deploy/prometheus/prometheus.yml": regexp.MustCompile(`metrics_path: (/\S+)`),
	} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		ms := re.FindAllStringSubmatch(string(b), -1)
		if len(ms) == 0 {
			t.Fatalf("%s: no probe path found", f)
		}
		for _, m := range ms {
			paths[m[1]] = f
		}
	}
	if len(paths) < 2 {
		t.Fatalf("probe paths %v", paths)
	}

	dir := t.TempDir()
	cfg := filepath.Join(dir, "gpuprice.yaml")
	if err := os.WriteFile(cfg, []byte("data_dir: "+dir+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base, stop := startServe(t, "--config", cfg, "--store", "duckdb://"+filepath.Join(dir, "probe.duckdb"))
	defer stop()
	for p, from := range paths {
		if code, body := get(t, base+p); code != 200 {
			t.Errorf("%s (probed by %s): %d %.200q", p, from, code, body)
		}
	}
}
