package schemas

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Match is what a name a person typed resolved to: one canonical name, or several
// (a GPU family, "reserved"), and how.
type Match struct {
	Kind  string   `json:"kind"`  // gpu, provider, region, pricing
	Input string   `json:"input"` // as typed
	Names []string `json:"names"` // canonical names matched, at least one
	How   string   `json:"how"`   // exact, case (case or punctuation differed), family, variant, alias
}

// Exact reports whether the input was already the one canonical name.
func (m Match) Exact() bool { return m.How == "exact" }

// String says what matched, e.g. `gpu "h100" matched family H100: H100-SXM-80GB, H100-PCIE-80GB`.
func (m Match) String() string {
	return fmt.Sprintf("%s %q matched %s: %s", m.Kind, m.Input, m.How, strings.Join(m.Names, ", "))
}

// NoMatchError is a name that matches nothing, with the nearest known names.
type NoMatchError struct {
	Kind        string   `json:"kind"`
	Input       string   `json:"input"`
	Suggestions []string `json:"did_you_mean,omitempty"`
}

func (e *NoMatchError) Error() string {
	s := fmt.Sprintf("%s %q: no such %s", e.Kind, e.Input, e.Kind)
	if len(e.Suggestions) > 0 {
		s += "; did you mean " + strings.Join(e.Suggestions, ", ") + "?"
	}
	return s
}

// ResolveName resolves a name among known ones (providers, regions): the name itself,
// else the one that differs only in case or punctuation ("US-EAST-1", "us east 1" →
// "us-east-1"). Anything else is a *NoMatchError with the nearest known names.
func ResolveName(kind, input string, known []string) (Match, error) {
	in := strings.TrimSpace(input)
	if slices.Contains(known, in) {
		return Match{Kind: kind, Input: input, Names: []string{in}, How: "exact"}, nil
	}
	k := ModelKey(in)
	var hits []string
	for _, n := range known {
		if k != "" && ModelKey(n) == k {
			hits = append(hits, n)
		}
	}
	if len(hits) > 0 {
		sort.Strings(hits)
		return Match{Kind: kind, Input: input, Names: hits, How: "case"}, nil
	}
	return Match{}, &NoMatchError{Kind: kind, Input: input, Suggestions: nearest(in, known, 5)}
}

// pricingKinds are the fixed pricing kinds, in the order suggestions list them.
var pricingKinds = []string{OnDemand, Spot, Reserved1Y, Reserved3Y, LowPriority}

// ResolvePricing resolves a pricing kind: a known kind in any case or punctuation
// ("On-Demand" → on_demand), commitment_<n>m, or "reserved" (every reserved_* term).
func ResolvePricing(input string) (Match, error) {
	in := strings.TrimSpace(input)
	if ValidPricing(in) {
		return Match{Kind: "pricing", Input: input, Names: []string{in}, How: "exact"}, nil
	}
	if low := strings.ToLower(strings.ReplaceAll(in, "-", "_")); ValidPricing(low) {
		return Match{Kind: "pricing", Input: input, Names: []string{low}, How: "case"}, nil
	}
	if ModelKey(in) == "reserved" {
		return Match{Kind: "pricing", Input: input, Names: []string{Reserved1Y, Reserved3Y}, How: "family"}, nil
	}
	m, err := ResolveName("pricing", in, pricingKinds)
	if err != nil {
		var e *NoMatchError
		if errors.As(err, &e) {
			e.Input = input
			if strings.HasPrefix(ModelKey(in), "commit") {
				e.Suggestions = append(e.Suggestions, "commitment_<months>m")
			}
		}
		return Match{}, err
	}
	m.Input = input
	return m, nil
}

var (
	formWords = []struct{ word, form string }{ // longest first
		{"superchip", FormSuperchip}, {"pcie", FormPCIe}, {"sxm5", FormSXM}, {"sxm4", FormSXM}, {"sxm3", FormSXM},
		{"sxm2", FormSXM}, {"sxm", FormSXM}, {"nvl", FormNVL}, {"oam", FormOAM},
	}
	memoryWord = regexp.MustCompile(`^([0-9]+)(gb|g)?`)
)

// ResolveGPU resolves a GPU name as people type it, case and punctuation aside:
// a canonical id ("h100-sxm-80gb"), a model or alias naming its whole family ("h100":
// every H100 variant; "a6000"), a model with a form factor and/or memory ("H100 SXM",
// "a100-80gb": the variants that have them). Nothing else is guessed: a filter
// must not widen because a word was ignored. "unknown" matches the GPUs the
// canonicaliser could not place. No match is a *NoMatchError with the nearest ids
// and models.
func (c *Catalog) ResolveGPU(input string) (Match, error) {
	in := strings.TrimSpace(input)
	m := Match{Kind: "gpu", Input: input}
	if _, ok := c.byID[in]; ok || in == UnknownGPU {
		m.Names, m.How = []string{in}, "exact"
		return m, nil
	}
	k := ModelKey(in)
	if k == "" {
		return Match{}, &NoMatchError{Kind: "gpu", Input: input}
	}
	if k == ModelKey(UnknownGPU) {
		m.Names, m.How = []string{UnknownGPU}, "case"
		return m, nil
	}
	for _, g := range c.gpus {
		if ModelKey(g.ID) == k {
			m.Names, m.How = []string{g.ID}, "case"
			return m, nil
		}
	}
	if idx, ok := c.byModel[k]; ok {
		m.Names, m.How = c.ids(idx), "family"
		if ModelKey(c.gpus[idx[0]].Model) != k {
			m.How = "alias"
		}
		return m, nil
	}
	// A model key followed by a form factor and/or a memory size.
	keys := make([]string, 0, len(c.byModel))
	for mk := range c.byModel {
		keys = append(keys, mk)
	}
	sort.Slice(keys, func(i, j int) bool {
		return len(keys[i]) > len(keys[j]) || len(keys[i]) == len(keys[j]) && keys[i] < keys[j]
	})
	for _, mk := range keys {
		rest, ok := strings.CutPrefix(k, mk)
		if !ok {
			continue
		}
		form, mem, ok := qualifiers(rest)
		if !ok {
			continue
		}
		var hit []int
		for _, i := range c.byModel[mk] {
			g := c.gpus[i]
			if (form == "" || g.FormFactor == form) && (mem == 0 || int(g.MemoryGB+0.5) == mem) {
				hit = append(hit, i)
			}
		}
		if len(hit) > 0 {
			m.Names, m.How = c.ids(hit), "variant"
			return m, nil
		}
	}
	cands := c.IDs()
	seen := map[string]bool{}
	for _, g := range c.gpus {
		if !seen[g.Model] {
			seen[g.Model] = true
			cands = append(cands, g.Model)
		}
	}
	return Match{}, &NoMatchError{Kind: "gpu", Input: input, Suggestions: nearest(in, cands, 5)}
}

// GPUFamilies returns each model (family) of the catalog with its variants' ids.
func (c *Catalog) GPUFamilies() map[string][]string {
	out := map[string][]string{}
	for _, g := range c.gpus {
		out[g.Model] = append(out[g.Model], g.ID)
	}
	return out
}

func (c *Catalog) ids(idx []int) []string {
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = c.gpus[j].ID
	}
	return out
}

// qualifiers reads what follows a model key: form-factor words and a memory size in
// any order, each at most once.
func qualifiers(rest string) (form string, mem int, ok bool) {
	for rest != "" {
		matched := false
		for _, w := range formWords {
			if r, cut := strings.CutPrefix(rest, w.word); cut && form == "" {
				form, rest, matched = w.form, r, true
				break
			}
		}
		if matched {
			continue
		}
		if sm := memoryWord.FindStringSubmatch(rest); sm != nil && mem == 0 {
			mem, _ = strconv.Atoi(sm[1])
			rest = rest[len(sm[0]):]
			if mem == 0 {
				return "", 0, false
			}
			continue
		}
		return "", 0, false
	}
	return form, mem, true
}

// nearest returns up to n of known closest to s (edit distance on lower-case keys,
// or one containing the other), closest first.
func nearest(s string, known []string, n int) []string {
	k := ModelKey(s)
	out := byDistance(known, func(name string) (int, bool) {
		nk := ModelKey(name)
		d := EditDistance(k, nk)
		if k != "" && nk != "" && (strings.Contains(nk, k) || strings.Contains(k, nk)) {
			d = min(d, 1)
		}
		return d, d <= max(2, len(k)/3)
	})
	return out[:min(n, len(out))]
}

// byDistance returns the names dist accepts, nearest first, ties in the names'
// order, each once: the ranking of every "did you mean" (nearest, Near).
func byDistance(names []string, dist func(name string) (int, bool)) []string {
	type cand struct {
		name string
		d    int
	}
	var cs []cand
	for _, name := range names {
		if d, ok := dist(name); ok {
			cs = append(cs, cand{name, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool { return cs[i].d < cs[j].d })
	var out []string
	for _, c := range cs {
		if !slices.Contains(out, c.name) {
			out = append(out, c.name)
		}
	}
	return out
}

// NearEdits is how many edits away a candidate may be to be suggested (Near).
const NearEdits = 2

// Near returns the candidates within NearEdits edits of s, nearest first, ties in
// the candidates' order: the one "did you mean" of a misspelled config key, flag,
// API parameter or tool argument.
func Near(s string, candidates []string) []string {
	return byDistance(candidates, func(c string) (int, bool) {
		d := EditDistance(s, c)
		return d, d <= NearEdits
	})
}

// EditDistance is the Levenshtein distance of a and b in runes: the measure of every
// "did you mean" (GPU names, config keys, flags, API parameters).
func EditDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
