package config

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// located is a scalar of the file with the dotted path of keys leading to it.
type located struct {
	path  string
	line  int
	key   bool // the scalar is a mapping key (path ends with it)
	value string
}

// locate lists every scalar of the document with its key path.
func locate(data []byte) []located {
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		return nil
	}
	var out []located
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				walk(c, path)
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := k.Value
				if path != "" {
					p = path + "." + k.Value
				}
				out = append(out, located{path: p, line: k.Line, key: true, value: k.Value})
				walk(v, p)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		case yaml.ScalarNode:
			out = append(out, located{path: path, line: n.Line, value: n.Value})
		}
	}
	walk(&doc, "")
	return out
}

// parserErrRe matches yaml.v3's parser errors, which give the line before the one
// meant (the scanner's errors give the right one).
var parserErrRe = regexp.MustCompile(
	`^yaml: line (\d+): (did not find expected (?:key|node content|<document start>|',' or '\]'|',' or '\}'|'-' ` +
		`indicator))$`)

// explainSyntaxError gives a YAML syntax error the line meant, and quotes it.
func explainSyntaxError(data []byte, err error) error {
	msg := err.Error()
	line := 0
	if m := parserErrRe.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		line++
		msg = fmt.Sprintf("line %d: %s", line, m[2])
	} else if m := regexp.MustCompile(`^yaml: line (\d+): (.*)$`).FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = fmt.Sprintf("line %d: %s", line, m[2])
	} else {
		return err
	}
	if lines := strings.Split(string(data),
		"\n"); line >= 1 && line <= len(lines) && strings.TrimSpace(lines[line-1]) != "" {
		msg += fmt.Sprintf(" (line %d is %q; check its indentation and brackets)", line, lines[line-1])
	}
	return errors.New(msg)
}

var (
	typeErrRe    = regexp.MustCompile("^line (\\d+): cannot unmarshal !!(\\w+) `(.*)` into (.+)$")
	unknownKeyRe = regexp.MustCompile(`^line (\d+): field (\S+) not found in type (\S+)$`)
)

// kindNames are the Go types of Config in words.
var kindNames = map[string]string{
	"time.Duration": "a duration (like 30s, 5m or 1h30m)",
	"int":           "a whole number", "int64": "a whole number",
	"float64": "a number", "bool": "true or false", "string": "a string",
}

// explainDecodeError rewrites yaml.v3's unmarshal errors, which name Go types and a
// line only, as errors that name the key: `line 3: ingest.source_timeout: "5x" is not
// a duration (like 30s, 5m or 1h30m)`, `line 2: ingest.bogus: unknown key (known: …)`.
func explainDecodeError(data []byte, err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return explainSyntaxError(data, err)
	}
	nodes := locate(data)
	var msgs []string
	for _, e := range te.Errors {
		msgs = append(msgs, explainOne(nodes, e))
	}
	return errors.New(strings.Join(msgs, "; "))
}

func explainOne(nodes []located, e string) string {
	if m := typeErrRe.FindStringSubmatch(e); m != nil {
		line, _ := strconv.Atoi(m[1])
		want := kindNames[m[4]]
		switch {
		case want != "":
		case strings.HasPrefix(m[4], "[]"):
			want = "a list"
		default: // a struct or a map
			want = "a mapping of keys to values"
		}
		for _, n := range nodes {
			if n.line == line && !n.key && n.value == m[3] {
				return fmt.Sprintf("line %d: %s: %q is not %s", line, n.path, n.value, want)
			}
		}
		for _, n := range nodes { // a mapping or list where a scalar belongs: name the key
			if n.line == line && n.key {
				return fmt.Sprintf("line %d: %s: must be %s", line, n.path, want)
			}
		}
		return e
	}
	if m := unknownKeyRe.FindStringSubmatch(e); m != nil {
		line, _ := strconv.Atoi(m[1])
		path := m[2]
		for _, n := range nodes {
			if n.line == line && n.key && n.value == m[2] {
				path = n.path
				break
			}
		}
		known := knownKeys(m[3])
		if known != "" {
			return fmt.Sprintf("line %d: %s: unknown key (field %s not found; known here: %s)", line, path, m[2], known)
		}
		return fmt.Sprintf("line %d: %s: unknown key (field %s not found)", line, path, m[2])
	}
	return e
}

// knownKeys lists the yaml keys of the named struct type of the configuration.
func knownKeys(typeName string) string {
	var found string
	seen := map[reflect.Type]bool{}
	var visit func(t reflect.Type)
	visit = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Map || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] || found != "" {
			return
		}
		seen[t] = true
		if t.String() == typeName {
			var keys []string
			for i := 0; i < t.NumField(); i++ {
				if k := yamlKey(t.Field(i)); k != "" {
					keys = append(keys, k)
				}
			}
			found = strings.Join(keys, ", ")
			return
		}
		for i := 0; i < t.NumField(); i++ {
			visit(t.Field(i).Type)
		}
	}
	visit(reflect.TypeOf(Config{}))
	return found
}

// yamlKey is a field's key in the file, "" for fields the file cannot set.
func yamlKey(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	tag := f.Tag.Get("yaml")
	name, _, _ := strings.Cut(tag, ",")
	if name == "-" {
		return ""
	}
	if name == "" {
		return strings.ToLower(f.Name)
	}
	return name
}
