package main

import (
	"strings"
	"testing"
)

// gpus --explain NAME --provider P applies P's rules as collection does and says
// what collection stores; a GPU without a dense figure says so.
func TestGPUsExplainProvider(t *testing.T) {
	cfg := writeConfig(t, "http://127.0.0.1:1")
	// OVHcloud names the form factor of its H100 flavours (SXM) but not of its H200 or
	// A100: the explanation cites the provider's statement or says why it stays unknown;
	// the A100 80GB, whose figure is the same in either form, is named without one.
	out, code := run(t, "--config", cfg, "gpus", "--explain", "H200", "--provider", "ovhcloud", "--sku", "h200-1920", "--memory", "141")
	if code != 0 || !strings.Contains(out, "H200 → unknown") || !strings.Contains(out, `stored as gpu "unknown"`) ||
		!strings.Contains(out, "tier specialist") || !strings.Contains(out, "public-cloud-roadmap/issues/749") {
		t.Errorf("ovhcloud H200:\n%s", out)
	}
	out, code = run(t, "--config", cfg, "gpus", "--explain", "A100", "--provider", "ovhcloud", "--sku", "a100-180", "--memory", "80")
	if code != 0 || !strings.Contains(out, "A100 → A100-UNSTATED-80GB") || !strings.Contains(out, "public-cloud-roadmap/issues/475") ||
		!strings.Contains(out, "dense 312 TFLOPS") {
		t.Errorf("ovhcloud A100:\n%s", out)
	}
	out, code = run(t, "--config", cfg, "gpus", "--explain", "H100", "--provider", "ovhcloud", "--sku", "h100-380", "--memory", "80")
	if code != 0 || !strings.Contains(out, "H100 → H100-SXM-80GB") || !strings.Contains(out, "public-cloud-roadmap/issues/500") {
		t.Errorf("ovhcloud H100:\n%s", out)
	}
	out, code = run(t, "--config", cfg, "gpus", "--explain", "NVIDIA Tesla P100", "--provider", "oci", "--sku", "VM.GPU2.1", "--memory", "16")
	if code != 0 || !strings.Contains(out, "→ unknown") || !strings.Contains(out, "computeshapes.htm") || !strings.Contains(out, "no form factor") {
		t.Errorf("oci P100:\n%s", out)
	}
	// The SKUs no provider statement places (docs/gpu-catalog.md, "Second search") say
	// that they stay unknown, what the provider does state, and where the search is listed.
	for _, c := range []struct{ name, provider, sku, cites string }{
		{"NVIDIA Tesla V100", "lambda", "gpu_8x_v100_16gb", "lambda.ai/service/gpu-cloud"},
		{"Tesla V100", "ovhcloud", "t1-le-45", "Tesla V100"},
		{"H200", "ovhcloud", "h200-1920", "2x4H200"},
		{"NVIDIA Tesla V100", "oci", "BM.GPU3.8", "computeshapes.htm"},
	} {
		out, code = run(t, "--config", cfg, "gpus", "--explain", c.name, "--provider", c.provider, "--sku", c.sku, "--memory", "16")
		if code != 0 || !strings.Contains(out, "→ unknown") || !strings.Contains(out, "stays unknown") ||
			!strings.Contains(out, c.cites) || !strings.Contains(out, "docs/gpu-catalog.md") || strings.Contains(out, "not determined by the SKU") {
			t.Errorf("%s %s:\n%s", c.provider, c.sku, out)
		}
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
