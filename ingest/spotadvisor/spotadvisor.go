// Package spotadvisor backfills the history of AWS's spot interruption bands from
// public archives: git repositories that keep a copy of the Spot Advisor file
// (https://spot-bid-advisor.s3.amazonaws.com/spot-advisor-data.json) and commit it
// again when it is refreshed, as alexei-led/spotinfo does
// (public/spot/data/spot-advisor-data.json in 2021, internal/spot/data/… since).
// Every commit that added or changed such a file is a copy of the bands as of its
// committer time; each is parsed by the AWS source's own parser
// (aws.ParseSpotAdvisor) and stored as one import run of signals, with the commit in
// each signal's source_url. Importing a history again stores nothing twice.
package spotadvisor

import (
	"bytes"
	"context"
	"fmt"
	"time"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/ingest/githistory"
	"github.com/gpuprice/gpuprice/scrapers/aws"
	"github.com/gpuprice/gpuprice/store"
)

// DefaultPathspec finds the file wherever a repository keeps it, across renames.
const DefaultPathspec = ":(glob)**/spot-advisor-data.json"

// Source is the source of the runs and signals a backfill writes.
const Source = "import:" + aws.SourceSpotAdvisor + "-history"

// Importer imports the copies of the Spot Advisor file in a clone's history.
type Importer struct {
	Repo     string    // a local clone
	Pathspec string    // the files to read (DefaultPathspec when "")
	Since    time.Time // copies committed at or after it (zero: all)
	Until    time.Time // copies committed before it (zero: all)
	Now      func() time.Time
}

// PathspecOrDefault is the pathspec the import reads.
func (im Importer) PathspecOrDefault() string {
	if im.Pathspec == "" {
		return DefaultPathspec
	}
	return im.Pathspec
}

// Copy is what one version of the file gave.
type Copy struct {
	githistory.Version
	Bands  int    `json:"bands"`  // interruption bands stored
	RunID  string `json:"run_id"` // the import run
	Status string `json:"status"`
	Error  string `json:"error,omitempty"` // why the copy could not be read or stored
}

// SourceURL is the source_url of the signals read from v: the archive, the commit
// and the path.
func SourceURL(origin string, v githistory.Version) string {
	return "git:" + origin + "@" + v.Commit + ":" + v.Path
}

// Import stores, oldest first, the bands of every copy of the file in the clone's
// history within [Since, Until), each as of its committer time. A copy that cannot
// be read or parsed is reported in its Copy and the others go on; an error is
// returned only when the history cannot be listed or the store fails.
func (im Importer) Import(ctx context.Context, st store.Store) ([]Copy, error) {
	spec := im.PathspecOrDefault()
	now := time.Now
	if im.Now != nil {
		now = im.Now
	}
	all, err := githistory.Versions(ctx, im.Repo, spec)
	if err != nil {
		return nil, fmt.Errorf("spot advisor history: %w", err)
	}
	var copies []Copy
	for _, v := range all {
		if (!im.Since.IsZero() && v.Time.Before(im.Since)) || (!im.Until.IsZero() && !v.Time.Before(im.Until)) {
			continue
		}
		copies = append(copies, Copy{Version: v})
	}
	if len(copies) == 0 {
		return nil, nil
	}
	origin := githistory.Origin(ctx, im.Repo)
	blobs, err := githistory.OpenBlobs(ctx, im.Repo)
	if err != nil {
		return nil, fmt.Errorf("spot advisor history: %w", err)
	}
	defer blobs.Close()
	for i := range copies {
		c := &copies[i]
		if err := ctx.Err(); err != nil {
			return copies[:i], err
		}
		data, err := blobs.Read(c.Commit, c.Path)
		if err != nil {
			c.Status, c.Error = "unreadable", err.Error()
			continue
		}
		res, err := aws.ParseSpotAdvisor(bytes.NewReader(data), c.Time)
		if err != nil {
			c.Status, c.Error = "unparsable", err.Error()
			continue
		}
		url := SourceURL(origin, c.Version)
		for j := range res.Signals {
			res.Signals[j].SourceURL = url
		}
		imp, err := ingest.ImportSignals(ctx, st, Source, res.Signals, res.Rejects, now())
		if err != nil {
			return copies[:i], fmt.Errorf("spot advisor history: %s %s: %w", c.Short(), c.Path, err)
		}
		c.Bands, c.RunID, c.Status, c.Error = imp.Run.RowsStored, imp.Run.RunID, imp.Run.Status, imp.Run.Error
	}
	return copies, nil
}
