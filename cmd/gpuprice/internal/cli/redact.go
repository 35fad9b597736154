package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/config"
)

// redactHandler masks the environment's secrets (config.Secrets) in every message
// and attribute before a record reaches the wrapped handler.
type redactHandler struct{ h slog.Handler }

func redactLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return nil
	}
	if _, done := l.Handler().(redactHandler); done {
		return l
	}
	return slog.New(redactHandler{l.Handler()})
}

func (r redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, config.Redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = redactAttr(a)
	}
	return redactHandler{r.h.WithAttrs(red)}
}

func (r redactHandler) WithGroup(name string) slog.Handler { return redactHandler{r.h.WithGroup(name)} }

func redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, config.Redact(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, x := range g {
			red[i] = redactAttr(x)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		var s string
		if err, ok := v.Any().(error); ok {
			s = err.Error()
		} else {
			s = fmt.Sprint(v.Any())
		}
		if r := config.Redact(s); r != s {
			return slog.String(a.Key, r)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// redactErr returns err, or an error with the same text, secrets masked, when its text
// holds one (the chain is then lost: the text is all that is printed).
func redactErr(err error) error {
	if err == nil {
		return nil
	}
	if s := config.Redact(err.Error()); s != err.Error() {
		return errors.New(s)
	}
	return err
}
