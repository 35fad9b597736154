package config

import (
	"bytes"
	"flag"
	"fmt"
	"github.com/gpuprice/gpuprice/analytics/alert"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

var update = flag.Bool("update", false, "rewrite docs/configuration.md from the code")

const modulePath = "github.com/gpuprice/gpuprice"

// repoRoot is the module's root, from this package's directory.
var repoRoot = filepath.Join("..", "..", "..", "..")

// TestConfigurationReference keeps docs/configuration.md in step with Config: every
// key the file accepts (found by reflection over Config and the types it holds), its
// type, default (Default()), an example (deploy/gpuprice.example.yaml) and the doc
// comment of its field (read from the Go source). Regenerate with
//
//	go test ./cmd/gpuprice/internal/config -run TestConfigurationReference -update
func TestConfigurationReference(t *testing.T) {
	got := reference(t)
	path := filepath.Join(repoRoot, "docs", "configuration.md")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(want) != got {
		t.Errorf("docs/configuration.md is not what the code says; regenerate with\n  go test ./cmd/gpuprice/internal/config -run TestConfigurationReference -update")
	}
	// Every key of the reference is accepted by Load, and every key of the sample is in
	// the reference.
	for _, k := range exampleKeys(t) {
		if !strings.Contains(got, "| `"+k+"` |") {
			t.Errorf("deploy/gpuprice.example.yaml key %s is not in the reference", k)
		}
	}
}

type refRow struct{ key, typ, def, example, doc string }

func reference(t *testing.T) string {
	t.Helper()
	docs := fieldDocs(t)
	example := exampleValues(t)
	var rows []refRow
	var walk func(tp reflect.Type, def reflect.Value, path string)
	walk = func(tp reflect.Type, def reflect.Value, path string) {
		for i := 0; i < tp.NumField(); i++ {
			f := tp.Field(i)
			key := yamlKey(f)
			if key == "" {
				continue
			}
			p := key
			if path != "" {
				p = path + "." + key
			}
			var dv reflect.Value
			if def.IsValid() {
				dv = def.Field(i)
			}
			doc := docs[f.Type.PkgPath()+"|"+tp.Name()+"|"+f.Name]
			if doc == "" {
				doc = docs[tp.PkgPath()+"|"+tp.Name()+"|"+f.Name]
			}
			doc = readerDoc(f.Name, doc)
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			switch {
			case ft.Kind() == reflect.Struct && ft != reflect.TypeOf(time.Time{}):
				if doc != "" {
					rows = append(rows, refRow{key: p, typ: "section", doc: doc})
				}
				walk(ft, dv, p)
			case ft.Kind() == reflect.Map && ft.Elem().Kind() == reflect.Struct:
				name := "<name>"
				rows = append(rows, refRow{key: p, typ: "mapping of " + name, doc: doc})
				walk(ft.Elem(), reflect.Value{}, p+"."+name)
			case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
				rows = append(rows, refRow{key: p, typ: "list", doc: doc})
				walk(ft.Elem(), reflect.Value{}, p+"[]")
			default:
				rows = append(rows, refRow{key: p, typ: typeName(ft), def: defaultOf(dv), example: example[p], doc: doc})
			}
		}
	}
	walk(reflect.TypeOf(Config{}), reflect.ValueOf(Default()), "")
	var b strings.Builder
	b.WriteString(`# Configuration reference

<!-- Generated from the code by
     go test ./cmd/gpuprice/internal/config -run TestConfigurationReference -update
     Do not edit: the test fails when this file and the code disagree. -->

gpuprice reads one YAML file, given with ` + "`--config FILE`" + `. Every key is optional;
unknown keys are errors (named with their line), and so are source names that no
source has. Secrets never go in the file: see the environment variables below.
An annotated sample is [deploy/gpuprice.example.yaml](../deploy/gpuprice.example.yaml);
` + "`gpuprice config`" + ` prints the configuration in effect (secrets redacted).

Durations are written ` + "`30s`, `5m`, `1h30m`, `36h`" + ` (a week is ` + "`168h`" + `: the file takes no
` + "`d` or `w`" + `, which the command line's spans take; an alert rule's ` + "`window`" + ` also takes days,
` + "`7d`" + `). A duration of 0 or a key left out takes the default the
description gives; ` + "`gpuprice config`" + ` prints the value in effect. ` + "`<name>`" + ` stands for any name
(a source, a provider, a currency); ` + "`[]`" + ` marks a list of entries. "Example" is the
sample file's value.

| Key | Type | Default | Example | Description |
|---|---|---|---|---|
`)
	for _, r := range rows {
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", r.key, r.typ, cell(r.def), cell(r.example), strings.ReplaceAll(r.doc, "|", "\\|"))
	}
	b.WriteString(`
## Environment

| Variable | Meaning |
|---|---|
| ` + "`" + EnvStore + "`" + ` | store DSN; wins over ` + "`store`" + ` in the file (` + "`--store`" + ` wins over both) |
| ` + "`" + EnvClickHousePassword + "`" + ` | ClickHouse password, put into a clickhouse:// DSN |
| ` + "`" + EnvDataDir + "`" + ` | data directory when ` + "`data_dir`" + ` is not set (else $XDG_DATA_HOME/gpuprice, else ~/.local/share/gpuprice) |
| ` + "`NAME_FILE`" + ` | for every secret variable NAME: read its value from this file (Docker and Kubernetes secrets) |
| ` + "`HTTPS_PROXY`, `NO_PROXY`" + ` | proxy for the sources' requests (Go's standard proxy variables) |
`)
	return b.String()
}

// goNames are the Go identifiers the doc comments name, as a reader of the file
// knows them: their values.
var goNames = map[string]string{
	"DefaultSchedule":        "`" + alert.DefaultSchedule + "`, every 15 minutes",
	"DefaultAlertmanagerTTL": alert.DefaultAlertmanagerTTL.String(),
}

// readerDoc is a field's doc comment for a reader of the file rather than of the
// code: without the field's Go name leading it ("DataDir holds …" → "Holds …",
// "ThresholdPct: …" → "…") and with the Go identifiers it names replaced by their
// values.
func readerDoc(field, doc string) string {
	if rest, ok := strings.CutPrefix(doc, field); ok && (rest == "" || rest[0] == ' ' || rest[0] == ':') {
		rest = strings.TrimPrefix(rest, ":")
		rest = strings.TrimSpace(rest)
		for _, verb := range []string{"is ", "are "} {
			if r, ok := strings.CutPrefix(rest, verb); ok && !strings.HasPrefix(r, "set") {
				rest = r
				break
			}
		}
		if rest != "" {
			r := []rune(rest)
			doc = strings.ToUpper(string(r[0])) + string(r[1:])
		}
	}
	for name, v := range goNames {
		doc = strings.ReplaceAll(doc, name, v)
	}
	return doc
}

func cell(s string) string {
	if s == "" {
		return "—"
	}
	return "`" + strings.ReplaceAll(s, "|", "\\|") + "`"
}

func typeName(t reflect.Type) string {
	switch {
	case t == reflect.TypeOf(time.Duration(0)) || t.Name() == "Span":
		return "duration"
	case t.Kind() == reflect.Map:
		if t.Elem().Kind() == reflect.Interface {
			return "mapping"
		}
		return "mapping of " + typeName(t.Elem())
	case t.Kind() == reflect.Slice:
		return "list of " + typeName(t.Elem())
	case t.Kind() == reflect.Bool:
		return "bool"
	case t.Kind() == reflect.String:
		return "string"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Uint64:
		return "integer"
	case t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64:
		return "number"
	}
	return t.Kind().String()
}

func defaultOf(v reflect.Value) string {
	if !v.IsValid() || v.IsZero() {
		return ""
	}
	if d, ok := v.Interface().(time.Duration); ok {
		return d.String()
	}
	return fmt.Sprint(v.Interface())
}

// fieldDocs reads the doc comments of the configuration's struct fields from the Go
// source of every package Config's types come from: "pkgpath|Type|Field" → text.
func fieldDocs(t *testing.T) map[string]string {
	t.Helper()
	pkgs := map[string]bool{}
	var visit func(tp reflect.Type)
	seen := map[reflect.Type]bool{}
	visit = func(tp reflect.Type) {
		for tp.Kind() == reflect.Pointer || tp.Kind() == reflect.Map || tp.Kind() == reflect.Slice {
			tp = tp.Elem()
		}
		if tp.Kind() != reflect.Struct || seen[tp] {
			return
		}
		seen[tp] = true
		pkgs[tp.PkgPath()] = true
		for i := 0; i < tp.NumField(); i++ {
			visit(tp.Field(i).Type)
		}
	}
	visit(reflect.TypeOf(Config{}))
	out := map[string]string{}
	for pkg := range pkgs {
		if !strings.HasPrefix(pkg, modulePath+"/") {
			continue
		}
		dir := filepath.Join(repoRoot, filepath.FromSlash(strings.TrimPrefix(pkg, modulePath+"/")))
		fset := token.NewFileSet()
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, fn := range files {
			if strings.HasSuffix(fn, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, fn, nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				ts, ok := n.(*ast.TypeSpec)
				if !ok {
					return true
				}
				st, ok := ts.Type.(*ast.StructType)
				if !ok {
					return true
				}
				for _, fld := range st.Fields.List {
					text := fld.Doc.Text()
					if text == "" {
						text = fld.Comment.Text()
					}
					text = strings.Join(strings.Fields(text), " ")
					for _, name := range fld.Names {
						out[pkg+"|"+ts.Name.Name+"|"+name.Name] = text
					}
				}
				return true
			})
		}
	}
	return out
}

func exampleNode(t *testing.T) *yaml.Node {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot, "deploy", "gpuprice.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return &doc
}

// exampleValues are the sample's scalar values by reference key (the first map entry
// and list element stand for all: sources.<name>.schedule).
func exampleValues(t *testing.T) map[string]string {
	out := map[string]string{}
	var walk func(n *yaml.Node, path string, generic bool)
	walk = func(n *yaml.Node, path string, generic bool) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path, false)
			}
		case yaml.MappingNode:
			if path == "fx" && len(n.Content) >= 2 { // a map of rates: its first entry
				out[path] = n.Content[0].Value + ": " + n.Content[1].Value
			}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				if generic {
					k = "<name>"
				}
				p := k
				if path != "" {
					p = path + "." + k
				}
				walk(n.Content[i+1], p, isNamedMap(p))
			}
		case yaml.SequenceNode:
			if len(n.Content) > 0 && n.Content[0].Kind != yaml.ScalarNode {
				walk(n.Content[0], path+"[]", false)
			} else {
				var vals []string
				for _, c := range n.Content {
					vals = append(vals, c.Value)
				}
				if _, ok := out[path]; !ok {
					out[path] = "[" + strings.Join(vals, ", ") + "]"
				}
			}
		case yaml.ScalarNode:
			if _, ok := out[path]; !ok {
				out[path] = n.Value
			}
		}
	}
	walk(exampleNode(t), "", false)
	return out
}

// isNamedMap reports whether the key holds entries by name (sources, providers).
func isNamedMap(path string) bool {
	tp := reflect.TypeOf(Config{})
	for _, part := range strings.Split(path, ".") {
		part = strings.TrimSuffix(part, "[]")
		if part == "<name>" {
			if tp.Kind() != reflect.Map {
				return false
			}
			tp = tp.Elem()
			continue
		}
		for tp.Kind() == reflect.Pointer || tp.Kind() == reflect.Slice {
			tp = tp.Elem()
		}
		if tp.Kind() != reflect.Struct {
			return false
		}
		found := false
		for i := 0; i < tp.NumField(); i++ {
			if yamlKey(tp.Field(i)) == part {
				tp, found = tp.Field(i).Type, true
				break
			}
		}
		if !found {
			return false
		}
	}
	for tp.Kind() == reflect.Pointer {
		tp = tp.Elem()
	}
	return tp.Kind() == reflect.Map && tp.Elem().Kind() == reflect.Struct
}

// exampleKeys are the reference keys of the sample's settings (options of sources,
// which each source defines, excepted).
func exampleKeys(t *testing.T) []string {
	var keys []string
	for k := range exampleValues(t) {
		if strings.Contains(k, ".options.") || strings.HasPrefix(k, "fx.") {
			continue
		}
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
