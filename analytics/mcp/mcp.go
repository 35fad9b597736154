// Package mcp is gpuprice's Model Context Protocol server: tools an agent calls to
// find offers, read a series, volatility, spreads, the index, $ per 1B training
// tokens, a negotiation's history, the term, break-even and inference answers, the
// interruption risk and the weekly digest.
// Every tool is one computation of analytics/query (the CLI command and the API
// endpoint of the same name), with the CLI's parameters as its arguments, a JSON
// input schema with descriptions, typed structured output ({data, matched, …}, data
// being what `gpuprice <command> --format json` prints) and errors that name the
// wrong argument with what would be accepted. Nothing callable writes, collects or
// reveals configuration. `gpuprice mcp` serves it over stdio, `gpuprice serve` over
// streamable HTTP at /mcp.
package mcp

import (
	"context"
	"io"
	"log/slog"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gpuprice/gpuprice/analytics/query"
	"github.com/gpuprice/gpuprice/schemas"
)

// Options configure a server.
type Options struct {
	// Version is the server's version as it introduces itself ("dev" when empty).
	Version string
	// Caps bound what one call may ask for; the zero value means query.APICaps.
	Caps query.Caps
	// Redact is applied to every answer's JSON (the logs' redaction); nil:
	// URLs' credentials only (schemas.RedactText).
	Redact func(string) string
	// Log receives the errors that are not the caller's (a failed query); nil: none.
	Log *slog.Logger
	// Compute, when set, runs each tool's computation (serve: in one of the slots
	// the API's answers share); nil runs it directly.
	Compute func(ctx context.Context, f func() error) error
	// PublicURL is the web app's root (serve.public_url): the digest's sections link
	// to their charts under it ("": no links).
	PublicURL string
	// HostsChecked says the caller answers only the Host headers it allows (serve's
	// allowed_hosts, against DNS rebinding), so Handler leaves that check to it.
	HostsChecked bool
}

// instructions is what the server tells a client about its tools.
const instructions = `gpuprice records GPU cloud prices (on-demand, spot, reserved; hyperscalers, specialist
clouds, marketplaces) in USD per GPU-hour and answers questions about them. Start with find_offers (names are
resolved as typed: "h100", "H100 SXM", "spot"); series, volatility, spreads, price_index and negotiation_history
read the bars over a window ending at "at" (default now). Every answer's "matched" says what each name resolved
to; an answer with "recorded" read rows of a recorded example (not today's prices: ask with at=2026-11-02).
Every tool only reads.`

// New returns the server with every tool, answering from src (a query.Reader over
// a store, or a query.Client of a running server).
func New(src query.Source, opts Options) *sdk.Server {
	if opts.Version == "" {
		opts.Version = "dev"
	}
	if opts.Caps == (query.Caps{}) {
		opts.Caps = query.APICaps
	}
	if opts.Redact == nil {
		opts.Redact = schemas.RedactText
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	if opts.Compute == nil {
		opts.Compute = func(_ context.Context, f func() error) error { return f() }
	}
	s := sdk.NewServer(&sdk.Implementation{Name: "gpuprice", Title: "gpuprice: GPU cloud prices", Version: opts.Version},
		&sdk.ServerOptions{Instructions: instructions, Capabilities: &sdk.ServerCapabilities{}})
	for _, t := range tools(src, opts) {
		t.add(s, opts)
	}
	return s
}

// ServeStdio serves the tools over newline-delimited JSON-RPC on in and out
// (`gpuprice mcp`: the client's pipes) until in ends or ctx is done.
func ServeStdio(ctx context.Context, src query.Source, opts Options, in io.ReadCloser, out io.WriteCloser) error {
	return New(src, opts).Run(ctx, &sdk.IOTransport{Reader: in, Writer: out})
}

// Handler serves the tools over streamable HTTP (`serve`'s /mcp): stateless (no
// session is kept between requests) with JSON answers.
func Handler(src query.Source, opts Options) http.Handler {
	s := New(src, opts)
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: opts.Log,
			DisableLocalhostProtection: opts.HostsChecked})
}
