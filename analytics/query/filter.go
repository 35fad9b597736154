package query

import (
	"context"
	"errors"
	"slices"
	"sort"
	"strings"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// Filter is what a person asked for, as typed: GPU, provider, pricing kind, region
// and tier names that Resolve turns into canonical ones. Provider may name several
// providers separated by commas (aws,lambda).
type Filter struct {
	GPU, Provider, Pricing, Region, Tier string
	// Scope is the price scope compared (spreads, history, index, tokens):
	// "instance" (the default, "") or "gpu_only", GPU-only prices with each other
	// only (schemas.ScopeGPUOnly).
	Scope string
	// Interconnect keeps the offers whose published interconnect between nodes is
	// this one (infiniband, roce, efa, ethernet, nvlink-only, unknown), or any RDMA
	// fabric (rdma: infiniband, roce or efa); prices, tokens and inference read it.
	Interconnect string
}

// Interconnects are the names --interconnect takes.
var Interconnects = []string{schemas.InterconnectInfiniband, schemas.InterconnectRoCE, schemas.InterconnectEFA, "rdma",
	schemas.InterconnectEthernet, schemas.InterconnectNVLinkOnly, schemas.InterconnectUnknown}

func (f *Filter) read(p *params, names ...string) {
	for _, n := range names {
		switch n {
		case "gpu":
			f.GPU = p.str(n)
		case "provider":
			f.Provider = p.str(n)
		case "pricing":
			f.Pricing = p.str(n)
		case "region":
			f.Region = p.str(n)
		case "tier":
			f.Tier = p.str(n)
		case "interconnect":
			f.Interconnect = p.str(n)
		case "scope":
			if f.Scope = p.enum(n, schemas.ScopeInstance, schemas.ScopeInstance,
				schemas.ScopeGPUOnly); f.Scope == schemas.ScopeInstance {
				f.Scope = ""
			}
		}
	}
}

func (f Filter) values() []string {
	return []string{"gpu", f.GPU, "provider", f.Provider, "pricing", f.Pricing, "region", f.Region, "tier", f.Tier,
		"scope", f.Scope, "interconnect", f.Interconnect}
}

// Selection is a resolved Filter: the store filter of the single-valued parts, and
// the sets of names to keep where a name matched several (a GPU family).
type Selection struct {
	store.Filter
	Matches []schemas.Match
	// Scope is the Filter's: "" (instance prices) or "gpu_only".
	Scope     string
	gpus      []string
	pricing   []string
	regions   []string
	providers []string
	// interconnects are the interconnects kept (nil: any); only observations
	// carry one, so bars are not filtered by it.
	interconnects []string
}

// Keep reports whether a series of this GPU, pricing kind and region is selected
// (the store filter did the rest).
func (s Selection) Keep(gpu, pricing, region string) bool {
	return (s.gpus == nil || slices.Contains(s.gpus, gpu)) &&
		(s.pricing == nil || slices.Contains(s.pricing, pricing)) &&
		(s.regions == nil || slices.Contains(s.regions, region))
}

// KeepObservations filters rows by Keep, keeping their order.
func (s Selection) KeepObservations(rows []schemas.Observation) []schemas.Observation {
	if s.KeepsAll() {
		return rows
	}
	out := rows[:0:0]
	for _, o := range rows {
		if s.Keep(o.GPU, o.Pricing, o.Region) && s.keepProvider(o.Provider) &&
			(s.interconnects == nil || slices.Contains(s.interconnects, o.Interconnect)) {
			out = append(out, o)
		}
	}
	return out
}

// KeepsAll reports whether Keep keeps every row the store's filter selects (no
// list of GPUs, pricing kinds or regions to apply after reading).
func (s Selection) KeepsAll() bool {
	return s.gpus == nil && s.pricing == nil && s.regions == nil && s.providers == nil && s.interconnects == nil
}

func (s Selection) keepProvider(p string) bool {
	return s.providers == nil || slices.Contains(s.providers, p)
}

// Providers are the providers selected, nil when any.
func (s Selection) Providers() []string {
	if s.Provider != "" {
		return []string{s.Provider}
	}
	return s.providers
}

// KeepBars filters bars by Keep, keeping their order.
func (s Selection) KeepBars(bars []store.Bar) []store.Bar {
	if s.KeepsAll() {
		return bars
	}
	out := bars[:0:0]
	for _, b := range bars {
		if s.Keep(b.GPU, b.Pricing, b.Region) && s.keepProvider(b.Provider) {
			out = append(out, b)
		}
	}
	return out
}

// GPUs are the GPUs selected, nil when any.
func (s Selection) GPUs() []string {
	if s.GPU != "" {
		return []string{s.GPU}
	}
	return s.gpus
}

// Resolve turns names as typed into canonical ones: GPUs by the catalog (a family
// selects every variant), providers among the known ones, pricing kinds, tiers, and
// regions among those stored (of the provider when one is given). A name that
// matches nothing is a *ParamError naming the parameter, with the nearest names.
func (r *Reader) Resolve(ctx context.Context, f Filter) (Selection, error) {
	sel := Selection{Scope: f.Scope}
	wrap := paramOf
	if f.GPU != "" {
		m, err := r.Catalog.ResolveGPU(f.GPU)
		if err != nil {
			return sel, wrap("gpu", err)
		}
		sel.Matches = append(sel.Matches, m)
		if len(m.Names) == 1 {
			sel.GPU = m.Names[0]
		} else {
			sel.gpus = m.Names
		}
	}
	if f.Provider != "" {
		var names []string
		for _, name := range strings.Split(f.Provider, ",") {
			if name = strings.TrimSpace(name); name == "" {
				continue
			}
			m, err := schemas.ResolveName("provider", name, r.Providers)
			if err != nil {
				return sel, wrap("provider", err)
			}
			sel.Matches = append(sel.Matches, m)
			if !slices.Contains(names, m.Names[0]) {
				names = append(names, m.Names[0]) // provider names differ in more than case
			}
		}
		if len(names) == 1 {
			sel.Provider = names[0]
		} else if len(names) > 1 {
			sel.providers = names
		}
	}
	if f.Pricing != "" {
		m, err := schemas.ResolvePricing(f.Pricing)
		if err != nil {
			return sel, wrap("pricing", err)
		}
		sel.Matches = append(sel.Matches, m)
		if len(m.Names) == 1 {
			sel.Pricing = m.Names[0]
		} else {
			sel.pricing = m.Names
		}
	}
	if f.Tier != "" {
		m, err := schemas.ResolveName("tier", f.Tier, []string{schemas.TierHyperscaler, schemas.TierSpecialist,
			schemas.TierMarketplace})
		if err != nil {
			return sel, wrap("tier", err)
		}
		sel.Matches = append(sel.Matches, m)
		sel.Tier = m.Names[0]
	}
	if f.Interconnect != "" {
		m, err := schemas.ResolveName("interconnect", f.Interconnect, Interconnects)
		if err != nil {
			return sel, wrap("interconnect", err)
		}
		sel.Matches = append(sel.Matches, m)
		if sel.interconnects = m.Names; m.Names[0] == "rdma" {
			sel.interconnects = []string{schemas.InterconnectInfiniband, schemas.InterconnectRoCE, schemas.InterconnectEFA}
		}
	}
	if f.Region != "" {
		known, err := r.regions(ctx, sel.Provider)
		if err != nil {
			return sel, err
		}
		m, err := schemas.ResolveName("region", f.Region, known)
		if err != nil {
			return sel, wrap("region", err)
		}
		sel.Matches = append(sel.Matches, m)
		if len(m.Names) == 1 {
			sel.Region = m.Names[0]
		} else {
			sel.regions = m.Names
		}
	}
	return sel, nil
}

// regions lists the regions of the stored series (of one provider when given).
func (r *Reader) regions(ctx context.Context, provider string) ([]string, error) {
	rows, err := r.latest(ctx, store.Filter{Provider: provider})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, o := range rows {
		if !seen[o.Region] {
			seen[o.Region] = true
			out = append(out, o.Region)
		}
	}
	sort.Strings(out)
	return out, nil
}

func asNoMatch(err error, nm **schemas.NoMatchError) bool { return errors.As(err, nm) }
