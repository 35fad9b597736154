package query

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/analytics"
	"github.com/gpuprice/gpuprice/analytics/alert"
	"github.com/gpuprice/gpuprice/schemas"
)

// Source computes reports: a Reader over a store, or a Client of a running
// server's API (the command line's way in while serve holds the embedded store).
type Source interface {
	Prices(ctx context.Context, q PricesQuery) (Result[[]schemas.Observation], error)
	Series(ctx context.Context, q SeriesQuery) (Result[Series], error)
	Volatility(ctx context.Context, q VolatilityQuery) (Result[Volatility], error)
	Tokens(ctx context.Context, q TokensQuery) (Result[Tokens], error)
	Spreads(ctx context.Context, q SpreadsQuery) (Result[Spreads], error)
	History(ctx context.Context, q HistoryQuery) (Result[analytics.History], error)
	Index(ctx context.Context, q IndexQuery) (Result[[]analytics.IndexPoint], error)
	Runs(ctx context.Context, q RunsQuery) (Result[[]schemas.Run], error)
	Quarantine(ctx context.Context, q QuarantineQuery) (Result[[]schemas.Quarantined], error)
	FX(ctx context.Context, q FXQuery) (Result[[]schemas.FXRate], error)
	GPUs(ctx context.Context, q GPUsQuery) (Result[[]schemas.GPU], error)
	Sources(ctx context.Context, q SourcesQuery) (Result[[]SourceRow], error)
	Alerts(ctx context.Context, q AlertsQuery) (Result[alert.Report], error)
	Terms(ctx context.Context, q TermsQuery) (Result[Terms], error)
	BreakEven(ctx context.Context, q BreakEvenQuery) (Result[BreakEvens], error)
	Inference(ctx context.Context, q InferenceQuery) (Result[Inference], error)
	Risk(ctx context.Context, q RiskQuery) (Result[RiskHistory], error)
	Availability(ctx context.Context, q AvailabilityQuery) (Result[Availability], error)
}

var (
	_ Source = (*Reader)(nil)
	_ Source = (*Client)(nil)
)

// Client asks a running gpuprice server's /api/v1 for reports.
type Client struct {
	Base string // e.g. http://127.0.0.1:8080
	HTTP *http.Client
}

// APIError is an error answer of the API that is not about a parameter.
type APIError struct {
	Status int
	Msg    string
}

func (e *APIError) Error() string { return fmt.Sprintf("server answered %d: %s", e.Status, e.Msg) }

// Get asks path (below /api/v1/) with the parameters and decodes the answer's
// envelope into res.
func (c *Client) Get(ctx context.Context, path string, v url.Values, res any) error {
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 2 * time.Minute}
	}
	u := strings.TrimRight(c.Base, "/") + "/api/v1/" + path
	if len(v) > 0 {
		u += "?" + v.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<30))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var pe ParamError
		if json.Unmarshal(body, &pe) == nil && pe.Param != "" {
			pe.Msg = strings.TrimPrefix(pe.Msg, pe.Param+" ")
			return &pe
		}
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(body, &e) == nil && e.Error != "" {
			return &APIError{Status: resp.StatusCode, Msg: e.Error}
		}
		return &APIError{Status: resp.StatusCode, Msg: strings.TrimSpace(string(body))}
	}
	if err := json.Unmarshal(body, res); err != nil {
		return fmt.Errorf("server's answer to %s: %w", path, err)
	}
	return nil
}

func (c *Client) Prices(ctx context.Context, q PricesQuery) (Result[[]schemas.Observation], error) {
	var r Result[[]schemas.Observation]
	return r, c.Get(ctx, "prices", q.Values(), &r)
}

func (c *Client) Series(ctx context.Context, q SeriesQuery) (Result[Series], error) {
	var r Result[Series]
	return r, c.Get(ctx, "series", q.Values(), &r)
}

func (c *Client) Volatility(ctx context.Context, q VolatilityQuery) (Result[Volatility], error) {
	r := Result[Volatility]{Data: Volatility{By: q.By}}
	return r, c.Get(ctx, "volatility", q.Values(), &r)
}

func (c *Client) Tokens(ctx context.Context, q TokensQuery) (Result[Tokens], error) {
	r := Result[Tokens]{Data: Tokens{HasTokens: q.Tokens > 0}}
	return r, c.Get(ctx, "tokens", q.Values(), &r)
}

func (c *Client) Spreads(ctx context.Context, q SpreadsQuery) (Result[Spreads], error) {
	var r Result[Spreads]
	return r, c.Get(ctx, "spreads", q.Values(), &r)
}

func (c *Client) History(ctx context.Context, q HistoryQuery) (Result[analytics.History], error) {
	var r Result[analytics.History]
	return r, c.Get(ctx, "history", q.Values(), &r)
}

func (c *Client) Index(ctx context.Context, q IndexQuery) (Result[[]analytics.IndexPoint], error) {
	var r Result[[]analytics.IndexPoint]
	return r, c.Get(ctx, "index", q.Values(), &r)
}

// IsParamError reports whether err is about a parameter.
func IsParamError(err error) bool {
	var pe *ParamError
	return errors.As(err, &pe)
}

func (c *Client) Runs(ctx context.Context, q RunsQuery) (Result[[]schemas.Run], error) {
	var r Result[[]schemas.Run]
	return r, c.Get(ctx, "runs", q.Values(), &r)
}

func (c *Client) Quarantine(ctx context.Context, q QuarantineQuery) (Result[[]schemas.Quarantined], error) {
	var r Result[[]schemas.Quarantined]
	return r, c.Get(ctx, "quarantine", q.Values(), &r)
}

func (c *Client) FX(ctx context.Context, q FXQuery) (Result[[]schemas.FXRate], error) {
	var r Result[[]schemas.FXRate]
	return r, c.Get(ctx, "fx", q.Values(), &r)
}

func (c *Client) GPUs(ctx context.Context, q GPUsQuery) (Result[[]schemas.GPU], error) {
	var r Result[[]schemas.GPU]
	return r, c.Get(ctx, "gpus", q.Values(), &r)
}

func (c *Client) Sources(ctx context.Context, q SourcesQuery) (Result[[]SourceRow], error) {
	var r Result[[]SourceRow]
	return r, c.Get(ctx, "sources", nil, &r)
}

func (c *Client) Alerts(ctx context.Context, q AlertsQuery) (Result[alert.Report], error) {
	var r Result[alert.Report]
	return r, c.Get(ctx, "alerts", q.Values(), &r)
}

func (c *Client) Terms(ctx context.Context, q TermsQuery) (Result[Terms], error) {
	var r Result[Terms]
	return r, c.Get(ctx, "terms", q.Values(), &r)
}

func (c *Client) BreakEven(ctx context.Context, q BreakEvenQuery) (Result[BreakEvens], error) {
	var r Result[BreakEvens]
	return r, c.Get(ctx, "breakeven", q.Values(), &r)
}

func (c *Client) Inference(ctx context.Context, q InferenceQuery) (Result[Inference], error) {
	r := Result[Inference]{Data: Inference{Skipped: map[string]int{}}}
	return r, c.Get(ctx, "inference", q.Values(), &r)
}

func (c *Client) Risk(ctx context.Context, q RiskQuery) (Result[RiskHistory], error) {
	r := Result[RiskHistory]{Data: RiskHistory{Changes: []RiskChange{}}}
	return r, c.Get(ctx, "risk", q.Values(), &r)
}

func (c *Client) Availability(ctx context.Context, q AvailabilityQuery) (Result[Availability], error) {
	r := Result[Availability]{Data: Availability{Rows: []analytics.OfferAvailability{}}}
	return r, c.Get(ctx, "availability", q.Values(), &r)
}
