package query

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// RiskQuery selects the interruption history `gpuprice risk` shows.
type RiskQuery struct {
	Provider, SKU, Region string
	Since, Until          time.Time
	// ChangesOnly keeps only the moves between bands, not each series' first band.
	ChangesOnly bool
}

// RiskHistory is the interruption band history of the series a RiskQuery selects:
// each series' first band and every change after it, with the rate each band is
// read as (docs/risk.md).
type RiskHistory struct {
	Changes []RiskChange `json:"changes"`
}

// RiskChange is a band change with the rate of the band moved to.
type RiskChange struct {
	analytics.BandChange
	// RatePerHour is λ of the band moved to (0 when the band is not one gpuprice
	// maps: a provider without a mapping).
	RatePerHour float64 `json:"rate_per_hour"`
}

// Risk reads the interruption signals q selects from st and returns their band
// history.
func Risk(ctx context.Context, st store.Store, q RiskQuery) (RiskHistory, error) {
	sg, ok := st.(store.Signals)
	if !ok {
		return RiskHistory{}, fmt.Errorf("query: risk: %T keeps no signals", st)
	}
	sigs, err := sg.Signals(ctx, store.SignalQuery{Provider: q.Provider, SKU: q.SKU, Region: q.Region,
		Kind: schemas.SignalInterruption, Since: q.Since, Until: q.Until})
	if err != nil {
		return RiskHistory{}, err
	}
	out := RiskHistory{Changes: []RiskChange{}}
	for _, c := range analytics.BandChanges(sigs) {
		if q.ChangesOnly && c.Rise == 0 {
			continue
		}
		rc := RiskChange{BandChange: c}
		if b, ok := analytics.AWSBand(int(c.To)); ok && c.Provider == "aws" && b.Label == c.ToLabel {
			rc.RatePerHour = b.Rate()
		}
		out.Changes = append(out.Changes, rc)
	}
	return out, nil
}

// Table is the history as a table.
func (r RiskHistory) Table() ([]string, [][]string) {
	header := []string{"provider", "sku", "region", "at", "from", "to", "move", "rate_per_hour"}
	rows := make([][]string, 0, len(r.Changes))
	for _, c := range r.Changes {
		move := "first"
		switch c.Rise {
		case 1:
			move = "up"
		case -1:
			move = "down"
		}
		rows = append(rows, []string{c.Provider, c.SKU, c.Region, c.At.UTC().Format(time.RFC3339), c.FromLabel,
			c.ToLabel, move, strconv.FormatFloat(c.RatePerHour, 'g', 6, 64)})
	}
	return header, rows
}
