package pageutil

import (
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// CapacityOptions are the options of a page source that also reads a capacity API
// (Lambda, Crusoe): its one option replaces the API's URL.
type CapacityOptions struct {
	// CapacityEndpoint replaces the capacity API's URL (a test server, a proxy).
	CapacityEndpoint string `json:"capacity_endpoint"`
}

// NewWithCapacity builds p's source from cfg for a source whose one option,
// capacity_endpoint, replaces the capacity API's URL def (https, or a loopback test
// server: credentials travel to it). It returns the page's source and the capacity
// URL to ask.
func (p Page) NewWithCapacity(cfg scrapers.Config, def string) (scrapers.Source, string, error) {
	var o CapacityOptions
	if err := cfg.DecodeOptions(&o); err != nil {
		return nil, "", err
	}
	if err := scrapers.SecretEndpoint(p.Name, "capacity_endpoint", o.CapacityEndpoint); err != nil {
		return nil, "", err
	}
	pcfg := cfg
	pcfg.Options = nil // the page takes none
	src, err := p.New(pcfg)
	if err != nil {
		return nil, "", err
	}
	if o.CapacityEndpoint != "" {
		def = o.CapacityEndpoint
	}
	return src, def, nil
}

// teeRows passes every row to e and keeps a copy in rows.
type teeRows struct {
	e    scrapers.Emitter
	rows *[]schemas.Observation
}

// Emit implements scrapers.Emitter.
func (t teeRows) Emit(o schemas.Observation) {
	*t.rows = append(*t.rows, o)
	t.e.Emit(o)
}

// teeRejecter is teeRows for an emitter that quarantines: unreadable rows still reach
// its quarantine (an emitter that cannot gets a teeRows, which cannot either, so the
// page's ErrUnquarantined is kept).
type teeRejecter struct{ teeRows }

// Reject implements scrapers.Rejecter.
func (t teeRejecter) Reject(raw, reason string) { scrapers.Reject(t.e, raw, reason) }

// Tee wraps e so that every row emitted through it is also kept in rows (a capacity
// API's signals are matched to the page's rows of the same run); it quarantines
// when e does.
func Tee(e scrapers.Emitter, rows *[]schemas.Observation) scrapers.Emitter {
	t := teeRows{e: e, rows: rows}
	if _, ok := e.(scrapers.Rejecter); ok {
		return teeRejecter{t}
	}
	return t
}
