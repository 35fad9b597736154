package main

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// This file substitutes a panel's SQL the way Grafana and the ClickHouse plugin
// (grafana-clickhouse-datasource 4.x) do before the query reaches ClickHouse:
//
//  1. the frontend's applyConditionalAll: $__conditionalAll(cond, $v) becomes 1=1
//     when v is "All" (or empty), else cond;
//  2. Grafana's template replacement with the plugin's format function: an array
//     value becomes 'a','b' (no escaping), a single value is inserted as is;
//     ${v:singlequote} quotes every value with ' escaped as \' and joins with ",";
//     "All" without an allValue is every option's value;
//  3. the backend's macros (pkg/macros): $__timeFilter(c) is
//     c >= toDateTime(from) AND c <= toDateTime(to) in Unix seconds, $__fromTime and
//     $__toTime are toDateTime(…), $__dateFilter(c) compares toDate('YYYY-MM-DD'),
//     $__interval_s is the interval in seconds.
//
// Anything else starting with $ is an error, so a panel cannot use a macro or
// variable these tests do not know how to expand.

// selection is a variable's current value: All, or the values selected.
type selection struct {
	multi   bool
	all     bool
	values  []string // selected values (not All)
	options []string // every option, for All
}

func (s selection) current() []string {
	if s.all {
		return s.options
	}
	return s.values
}

var varPattern = regexp.MustCompile(`\$\{(\w+)(?::(\w+))?\}|\[\[(\w+)(?::(\w+))?\]\]|\$(\w+)`)

func interpolate(sql string, vars map[string]selection, from, to time.Time) (string, error) {
	var err error
	if sql, err = conditionalAll(sql, vars); err != nil {
		return "", err
	}
	var bad []string
	sql = varPattern.ReplaceAllStringFunc(sql, func(m string) string {
		sm := varPattern.FindStringSubmatch(m)
		name, format := sm[1]+sm[3]+sm[5], sm[2]+sm[4]
		if strings.HasPrefix(name, "__") {
			return m // a macro: the backend's business
		}
		v, ok := vars[name]
		if !ok {
			bad = append(bad, m)
			return m
		}
		vals := v.current()
		switch format {
		case "singlequote":
			q := make([]string, len(vals))
			for i, x := range vals {
				q[i] = "'" + strings.ReplaceAll(x, "'", `\'`) + "'"
			}
			return strings.Join(q, ",")
		case "percentencode":
			// Grafana's formatter: an array as "{a,b}", then encodeURIComponentStrict.
			x := vals[0]
			if v.multi {
				x = "{" + strings.Join(vals, ",") + "}"
			}
			var b strings.Builder
			for i := 0; i < len(x); i++ {
				c := x[i]
				if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("-_.~", c) >= 0 {
					b.WriteByte(c)
				} else {
					fmt.Fprintf(&b, "%%%02X", c)
				}
			}
			return b.String()
		case "":
			if v.multi {
				return "'" + strings.Join(vals, "','") + "'"
			}
			return vals[0]
		default:
			bad = append(bad, m)
			return m
		}
	})
	if len(bad) > 0 {
		return "", fmt.Errorf("undefined variables or unknown formats: %v", bad)
	}
	return macros(sql, from, to)
}

// conditionalAll mirrors the plugin's applyConditionalAll (argument splitting on
// top-level commas, last occurrence first).
func conditionalAll(sql string, vars map[string]selection) (string, error) {
	const macro = "$__conditionalAll("
	ref := regexp.MustCompile(`\$\{?(\w+)`)
	for i := strings.LastIndex(sql, macro); i >= 0; i = strings.LastIndex(sql, macro) {
		start := i + len(macro)
		depth, args, last := 1, []string{}, start
		end := -1
		for j := start; j < len(sql) && end < 0; j++ {
			switch sql[j] {
			case '(':
				depth++
			case ')':
				depth--
				if depth == 0 {
					args = append(args, sql[last:j])
					end = j
				}
			case ',':
				if depth == 1 {
					args = append(args, sql[last:j])
					last = j + 1
				}
			}
		}
		if end < 0 || len(args) != 2 {
			return "", fmt.Errorf("malformed $__conditionalAll at %d", i)
		}
		phrase := args[0]
		m := ref.FindStringSubmatch(strings.TrimSpace(args[1]))
		if m == nil {
			return "", fmt.Errorf("$__conditionalAll without a variable: %q", args[1])
		}
		v, ok := vars[m[1]]
		if !ok {
			return "", fmt.Errorf("$__conditionalAll of undefined variable %s", m[1])
		}
		if v.all || len(v.values) == 0 {
			phrase = "1=1"
		}
		sql = sql[:i] + phrase + sql[end+1:]
	}
	return sql, nil
}

var macroPattern = regexp.MustCompile(`\$__(\w+)(?:\(([^()]*)\))?`)

func macros(sql string, from, to time.Time) (string, error) {
	dt := func(t time.Time) string { return fmt.Sprintf("toDateTime(%d)", t.Unix()) }
	d := func(t time.Time) string { return fmt.Sprintf("toDate('%s')", t.UTC().Format("2006-01-02")) }
	var bad []string
	sql = macroPattern.ReplaceAllStringFunc(sql, func(m string) string {
		sm := macroPattern.FindStringSubmatch(m)
		arg := strings.TrimSpace(sm[2])
		switch sm[1] {
		case "timeFilter":
			return fmt.Sprintf("%s >= %s AND %s <= %s", arg, dt(from), arg, dt(to))
		case "dateFilter":
			return fmt.Sprintf("%s >= %s AND %s <= %s", arg, d(from), arg, d(to))
		case "fromTime":
			return dt(from)
		case "toTime":
			return dt(to)
		case "interval_s":
			return "60"
		}
		bad = append(bad, m)
		return m
	})
	if len(bad) > 0 {
		return "", fmt.Errorf("macros the tests do not expand: %v", bad)
	}
	if strings.Contains(sql, "$") {
		return "", fmt.Errorf("unexpanded $ left in %q", sql)
	}
	return sql, nil
}
