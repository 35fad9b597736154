package main

import (
	"strings"
	"testing"
)

// gpus --explain NAME --provider P applies P's rules as collection does and says
// what collection stores; a GPU without a dense figure says so.
func TestGPUsExplainProvider(t *testing.T) {
	cfg := writeConfig(t, "http://127.0.0.1:1")
	out, code := run(t, "--config", cfg, "gpus", "--explain", "H100", "--provider", "ovhcloud", "--sku", "h100-380", "--memory", "80")
	if code != 0 || !strings.Contains(out, "H100 → unknown") || !strings.Contains(out, `stored as gpu "unknown"`) ||
		!strings.Contains(out, "tier specialist") {
		t.Errorf("ovhcloud H100:\n%s", out)
	}
	out, code = run(t, "--config", cfg, "gpus", "--explain", "NVIDIA RTX PRO 6000 Blackwell Server Edition", "--provider", "coreweave")
	if code != 0 || !strings.Contains(out, "→ RTXPRO6000SERVER-PCIE-96GB") || !strings.Contains(out, "no dense figure is known") {
		t.Errorf("RTX PRO 6000:\n%s", out)
	}
	out, code = run(t, "--config", cfg, "gpus", "--explain", "H200", "--provider", "runpod")
	if code != 0 || !strings.Contains(out, "→ H200-SXM-141GB") || !strings.Contains(out, "dense 989.5 TFLOPS") {
		t.Errorf("runpod H200:\n%s", out)
	}
}
