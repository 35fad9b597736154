package cli

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
)

// fxSourceName is the config key (sources.fx) of the ECB reference rates: its
// endpoint and enabled flag work like a price source's.
const fxSourceName = "fx"

// fxLookback is how far back stored rates are read for converting prices.
const fxLookback = 120 * 24 * time.Hour

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
