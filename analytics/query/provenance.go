package query

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/analytics/alert"
	"github.com/gpuprice/gpuprice/schemas"
)

// RecordedNote is what an answer with rows of a recorded example says beside its
// figures (rec: Result.Recorded), wherever it is shown: "" when there are none.
func RecordedNote(rec map[string]int) string {
	if len(rec) == 0 {
		return ""
	}
	names := make([]string, 0, len(rec))
	n := 0
	for p, c := range rec {
		names = append(names, p)
		n += c
	}
	sort.Strings(names)
	return fmt.Sprintf("recorded example: %d series of %s come from a recorded archive (gpuprice reparse), "+
		"kept at the time they were recorded: they are not today's prices, and neither is what is computed from them",
		n, strings.Join(names, ", "))
}

// Noting is src calling note with the provenance of every answer it gives that
// read rows of a recorded example (Result.Recorded): the command line says it
// once after the output, by row, whatever ran since.
// A method Noting does not override passes through unchanged.
func Noting(src Source, note func(map[string]int)) Source { return &noting{src, note} }

type noting struct {
	Source
	note func(map[string]int)
}

func noted[T any](n *noting, res Result[T], err error) (Result[T], error) {
	if err == nil && len(res.Recorded) > 0 {
		n.note(res.Recorded)
	}
	return res, err
}

func (n *noting) Prices(ctx context.Context, q PricesQuery) (Result[[]schemas.Observation], error) {
	res, err := n.Source.Prices(ctx, q)
	return noted(n, res, err)
}

func (n *noting) Series(ctx context.Context, q SeriesQuery) (Result[Series], error) {
	res, err := n.Source.Series(ctx, q)
	return noted(n, res, err)
}

func (n *noting) Volatility(ctx context.Context, q VolatilityQuery) (Result[Volatility], error) {
	res, err := n.Source.Volatility(ctx, q)
	return noted(n, res, err)
}

func (n *noting) Tokens(ctx context.Context, q TokensQuery) (Result[Tokens], error) {
	res, err := n.Source.Tokens(ctx, q)
	return noted(n, res, err)
}

func (n *noting) Spreads(ctx context.Context, q SpreadsQuery) (Result[Spreads], error) {
	res, err := n.Source.Spreads(ctx, q)
	return noted(n, res, err)
}

func (n *noting) History(ctx context.Context, q HistoryQuery) (Result[analytics.History], error) {
	res, err := n.Source.History(ctx, q)
	return noted(n, res, err)
}

func (n *noting) Index(ctx context.Context, q IndexQuery) (Result[[]analytics.IndexPoint], error) {
	res, err := n.Source.Index(ctx, q)
	return noted(n, res, err)
}

func (n *noting) Sources(ctx context.Context, q SourcesQuery) (Result[[]SourceRow], error) {
	res, err := n.Source.Sources(ctx, q)
	return noted(n, res, err)
}

func (n *noting) Terms(ctx context.Context, q TermsQuery) (Result[Terms], error) {
	res, err := n.Source.Terms(ctx, q)
	return noted(n, res, err)
}

func (n *noting) BreakEven(ctx context.Context, q BreakEvenQuery) (Result[BreakEvens], error) {
	res, err := n.Source.BreakEven(ctx, q)
	return noted(n, res, err)
}

func (n *noting) Inference(ctx context.Context, q InferenceQuery) (Result[Inference], error) {
	res, err := n.Source.Inference(ctx, q)
	return noted(n, res, err)
}

func (n *noting) Alerts(ctx context.Context, q AlertsQuery) (Result[alert.Report], error) {
	res, err := n.Source.Alerts(ctx, q)
	return noted(n, res, err)
}

// Unwrap is the Source a Noting wraps (src itself otherwise).
func Unwrap(src Source) Source {
	if n, ok := src.(*noting); ok {
		return n.Source
	}
	return src
}
