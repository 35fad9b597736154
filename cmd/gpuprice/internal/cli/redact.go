package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/gpuprice/gpuprice/cmd/gpuprice/internal/config"
)

// redactor is the run's one redactor of the environment's secrets: the
// configuration's (built once by config.Load), else, for an error before the
// configuration was read, one built now.
func (a *app) redactor() *config.Redactor {
	if a.red == nil {
		a.red = config.NewRedactor()
	}
	return a.red
}

// redactHandler masks the environment's secrets in every message and attribute before
// a record reaches the wrapped handler.
type redactHandler struct {
	h   slog.Handler
	red *config.Redactor
}

// redactLogger returns l with every record passing the app's redactor.
func (a *app) redactLogger(l *slog.Logger) *slog.Logger {
	if l == nil {
		return nil
	}
	if _, done := l.Handler().(redactHandler); done {
		return l
	}
	return slog.New(redactHandler{l.Handler(), a.redactor()})
}

func (r redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, r.red.Redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(r.redactAttr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = r.redactAttr(a)
	}
	return redactHandler{r.h.WithAttrs(red), r.red}
}

func (r redactHandler) WithGroup(name string) slog.Handler {
	return redactHandler{r.h.WithGroup(name), r.red}
}

func (r redactHandler) redactAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, r.red.Redact(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, x := range g {
			red[i] = r.redactAttr(x)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		var s string
		if err, ok := v.Any().(error); ok {
			s = err.Error()
		} else {
			s = fmt.Sprint(v.Any())
		}
		if red := r.red.Redact(s); red != s {
			return slog.String(a.Key, red)
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

// redactErr returns err, or an error with the same text, secrets masked, when its text
// holds one (the chain is then lost: the text is all that is printed).
func (a *app) redactErr(err error) error {
	if err == nil {
		return nil
	}
	if s := a.redactor().Redact(err.Error()); s != err.Error() {
		return errors.New(s)
	}
	return err
}
