package schemas

import "sort"

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

// DefaultProviders is the market as MARKET.md describes it; config may override it.
func DefaultProviders() ProviderCatalog {
	return ProviderCatalog{
		"aws":       {"aws", TierHyperscaler, InterconnectEFA},
		"gcp":       {"gcp", TierHyperscaler, InterconnectRoCE},
		"azure":     {"azure", TierHyperscaler, InterconnectInfiniband},
		"oci":       {"oci", TierHyperscaler, InterconnectRoCE},
		"coreweave": {"coreweave", TierSpecialist, InterconnectInfiniband},
		"lambda":    {"lambda", TierSpecialist, InterconnectInfiniband},
		"gmi":       {"gmi", TierSpecialist, InterconnectInfiniband},
		"crusoe":    {"crusoe", TierSpecialist, InterconnectInfiniband},
		"together":  {"together", TierSpecialist, InterconnectInfiniband},
		"ovhcloud":  {"ovhcloud", TierSpecialist, InterconnectEthernet},
		"runpod":    {"runpod", TierMarketplace, InterconnectEthernet},
		"vast":      {"vast", TierMarketplace, InterconnectEthernet},
	}
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
