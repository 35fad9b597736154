package cli

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers/fx"
	"github.com/gpuprice/gpuprice/store"
)

// fxSourceName is the config key (sources.fx) of the ECB reference rates: its
// endpoint and enabled flag work like a price source's.
const fxSourceName = "fx"

// fxLookback is how far back stored rates are read for converting prices.
const fxLookback = 120 * 24 * time.Hour

// loadFX refreshes the ECB reference rates into the store (unless sources.fx is
// disabled) and returns the converter ingest uses: the stored ECB rates, then the
// static rates of the config. A failed refresh is logged, not fatal: the stored
// rates still serve, and a price with no rate goes to quarantine.
func (a *app) loadFX(ctx context.Context, st store.Store) ingest.FX {
	sc := a.cfg.Sources[fxSourceName]
	if sc.IsEnabled() {
		if n, err := a.refreshFX(ctx, st, sc.Endpoint); err != nil {
			a.log.Warn("ECB reference rates not refreshed; using stored and static rates", "error", err.Error())
		} else {
			a.log.Debug("ECB reference rates stored", "rates", n)
		}
	}
	chain := ingest.FXChain{}
	stored, err := st.FXRates(ctx, time.Now().Add(-fxLookback))
	if err != nil {
		a.log.Warn("stored FX rates not readable", "error", err.Error())
	} else if len(stored) > 0 {
		rates := make([]fx.Rate, 0, len(stored))
		for _, r := range stored {
			rates = append(rates, fx.Rate{Date: r.Date, Currency: r.Currency, USDPerUnit: r.USDPerUnit})
		}
		chain = append(chain, fx.NewTable(rates))
	}
	if len(a.cfg.FX) > 0 {
		chain = append(chain, ingest.StaticFX(a.cfg.FX))
	}
	return chain
}

func (a *app) refreshFX(ctx context.Context, st store.Store, endpoint string) (int, error) {
	if endpoint == "" {
		endpoint = fx.History90Endpoint
	}
	rates, err := fx.Fetch(ctx, a.client(), endpoint)
	if err != nil {
		return 0, err
	}
	out := make([]schemas.FXRate, 0, len(rates))
	for _, r := range rates {
		out = append(out, schemas.FXRate{Date: r.Date, Currency: r.Currency, USDPerUnit: r.USDPerUnit, Source: "ecb"})
	}
	if err := st.WriteFXRates(ctx, out); err != nil {
		return 0, fmt.Errorf("storing FX rates: %w", err)
	}
	return len(out), nil
}

func init() { addCommand((*app).fxCmd) }

func (a *app) fxCmd() *cobra.Command {
	var currency string
	var days int
	cmd := &cobra.Command{
		Use:   "fx",
		Short: "Show the stored FX reference rates (USD per unit) used to convert prices",
		Long: `fx lists the ECB daily reference rates gpuprice stored (refreshed by every
collect unless sources.fx.enabled is false), as US dollars per unit of each currency.
Every converted observation keeps the rate it used in fx_rate.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, err := a.openStore(cmd.Context())
			if err != nil {
				return err
			}
			defer st.Close()
			since := time.Time{}
			if days > 0 {
				since = time.Now().AddDate(0, 0, -days)
			}
			rates, err := st.FXRates(cmd.Context(), since)
			if err != nil {
				return err
			}
			w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "DATE\tCURRENCY\tUSD PER UNIT\tSOURCE")
			for _, r := range rates {
				if currency != "" && !strings.EqualFold(r.Currency, currency) {
					continue
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.Date.Format("2006-01-02"), r.Currency, fnum(r.USDPerUnit), r.Source)
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&currency, "currency", "", "only this ISO 4217 currency, e.g. EUR")
	cmd.Flags().IntVar(&days, "days", 0, "only the last N days (0: all)")
	return cmd
}

// lazyFX loads the converter (loadFX: an ECB refresh, then the stored rates) only when
// a price in another currency first needs it, so that an import of USD prices makes
// no request to the ECB.
type lazyFX struct {
	once sync.Once
	load func() ingest.FX
	fx   ingest.FX
}

func (l *lazyFX) Rate(ctx context.Context, currency string, at time.Time) (float64, error) {
	l.once.Do(func() { l.fx = l.load() })
	return l.fx.Rate(ctx, currency, at)
}

// loadFXLazily is loadFX deferred to the first non-USD price.
func (a *app) loadFXLazily(ctx context.Context, st store.Store) ingest.FX {
	return &lazyFX{load: func() ingest.FX { return a.loadFX(ctx, st) }}
}
