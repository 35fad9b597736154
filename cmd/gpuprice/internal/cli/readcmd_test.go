package cli

import (
	"bytes"
	"context"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestParamsSendWhatIsSet: a flag is a parameter unless its value is the zero one
// (a default other than that is sent as if typed); a Count is sent even when 0, a
// Bool only as "true".
func TestParamsSendWhatIsSet(t *testing.T) {
	for _, c := range []struct {
		args []string
		want url.Values
	}{
		{nil, url.Values{"since": {"90d"}, "limit": {"20"}}},
		{[]string{"--since", "", "--limit", "0", "--changes=false", "--below", "0", "--batch", "0"},
			url.Values{"limit": {"0"}}},
		{[]string{"--gpu", "h100", "--changes", "--below", "2.5", "--batch", "0x10"},
			url.Values{"gpu": {"h100"}, "since": {"90d"}, "limit": {"20"}, "changes": {"true"}, "below": {"2.5"},
				"batch": {"16"}}},
	} {
		cmd := &cobra.Command{Use: "x"}
		p := newParams(cmd)
		p.String("gpu", "", "GPU")
		p.String("since", "90d", "window")
		p.Count("limit", 20, "at most this many")
		p.Int("batch", 0, "sequences")
		p.Float("below", 0, "price")
		p.Bool("changes", "only the moves")
		if err := p.fl.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		if got := p.values(); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%q: %v, want %v", c.args, got, c.want)
		}
	}
}

// TestReadCommandsRefuseUnknownFormat: every read command whose --format is
// formatFlag's refuses an unknown format as a usage error, with the formats it
// takes, before it opens a store (the data directory here holds none).
func TestReadCommandsRefuseUnknownFormat(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "gpuprice.yaml")
	if err := os.WriteFile(cfg, []byte("data_dir: "+filepath.Dir(cfg)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"prices"}, {"volatility"}, {"spreads"}, {"history", "--gpu", "h100"}, {"index"},
		{"tokens", "--params", "7B"}, {"inference", "--params", "70B"}, {"terms", "--gpu", "h100"},
		{"breakeven", "--gpu", "h100"}, {"risk"}, {"availability"}, {"runs"}, {"quarantine"}, {"fx"},
		{"series", "--provider", "aws", "--sku", "p5.48xlarge", "--pricing", "spot"}} {
		var out, errb bytes.Buffer
		code := Main(context.Background(), append([]string{"--config", cfg}, append(args, "--format", "xml")...),
			&out, &errb)
		if code != ExitUsage || !strings.Contains(errb.String(), `--format "xml": use table, json, csv, markdown`) {
			t.Errorf("%v --format xml: exit %d, want %d\n%s", args, code, ExitUsage, errb.String())
		}
	}
}
