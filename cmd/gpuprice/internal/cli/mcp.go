package cli

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/gpuprice/gpuprice/analytics/mcp"
	"github.com/gpuprice/gpuprice/analytics/query"
)

func init() { addCommand((*app).mcpCmd) }

func (a *app) mcpCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "mcp",
		Short: "Serve the read-only MCP tools over stdio, for a coding assistant",
		Long: `mcp serves gpuprice's Model Context Protocol tools over stdin and stdout until stdin
ends: find_offers, series, volatility, spreads, price_index, training_token_cost,
negotiation_history, terms, breakeven, inference_cost and list_gpus, each the
computation of the command of the same name, with its flags as arguments. Nothing
they do writes, collects or shows configuration. serve offers the same at /mcp
(streamable HTTP). Register it with an assistant as the command ` + "`gpuprice mcp`" + `.`,
		Example: `  claude mcp add gpuprice -- gpuprice mcp
  gpuprice --store clickhouse://localhost:9000/gpuprice mcp`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.withReports(cmd, func(src query.Source) error {
				opts := mcp.Options{Version: Version, Redact: a.redactor().Redact, Log: a.log, PublicURL: a.cfg.Serve.PublicURL}
				return mcp.ServeStdio(cmd.Context(), src, opts, io.NopCloser(cmd.InOrStdin()), nopWriteCloser{cmd.OutOrStdout()})
			})
		},
	}
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
