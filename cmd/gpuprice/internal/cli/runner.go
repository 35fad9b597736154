package cli

import (
	"context"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/schemas"
	"github.com/gpuprice/gpuprice/store"
)

// runner is the pipeline every command that writes prices goes through (collect,
// import, reparse, backfill, spool replay, serve's scheduled runs), configured from
// the config file: the spool, the GPU catalog and provider catalog, the gates, ECB
// rates (unless sources.fx is disabled) then the static ones, batching, the source
// timeout, and the secrets masked in all that is stored and logged.
func (a *app) runner(st store.Store) (*ingest.Runner, error) {
	cat, err := schemas.LoadCatalog()
	if err != nil {
		return nil, err
	}
	spool, err := a.spool()
	if err != nil {
		return nil, err
	}
	fxc := ingest.FXConfig{Static: ingest.StaticFX(a.cfg.FX), Lookback: fxLookback}
	if sc := a.cfg.Sources[fxSourceName]; sc.IsEnabled() {
		fxc.Refresh = ingest.ECBRates(a.client(), sc.Endpoint)
	}
	return &ingest.Runner{
		Store:     st,
		Spool:     spool,
		GPUs:      cat,
		Providers: a.cfg.ProviderCatalog(),
		Bounds:    ingest.Bounds{MinUSDGPUHour: a.cfg.Ingest.MinUSDGPUHour, MaxUSDGPUHour: a.cfg.Ingest.MaxUSDGPUHour},
		Suspect: ingest.SuspectConfig{Below: a.cfg.Ingest.Suspect.Below, Above: a.cfg.Ingest.Suspect.Above,
			MinPeers: a.cfg.Ingest.Suspect.MinPeers, Disabled: a.cfg.Ingest.Suspect.Disabled},
		FX: fxc,
		Batch: ingest.BatchConfig{Size: a.cfg.Ingest.BatchSize, Bytes: a.cfg.Ingest.BatchBytes,
			FlushInterval: a.cfg.Ingest.FlushInterval},
		SourceTimeout: a.cfg.Ingest.SourceTimeout,
		Redact:        a.redactor().Redact,
		Logger:        a.redactLogger(a.log),
	}, nil
}

// openRunner is the runner over the store of a command that writes prices; the
// caller closes its Store. The store is openStore's, or with toWrite (collect,
// import) openStoreToWrite's, which the runner migrates first when it answers.
func (a *app) openRunner(ctx context.Context, toWrite bool) (*ingest.Runner, error) {
	var st store.Store
	var deferred bool
	var err error
	if toWrite {
		st, deferred, err = a.openStoreToWrite(ctx)
	} else {
		st, err = a.openStore(ctx)
	}
	if err != nil {
		return nil, err
	}
	r, err := a.runner(st)
	if err != nil {
		st.Close()
		return nil, err
	}
	r.MigrateFirst = deferred
	return r, nil
}
