// Package skypilot imports the price history kept in the git history of the public
// SkyPilot catalog (a local clone of the skypilot-catalog repository). Every
// catalogs/v<N>/<cloud>/vms.csv is a table of instance types with the on-demand Price
// and SpotPrice SkyPilot's fetchers read from the cloud; each commit that changed a
// file is a snapshot of that cloud's prices at the commit time.
// The long story (modes, rules, limits) is in its README.md.
package skypilot

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/ingest/githistory"
	"github.com/gpuprice/gpuprice/ingest/resumable"
	"github.com/gpuprice/gpuprice/ingest/sample"
	"github.com/gpuprice/gpuprice/schemas"
)

// Providers maps SkyPilot cloud directory names to gpuprice provider names where the
// two differ; other directories are used as they are.
var Providers = map[string]string{
	"do": "digitalocean",
}

// Provider returns the gpuprice provider of a SkyPilot cloud directory.
func Provider(cloud string) string {
	if p, ok := Providers[cloud]; ok {
		return p
	}
	return cloud
}

// Snapshot is one version of one catalog file: a commit that changed it.
type Snapshot struct {
	Commit  string    `json:"commit"`
	Time    time.Time `json:"time"` // committer time, UTC
	Path    string    `json:"path"` // catalogs/v7/aws/vms.csv
	Version string    `json:"version"`
	Cloud   string    `json:"cloud"`
}

// SourceURL is the source_url of the rows of s.
func (s Snapshot) SourceURL() string { return "skypilot-catalog:" + s.Commit + ":" + s.Path }

var pathRE = regexp.MustCompile(`^catalogs/(v[0-9]+)/([^/]+)/vms\.csv$`)

// ErrNotRepo is returned for a path that is not a git work tree or repository.
var ErrNotRepo = githistory.ErrNotRepo

// Snapshots lists the snapshots of every catalogs/v*/<cloud>/vms.csv of repo's HEAD
// history, oldest first (commits in git log's order reversed; the files of one
// commit in path order). Deletions are not snapshots.
func Snapshots(ctx context.Context, repo string) ([]Snapshot, error) {
	vs, err := githistory.Versions(ctx, repo, ":(glob)catalogs/v*/*/vms.csv")
	if err != nil {
		return nil, fmt.Errorf("skypilot: %w", err)
	}
	var snaps []Snapshot
	for _, v := range vs {
		if m := pathRE.FindStringSubmatch(v.Path); m != nil {
			snaps = append(snaps, Snapshot{Commit: v.Commit, Time: v.Time, Path: v.Path, Version: m[1], Cloud: m[2]})
		}
	}
	return snaps, nil
}

// Reject is a catalog row that could not be read.
type Reject struct {
	Raw    string
	Reason string
}

// Stats counts what a snapshot held besides its rows.
type Stats struct {
	Lines   int // data lines read
	NoGPU   int // lines without an accelerator (CPU instances)
	NoPrice int // prices left empty (a pricing kind the instance type is not sold as)
	// OtherRegion counts rows left out because their region is not in
	// Importer.Regions.
	OtherRegion int
}

var memRE = regexp.MustCompile(`'SizeInMiB':\s*([0-9.]+)`)

// Parse reads one vms.csv snapshot into rows (see the package doc); it is pure. A
// file whose header lacks a needed column is an error; a line that cannot be read
// is a reject and the others go on.
func Parse(r io.Reader, s Snapshot, origin string) ([]schemas.Observation, []Reject, Stats, error) {
	var st Stats
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, nil, st, nil
	}
	if err != nil {
		return nil, nil, st, fmt.Errorf("skypilot: %s at %s: header: %w", s.Path, short(s.Commit), err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	for _, need := range []string{"InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "SpotPrice", "Region"} {
		if _, ok := col[need]; !ok {
			return nil, nil, st, fmt.Errorf("skypilot: %s at %s: no %s column", s.Path, short(s.Commit), need)
		}
	}
	provider := Provider(s.Cloud)
	type odKey struct{ sku, region string }
	odPrice := map[odKey]float64{}
	var rows []schemas.Observation
	var rejects []Reject
	line := 1
	for {
		rec, err := cr.Read()
		line++
		if errors.Is(err, io.EOF) {
			break
		}
		reject := func(reason string) {
			raw, _ := json.Marshal(map[string]any{"source_url": s.SourceURL(), "line": line, "record": rec})
			rejects = append(rejects, Reject{Raw: string(raw), Reason: "skypilot: " + reason})
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) && (errors.Is(pe.Err, csv.ErrBareQuote) || errors.Is(pe.Err, csv.ErrQuote)) {
				reject(err.Error())
				continue
			}
			return nil, nil, st, fmt.Errorf("skypilot: %s at %s: %w", s.Path, short(s.Commit), err)
		}
		st.Lines++
		get := func(name string) string {
			if i, ok := col[name]; ok && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		acc := get("AcceleratorName")
		if acc == "" {
			st.NoGPU++
			continue
		}
		countText := get("AcceleratorCount")
		count, err := schemas.ParseNumber(countText)
		if err != nil || count <= 0 {
			reject(fmt.Sprintf("AcceleratorCount %q is not a positive number", countText))
			continue
		}
		base := schemas.Observation{
			ObservedAt: s.Time, EffectiveAt: s.Time, Provider: provider, SKU: get("InstanceType"), Region: get("Region"),
			GPUName: acc, GPUCount: count, Currency: "USD", Unit: schemas.UnitHour, SourceKind: schemas.SourceImport,
			SourceURL: s.SourceURL(),
		}
		if m := memRE.FindStringSubmatch(get("GpuInfo")); m != nil {
			if mib, err := strconv.ParseFloat(m[1], 64); err == nil && mib > 0 {
				base.GPUMemoryGB = mib / 1024
			}
		}
		attrs := map[string]string{"original_source": origin, "catalog_version": s.Version}
		if base.SKU == "" {
			base.SKU = acc + ":" + strconv.FormatFloat(count, 'f', -1, 64)
			attrs["gpu_only"] = "true"
		}
		for _, p := range []struct{ pricing, column string }{{schemas.OnDemand, "Price"}, {schemas.Spot, "SpotPrice"}} {
			text := get(p.column)
			if text == "" {
				st.NoPrice++
				continue
			}
			v, err := schemas.ParseNumber(text)
			if err != nil {
				reject(fmt.Sprintf("%s %q is not a number", p.column, text))
				continue
			}
			o := base
			o.Pricing, o.PriceNative = p.pricing, v
			o.Attrs = maps(attrs)
			zone := get("AvailabilityZone")
			if p.pricing == schemas.OnDemand {
				k := odKey{o.SKU, o.Region}
				if prev, seen := odPrice[k]; seen {
					if prev == v {
						continue
					}
					o.Zone = zone // a zone whose on-demand price differs from its region's
				} else {
					odPrice[k] = v
				}
			} else {
				o.Zone = zone
			}
			rows = append(rows, o)
		}
	}
	return rows, rejects, st, nil
}

func maps(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func short(commit string) string { return githistory.Short(commit) }

// Checkpoint is what the import keeps between runs: per file, the last snapshot
// imported.
type Checkpoint struct {
	Repo  string              `json:"repo"`
	Files map[string]Snapshot `json:"files"`
}

// Importer imports a clone's snapshots into a stepwise ingest.Run.
type Importer struct {
	Repo       string // the clone's directory
	Run        *ingest.Run
	Checkpoint resumable.Checkpoint
	// Clouds and Versions limit the files imported (empty: all).
	Clouds   []string
	Versions []string
	// Since and Until, when set, keep the snapshots committed at or after Since and
	// before Until.
	Since, Until time.Time
	// Every, when positive, keeps per file the first snapshot of each period of that
	// length (Sample).
	Every time.Duration
	// Regions, when set, keeps only the rows of these regions (of every cloud).
	Regions []string
	// Restart ignores the checkpoint (the store still keeps each row once).
	Restart bool
	// Progress, when set, is called after each snapshot is stored (done of total
	// snapshots to import in this run) and once with done 0 before the first.
	Progress func(done, total int, s Snapshot, rows int)
}

// Result is what an import did.
type Result struct {
	Snapshots int // snapshots in the history that match the filters
	Skipped   int // of those, imported before (checkpoint)
	Imported  int // imported in this run
	Stats     Stats
}

// Sample keeps, of each file's snapshots in snaps (snaps' order kept), the first one
// committed in each period of length every, periods counted from the Unix epoch in
// UTC: a history committed every few hours becomes one snapshot a day (every = 24h)
// or one every few days, and sampling the same history again keeps the same
// commits. every <= 0 keeps them all.
func Sample(snaps []Snapshot, every time.Duration) []Snapshot {
	return sample.Every(snaps, every, func(s Snapshot) (string, time.Time) { return s.Path, s.Time })
}

// Pending returns the snapshots of snaps still to import after the checkpoint: for
// each file, those after its checkpointed commit in snaps' order (or, when that
// commit is no longer in the history, those committed later).
func Pending(snaps []Snapshot, cp Checkpoint) []Snapshot {
	last := map[string]int{}
	for i, s := range snaps {
		if c, ok := cp.Files[s.Path]; ok && c.Commit == s.Commit {
			last[s.Path] = i
		}
	}
	var out []Snapshot
	for i, s := range snaps {
		c, ok := cp.Files[s.Path]
		if !ok {
			out = append(out, s)
			continue
		}
		if j, found := last[s.Path]; found {
			if i > j {
				out = append(out, s)
			}
		} else if s.Time.After(c.Time) {
			out = append(out, s)
		}
	}
	return out
}

// Import imports the pending snapshots in order, committing and checkpointing each.
// It stops at the first error (or when ctx ends) with what was stored kept and
// checkpointed.
func (im *Importer) Import(ctx context.Context) (Result, error) {
	var res Result
	all, err := Snapshots(ctx, im.Repo)
	if err != nil {
		return res, err
	}
	var snaps []Snapshot
	for _, s := range all {
		if !(len(im.Clouds) == 0 || slices.Contains(im.Clouds, s.Cloud)) ||
			!(len(im.Versions) == 0 || slices.Contains(im.Versions, s.Version)) {
			continue
		}
		if (!im.Since.IsZero() && s.Time.Before(im.Since)) || (!im.Until.IsZero() && !s.Time.Before(im.Until)) {
			continue
		}
		snaps = append(snaps, s)
	}
	snaps = Sample(snaps, im.Every)
	res.Snapshots = len(snaps)
	cp := Checkpoint{Repo: im.Repo, Files: map[string]Snapshot{}}
	if !im.Restart {
		var saved Checkpoint
		ok, err := im.Checkpoint.Load(&saved)
		if err != nil {
			return res, err
		}
		if ok && saved.Files != nil {
			cp.Files = saved.Files
		}
	}
	pending := Pending(snaps, cp)
	res.Skipped = len(snaps) - len(pending)
	if len(pending) == 0 {
		return res, nil
	}
	src := githistory.Origin(ctx, im.Repo)
	blobs, err := githistory.OpenBlobs(ctx, im.Repo)
	if err != nil {
		return res, err
	}
	defer blobs.Close()
	if im.Progress != nil {
		im.Progress(0, len(pending), pending[0], 0)
	}
	for i, s := range pending {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("skypilot: %w", err)
		}
		data, err := blobs.Read(s.Commit, s.Path)
		if err != nil {
			return res, fmt.Errorf("skypilot: %w", err)
		}
		rows, rejects, st, perr := Parse(bytes.NewReader(data), s, src)
		if perr != nil {
			raw, _ := json.Marshal(map[string]string{"source_url": s.SourceURL()})
			im.Run.Reject(string(raw), perr.Error())
		}
		for _, r := range rejects {
			im.Run.Reject(r.Raw, r.Reason)
		}
		kept := 0
		for _, o := range rows {
			if len(im.Regions) > 0 && !slices.Contains(im.Regions, o.Region) {
				st.OtherRegion++
				continue
			}
			im.Run.Emit(o)
			kept++
		}
		if err := im.Run.Commit(ctx); err != nil {
			return res, err
		}
		cp.Files[s.Path] = s
		if err := im.Checkpoint.Save(cp); err != nil {
			return res, err
		}
		res.Imported++
		res.Stats.Lines += st.Lines
		res.Stats.NoGPU += st.NoGPU
		res.Stats.NoPrice += st.NoPrice
		res.Stats.OtherRegion += st.OtherRegion
		if im.Progress != nil {
			im.Progress(i+1, len(pending), s, kept)
		}
	}
	return res, nil
}
