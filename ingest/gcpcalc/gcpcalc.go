// Package gcpcalc imports the GCP price history kept in the git history of the
// public google-cloud-pricing-cost-calculator repository (github.com/Cyclenerd/
// google-cloud-pricing-cost-calculator, Apache License 2.0). Its pricing.yml,
// regenerated about once a week from Google's Cloud Billing Catalog and committed,
// lists every Compute Engine machine type with its hourly price per region, on
// demand (hour) and spot (hour_spot); each commit that changed it is a snapshot of
// GCP's prices at the commit time.
//
// Rows (per snapshot, through a stepwise ingest.Run so they are normalised, gated
// and quarantined like collected rows), for the machine types with GPUs built in
// (A2, A3, G2, G4 …: an entry with a GPU key such as h100-80gb: 8):
//   - provider gcp; SKU: the machine type; region: the cost entry's region; zone "".
//   - GPU name from the key (GPUNames; the canonicaliser places it with the SKU),
//     GPU count: the key's value, GPU memory from the key where it says it.
//   - on_demand from hour and spot from hour_spot, USD per instance-hour.
//   - observed_at = effective_at = the commit's committer time; source_kind
//     import; source_url "gcp-pricing-calculator:<commit>:pricing.yml"; Attrs
//     original_source (the clone's origin URL, else its path) and generated (the
//     file's own about.timestamp, when it has one).
//
// Since and Until bound the commit times, Every samples the history (sample.Every)
// and Regions keeps a few regions. Importing twice adds nothing (the store keeps one
// row per identity); there is no checkpoint.
package gcpcalc

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/gpuprice/gpuprice/ingest"
	"github.com/gpuprice/gpuprice/ingest/githistory"
	"github.com/gpuprice/gpuprice/ingest/sample"
	"github.com/gpuprice/gpuprice/schemas"
)

// Path is the file read, at the repository's root.
const Path = "pricing.yml"

// GPUNames maps pricing.yml's GPU keys to the GPU names the canonicaliser reads,
// with the memory the key states (0: the name does not say).
var GPUNames = map[string]struct {
	Name     string
	MemoryGB float64
}{
	"a100":           {"A100 40GB", 40},
	"a100-80gb":      {"A100 80GB", 80},
	"h100-80gb":      {"H100 80GB", 80},
	"h100-80gb-mega": {"H100 80GB Mega", 80},
	"h200-141gb":     {"H200 141GB", 141},
	"b200":           {"B200", 0},
	"l4":             {"L4", 24},
	"rtx6000":        {"RTX PRO 6000 Blackwell Server Edition", 96},
	"t4":             {"T4", 16},
	"v100":           {"V100", 16},
	"p100":           {"P100", 16},
	"p4":             {"P4", 8},
}

// Snapshot is one version of pricing.yml: a commit that changed it.
type Snapshot struct {
	Commit string    `json:"commit"`
	Time   time.Time `json:"time"` // committer time, UTC
}

// SourceURL is the source_url of the rows of s.
func (s Snapshot) SourceURL() string { return "gcp-pricing-calculator:" + s.Commit + ":" + Path }

// ErrNotRepo is returned for a path that is not a git work tree or repository.
var ErrNotRepo = githistory.ErrNotRepo

// Snapshots lists the commits of HEAD's history that changed pricing.yml, oldest
// first (deletions left out).
func Snapshots(ctx context.Context, repo string) ([]Snapshot, error) {
	vs, err := githistory.Versions(ctx, repo, Path)
	if err != nil {
		return nil, fmt.Errorf("gcpcalc: %w", err)
	}
	var snaps []Snapshot
	for _, v := range vs {
		if v.Path == Path {
			snaps = append(snaps, Snapshot{Commit: v.Commit, Time: v.Time})
		}
	}
	return snaps, nil
}

// Stats counts what a snapshot held besides its rows.
type Stats struct {
	MachineTypes int // machine types listed
	NoGPU        int // of those, without a GPU key
	OtherRegion  int // prices left out because their region is not in Importer.Regions
}

type file struct {
	About struct {
		Timestamp int64 `yaml:"timestamp"`
	} `yaml:"about"`
	Compute struct {
		Instance map[string]map[string]yaml.Node `yaml:"instance"`
	} `yaml:"compute"`
}

// Parse reads one pricing.yml snapshot into rows (see the package doc), the
// machine types and regions in name order; regions, when given, keeps only those.
// It is pure. A file that is not YAML of that shape is an error.
func Parse(r io.Reader, s Snapshot, origin string, regions []string) ([]schemas.Observation, Stats, error) {
	var st Stats
	var f file
	if err := yaml.NewDecoder(r).Decode(&f); err != nil {
		return nil, st, fmt.Errorf("gcpcalc: %s at %s: %w", Path, short(s.Commit), err)
	}
	types := make([]string, 0, len(f.Compute.Instance))
	for t := range f.Compute.Instance {
		types = append(types, t)
	}
	sort.Strings(types)
	var rows []schemas.Observation
	for _, sku := range types {
		st.MachineTypes++
		entry := f.Compute.Instance[sku]
		key, count := "", 0.0
		for k, v := range entry {
			if _, ok := GPUNames[k]; !ok {
				continue
			}
			var n float64
			if err := v.Decode(&n); err == nil && n > 0 {
				key, count = k, n
			}
		}
		if key == "" {
			st.NoGPU++
			continue
		}
		var cost map[string]map[string]float64
		if node, ok := entry["cost"]; ok {
			if err := node.Decode(&cost); err != nil {
				return nil, st, fmt.Errorf("gcpcalc: %s at %s: %s cost: %w", Path, short(s.Commit), sku, err)
			}
		}
		names := make([]string, 0, len(cost))
		for region := range cost {
			names = append(names, region)
		}
		sort.Strings(names)
		attrs := map[string]string{"original_source": origin}
		if f.About.Timestamp > 0 {
			attrs["generated"] = time.Unix(f.About.Timestamp, 0).UTC().Format(time.RFC3339)
		}
		for _, region := range names {
			if len(regions) > 0 && !slices.Contains(regions, region) {
				st.OtherRegion++
				continue
			}
			for _, p := range []struct{ pricing, field string }{{schemas.OnDemand, "hour"}, {schemas.Spot, "hour_spot"}} {
				v, ok := cost[region][p.field]
				if !ok || v <= 0 {
					continue
				}
				o := schemas.Observation{
					ObservedAt: s.Time, EffectiveAt: s.Time, Provider: "gcp", SKU: sku, Region: region,
					GPUName: GPUNames[key].Name, GPUCount: count, GPUMemoryGB: GPUNames[key].MemoryGB,
					Pricing: p.pricing, PriceNative: v, Currency: "USD", Unit: schemas.UnitHour,
					SourceKind: schemas.SourceImport, SourceURL: s.SourceURL(), Attrs: copyAttrs(attrs),
				}
				rows = append(rows, o)
			}
		}
	}
	return rows, st, nil
}

func copyAttrs(m map[string]string) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func short(commit string) string { return githistory.Short(commit) }

// Importer imports a clone's snapshots into a stepwise ingest.Run.
type Importer struct {
	Repo string // the clone's directory
	Run  *ingest.Run
	// Since and Until, when set, keep the snapshots committed at or after Since and
	// before Until; Every, when positive, keeps the first of each period of that
	// length (sample.Every); Regions, when set, keeps only the rows of these regions.
	Since, Until time.Time
	Every        time.Duration
	Regions      []string
	// Progress, when set, is called after each snapshot is stored (done of total)
	// with the rows it gave, and once with done 0 before the first.
	Progress func(done, total int, s Snapshot, rows int)
}

// Result is what an import did.
type Result struct {
	Snapshots  int // snapshots kept by the window and the sampling
	Imported   int
	Unreadable int // of those, versions the clone does not hold (a partial clone), skipped
	Stats      Stats
}

// Import imports the snapshots in order, committing each. It stops at the first
// error (or when ctx ends) with what was stored kept.
func (im *Importer) Import(ctx context.Context) (Result, error) {
	var res Result
	all, err := Snapshots(ctx, im.Repo)
	if err != nil {
		return res, err
	}
	var snaps []Snapshot
	for _, s := range all {
		if (!im.Since.IsZero() && s.Time.Before(im.Since)) || (!im.Until.IsZero() && !s.Time.Before(im.Until)) {
			continue
		}
		snaps = append(snaps, s)
	}
	snaps = sample.Every(snaps, im.Every, func(s Snapshot) (string, time.Time) { return Path, s.Time })
	res.Snapshots = len(snaps)
	if len(snaps) == 0 {
		return res, nil
	}
	origin := githistory.Origin(ctx, im.Repo)
	blobs, err := githistory.OpenBlobs(ctx, im.Repo)
	if err != nil {
		return res, fmt.Errorf("gcpcalc: %w", err)
	}
	defer blobs.Close()
	if im.Progress != nil {
		im.Progress(0, len(snaps), snaps[0], 0)
	}
	for i, s := range snaps {
		if err := ctx.Err(); err != nil {
			return res, fmt.Errorf("gcpcalc: %w", err)
		}
		data, err := blobs.Read(s.Commit, Path)
		if err != nil {
			if ctx.Err() != nil {
				return res, fmt.Errorf("gcpcalc: %w", ctx.Err())
			}
			res.Unreadable++
			continue
		}
		rows, st, perr := Parse(bytes.NewReader(data), s, origin, im.Regions)
		if perr != nil {
			im.Run.Reject(`{"source_url":"`+s.SourceURL()+`"}`, perr.Error())
		}
		for _, o := range rows {
			im.Run.Emit(o)
		}
		if err := im.Run.Commit(ctx); err != nil {
			return res, err
		}
		res.Imported++
		res.Stats.MachineTypes += st.MachineTypes
		res.Stats.NoGPU += st.NoGPU
		res.Stats.OtherRegion += st.OtherRegion
		if im.Progress != nil {
			im.Progress(i+1, len(snaps), s, len(rows))
		}
	}
	return res, nil
}
