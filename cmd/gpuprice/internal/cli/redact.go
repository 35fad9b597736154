package cli

import (
	"errors"
	"log/slog"

	"github.com/gpuprice/gpuprice/ingest/secrets"
)

// redactor is the run's one redactor of the environment's secrets: the
// configuration's (built once by config.Load), else, for an error before the
// configuration was read, one built now.
func (a *app) redactor() *secrets.Redactor {
	if a.red == nil {
		a.red = secrets.NewRedactor()
	}
	return a.red
}

// redactLogger returns l with every record passing the app's redactor.
func (a *app) redactLogger(l *slog.Logger) *slog.Logger { return secrets.Logger(l, a.redactor()) }

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
