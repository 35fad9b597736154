package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/scrapers"
)

// sourceRow is one line of `gpuprice sources`.
type sourceRow struct {
	Name        string       `json:"name"`
	Provider    string       `json:"provider"`
	Tier        string       `json:"tier"`
	Method      string       `json:"method"`
	Pricing     []string     `json:"pricing"`
	Credentials string       `json:"credentials"`
	Schedule    string       `json:"schedule"`
	Enabled     bool         `json:"enabled"`
	Endpoint    string       `json:"endpoint"`
	Description string       `json:"description"`
	LastRun     *schemas.Run `json:"last_run,omitempty"`
}

// shortCredentials keeps what to set, e.g. "RUNPOD_API_KEY (optional)".
func shortCredentials(c string) string {
	if c == "" {
		return "none"
	}
	head, _, _ := strings.Cut(c, "(")
	head = strings.TrimSpace(head)
	if strings.Contains(strings.ToLower(c), "optional") {
		head += " (optional)"
	}
	return head
}

func (a *app) sourcesCmd() *cobra.Command {
	var format string
	cmd := &cobra.Command{
		Use:   "sources",
		Short: "List every source: pricing kinds, method, credentials, schedule, last run",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "table" && format != "json" {
				return fmt.Errorf("--format %q: use table or json", format)
			}
			ctx := cmd.Context()
			last := map[string]schemas.Run{}
			if st, err := a.openStore(ctx); err == nil {
				for _, n := range scrapers.Names() {
					if runs, err := st.Runs(ctx, n, 1); err == nil && len(runs) > 0 {
						last[n] = runs[0]
					}
				}
				st.Close()
			} else {
				a.log.Warn("store not readable: last runs not shown", "error", err.Error())
			}
			providers := a.cfg.ProviderCatalog()
			var rows []sourceRow
			for _, n := range scrapers.Names() {
				info, _, _ := scrapers.Lookup(n)
				sc := a.cfg.Sources[n]
				r := sourceRow{
					Name: n, Provider: info.Provider, Tier: providers.Lookup(info.Provider).Tier, Method: info.Method,
					Pricing: info.Pricing, Credentials: info.Credentials, Schedule: info.Schedule, Enabled: sc.IsEnabled(),
					Endpoint: info.DefaultEndpoint, Description: info.Description,
				}
				if sc.Schedule != "" {
					r.Schedule = sc.Schedule
				}
				if sc.Endpoint != "" {
					r.Endpoint = sc.Endpoint
				}
				if lr, ok := last[n]; ok {
					r.LastRun = &lr
				}
				rows = append(rows, r)
			}
			if format == "json" {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(rows)
			}
			w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "SOURCE\tTIER\tMETHOD\tPRICING\tCREDENTIALS\tSCHEDULE\tENABLED\tLAST RUN")
			for _, r := range rows {
				lr := "never"
				if r.LastRun != nil {
					lr = fmt.Sprintf("%s %s (%d rows)", r.LastRun.FinishedAt.Format(time.RFC3339), r.LastRun.Status, r.LastRun.RowsAccepted)
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%v\t%s\n", r.Name, r.Tier, r.Method,
					strings.Join(r.Pricing, ","), shortCredentials(r.Credentials), r.Schedule, r.Enabled, lr)
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&format, "format", "table", "table or json (json adds endpoints and descriptions)")
	return cmd
}
