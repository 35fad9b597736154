package schemas_test

import (
	"testing"

	"github.com/gpuprice/gpuprice/schemas"
	// The providers' facts (tiers, naming rules) live in their source packages and
	// register themselves: the canonicaliser's tests run with every one of them.
	_ "github.com/gpuprice/gpuprice/scrapers/all"
)

func TestRegisteredProviders(t *testing.T) {
	cat := schemas.DefaultProviders()
	for name, want := range map[string]string{
		"aws": schemas.TierHyperscaler, "gcp": schemas.TierHyperscaler, "azure": schemas.TierHyperscaler,
		"oci": schemas.TierHyperscaler, "coreweave": schemas.TierSpecialist, "lambda": schemas.TierSpecialist,
		"gmi": schemas.TierSpecialist, "crusoe": schemas.TierSpecialist, "together": schemas.TierSpecialist,
		"ovhcloud": schemas.TierSpecialist, "runpod": schemas.TierMarketplace, "vast": schemas.TierMarketplace,
	} {
		if p := cat.Lookup(name); p.Tier != want || !schemas.ValidInterconnect(p.Interconnect) || p.Interconnect == schemas.InterconnectUnknown {
			t.Errorf("%s: %+v, want tier %s and a known interconnect", name, p, want)
		}
	}
	if p := cat.Lookup("nobody"); p.Tier != schemas.TierUnknown || p.Interconnect != schemas.InterconnectUnknown {
		t.Errorf("unknown provider: %+v", p)
	}
	// DefaultProviders hands out a copy: editing it changes nothing registered.
	cat["aws"] = schemas.Provider{Name: "aws", Tier: schemas.TierMarketplace}
	if schemas.DefaultProviders()["aws"].Tier != schemas.TierHyperscaler {
		t.Error("DefaultProviders returned the registry itself")
	}
}

func TestRegisterProviderRefusesBadFacts(t *testing.T) {
	for name, f := range map[string]func(){
		"empty name": func() { schemas.RegisterProvider(schemas.Provider{Tier: schemas.TierSpecialist}, schemas.Naming{}) },
		"bad tier": func() {
			schemas.RegisterProvider(schemas.Provider{Name: "x-bad-tier", Tier: "cheap"}, schemas.Naming{})
		},
		"bad interconnect": func() {
			schemas.RegisterProvider(schemas.Provider{Name: "x-bad-ic", Tier: schemas.TierSpecialist, Interconnect: "smoke"}, schemas.Naming{})
		},
		"different facts": func() {
			schemas.RegisterProvider(schemas.Provider{Name: "aws", Tier: schemas.TierSpecialist}, schemas.Naming{})
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: RegisterProvider did not panic", name)
				}
			}()
			f()
		}()
	}
}
