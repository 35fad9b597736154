package cli

import (
	"net/url"
	"reflect"
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
