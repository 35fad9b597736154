package secrets

import (
	"context"
	"fmt"
	"log/slog"
)

// Logger returns l with every record passing red first (nil stays nil; a logger
// already redacting is returned as it is).
func Logger(l *slog.Logger, red *Redactor) *slog.Logger {
	if l == nil {
		return nil
	}
	if _, done := l.Handler().(handler); done {
		return l
	}
	return slog.New(handler{l.Handler(), red})
}

// handler masks the environment's secrets in every message and attribute before a
// record reaches the wrapped handler.
type handler struct {
	h   slog.Handler
	red *Redactor
}

func (r handler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, r.red.Redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(r.redactAttr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r handler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = r.redactAttr(a)
	}
	return handler{r.h.WithAttrs(red), r.red}
}

func (r handler) WithGroup(name string) slog.Handler {
	return handler{r.h.WithGroup(name), r.red}
}

func (r handler) redactAttr(a slog.Attr) slog.Attr {
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
