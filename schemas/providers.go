package schemas

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Tiers of the market.
const (
	TierHyperscaler = "hyperscaler"
	TierSpecialist  = "specialist"
	TierMarketplace = "marketplace"
	TierUnknown     = "unknown"
)

// Provider is one entry of the provider catalog.
type Provider struct {
	Name         string `json:"name" yaml:"name"`
	Tier         string `json:"tier" yaml:"tier"`
	Interconnect string `json:"interconnect" yaml:"interconnect"` // default for its multi-GPU SKUs
}

// ProviderCatalog maps a provider name to its tier and default interconnect.
type ProviderCatalog map[string]Provider

// Naming is what the canonicaliser must know about one provider's GPU names that the
// names themselves do not say (see Catalog.Explain): the SKU rules of the provider's
// instance types or shapes, and the variants the provider is assumed to sell. The
// provider's source package declares it and registers it with RegisterProvider (through
// scrapers.Register); schemas holds only the mechanism.
type Naming struct {
	// Normalize prepares a SKU or a name before Rules are matched ("" matches no rule);
	// nil means lower case and trimmed.
	Normalize func(string) string
	// Rules map a normalised SKU or name to a catalog id (or UnknownGPU: a GPU the
	// catalog lacks, or one the SKU does not pin down). The first matching rule wins.
	Rules []SKURule
	// Assumptions, by catalog model key ("h100"), say which form factor or memory the
	// provider sells when its name leaves several catalog GPUs.
	Assumptions map[string]Assumption
	// Interconnect, when set, is the interconnect of a SKU (with its GPU count) when
	// the provider's default does not hold for every multi-GPU SKU (AWS: EFA only on
	// the sizes it lists); it never returns "".
	Interconnect func(sku string, gpuCount float64) string
}

// SKURule maps a normalised SKU or name matching Pattern to a catalog id.
type SKURule struct {
	Pattern *regexp.Regexp
	ID      string // catalog id, or UnknownGPU
	Why     string // reason given by Explain; "" means "<provider> rule <pattern>"
}

// Rule returns a SKURule; it panics when expr does not compile (rules are package-level
// declarations).
func Rule(expr, id string) SKURule { return SKURule{Pattern: regexp.MustCompile(expr), ID: id} }

// SourcedRule is a Rule whose reason, given by Explain, names the provider's statement
// it rests on (or, for UnknownGPU, what the provider leaves unsaid and what was searched).
func SourcedRule(expr, id, why string) SKURule {
	r := Rule(expr, id)
	r.Why = why
	return r
}

// Assumption is what a provider's GPU names leave unsaid because the provider sells
// only one variant: a form factor, a memory size (GB), and the reason, with its source.
type Assumption struct {
	Form     string
	MemoryGB float64
	Why      string
}

// registered is one provider as its source registered it.
type registered struct {
	provider Provider
	naming   Naming
}

var (
	regMu sync.Mutex
	// regSnap is an immutable snapshot, replaced on every registration, so that the
	// canonicaliser reads it without locking.
	regSnap atomic.Pointer[[]registered]
)

// RegisterProvider adds a provider's facts: its tier, default interconnect and the
// naming rules the canonicaliser applies to its rows. Source packages call it from
// init through scrapers.Register. Registering a provider twice with different facts
// panics; the same facts again are accepted (a provider with several sources).
func RegisterProvider(p Provider, n Naming) {
	if p.Name == "" {
		panic("schemas: RegisterProvider with an empty name")
	}
	if !ValidTier(p.Tier) {
		panic(fmt.Sprintf("schemas: provider %s: tier %q is not hyperscaler, specialist or marketplace", p.Name, p.Tier))
	}
	if p.Interconnect == "" {
		p.Interconnect = InterconnectUnknown
	}
	if !ValidInterconnect(p.Interconnect) {
		panic(fmt.Sprintf("schemas: provider %s: interconnect %q is not known", p.Name, p.Interconnect))
	}
	if n.Normalize == nil {
		n.Normalize = func(s string) string { return strings.ToLower(strings.TrimSpace(s)) }
	}
	regMu.Lock()
	defer regMu.Unlock()
	var cur []registered
	if s := regSnap.Load(); s != nil {
		cur = *s
	}
	for _, r := range cur {
		if r.provider.Name == p.Name {
			if r.provider != p || len(n.Rules) > 0 || len(n.Assumptions) > 0 {
				panic("schemas: provider " + p.Name + " registered twice with different facts")
			}
			return
		}
	}
	next := append(append([]registered(nil), cur...), registered{p, n})
	sort.Slice(next, func(i, j int) bool { return next[i].provider.Name < next[j].provider.Name })
	regSnap.Store(&next)
}

func registeredProviders() []registered {
	if s := regSnap.Load(); s != nil {
		return *s
	}
	return nil
}

func namingOf(provider string) (Naming, bool) {
	for _, r := range registeredProviders() {
		if r.provider.Name == provider {
			return r.naming, true
		}
	}
	return Naming{}, false
}

// DefaultProviders is the catalog of every registered provider (each source package
// registers its own: import scrapers/all for the whole market); config may override it.
func DefaultProviders() ProviderCatalog {
	out := ProviderCatalog{}
	for _, r := range registeredProviders() {
		out[r.provider.Name] = r.provider
	}
	return out
}

// ValidTier reports whether t is a known tier.
func ValidTier(t string) bool {
	return t == TierHyperscaler || t == TierSpecialist || t == TierMarketplace
}

// ValidInterconnect reports whether s is a known interconnect.
func ValidInterconnect(s string) bool {
	switch s {
	case InterconnectInfiniband, InterconnectRoCE, InterconnectEFA, InterconnectEthernet,
		InterconnectNVLinkOnly, InterconnectUnknown:
		return true
	}
	return false
}

// Lookup returns the provider entry, or an entry of unknown tier and interconnect.
func (c ProviderCatalog) Lookup(name string) Provider {
	if p, ok := c[name]; ok {
		return p
	}
	return Provider{Name: name, Tier: TierUnknown, Interconnect: InterconnectUnknown}
}

// Names returns the provider names, sorted.
func (c ProviderCatalog) Names() []string {
	out := make([]string, 0, len(c))
	for n := range c {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// SKUInterconnect is the interconnect of one SKU of provider as the provider's
// registered Naming.Interconnect says it ("" when the provider registered none: its
// default interconnect holds for every multi-GPU SKU).
func SKUInterconnect(provider, sku string, gpuCount float64) string {
	n, ok := namingOf(provider)
	if !ok || n.Interconnect == nil {
		return ""
	}
	return n.Interconnect(sku, gpuCount)
}
