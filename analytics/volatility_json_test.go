package analytics

import (
	"encoding/json"
	"testing"
)

// TestGroupVolatilityJSON pins a group's JSON form (its fields, then the five
// figures, null where no series has them) and that reading it back keeps which
// figures are undefined.
func TestGroupVolatilityJSON(t *testing.T) {
	in := `{"gpu":"H100-SXM-80GB","provider":"lambda","pricing":"on_demand","series":2,"changes":1,"share_below":null,"median_close":2.2,` +
		`"std_log_return":null,"annualised":null,"cv":0.05,"range":null,"max_drawdown":0}`
	var g GroupVolatility
	if err := json.Unmarshal([]byte(in), &g); err != nil {
		t.Fatal(err)
	}
	if g.StdDefined() || !g.CVDefined() || g.RangeDefined() || !g.DrawdownDefined() || g.CV != 0.05 || g.Series != 2 || g.MedianClose != 2.2 {
		t.Errorf("read back: %+v std %v cv %v range %v drawdown %v", g, g.StdDefined(), g.CVDefined(), g.RangeDefined(), g.DrawdownDefined())
	}
	b, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != in {
		t.Errorf("got  %s\nwant %s", b, in)
	}
}
