package textsafe

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestClean(t *testing.T) {
	cases := map[string]string{
		"H100 SXM":                   "H100 SXM",
		"  H100\n\tSXM  ":            "H100 SXM",
		"\x1b[2JUS":                  "[2JUS",
		"\u202eSU\u202c":             "SU",
		"zero\u200bwidth":            "zerowidth",
		"\xffok":                     "\ufffdok",
		"US\n:white_check_mark: RES": "US :white_check_mark: RES",
	}
	for in, want := range cases {
		if got := Clean(in, 0); got != want {
			t.Errorf("Clean(%q) = %q, want %q", in, got, want)
		}
	}
	if got := Clean(strings.Repeat("é", 200), MaxName); utf8.RuneCountInString(got) != MaxName ||
		!strings.HasSuffix(got, Ellipsis) {
		t.Errorf("Clean of 200 runes capped at %d = %d runes %q", MaxName, utf8.RuneCountInString(got), got)
	}
	if got := Clean(strings.Repeat("a", MaxName), MaxName); got != strings.Repeat("a", MaxName) {
		t.Errorf("a string of exactly the cap was cut: %q", got)
	}
}

func TestRegion(t *testing.T) {
	cases := []struct{ in, region, raw string }{
		{"us-east-1", "us-east-1", ""},
		{"NORTH AMERICA", "NORTH AMERICA", ""},
		{"", "", ""},
		{`US\') OR 1=1 --`, "US", `US\') OR 1=1 --`},
		{`Texas, US\') OR 1=1 --`, "US", `Texas, US\') OR 1=1 --`},
		{"<!channel>", "", "<!channel>"},
		{"US\n:white_check_mark: RESOLVED", "US", "US :white_check_mark: RESOLVED"},
		{"\x1b[2J", "", "[2J"},
		{"Québec, CA", "CA", "Québec, CA"},
		{strings.Repeat("A", 4096), "", strings.Repeat("A", MaxText-1) + Ellipsis},
	}
	for _, c := range cases {
		r, raw := Region(c.in)
		if r != c.region || raw != c.raw {
			t.Errorf("Region(%q) = %q, %q; want %q, %q", c.in, r, raw, c.region, c.raw)
		}
	}
}

func TestSlack(t *testing.T) {
	for _, h := range Hostile {
		got := Slack(h)
		if strings.ContainsAny(got, "<>\n\r") {
			t.Errorf("Slack(%q) = %q: markup or a line break survived", h, got)
		}
		if strings.Contains(strings.ReplaceAll(got, "&amp;", ""), "&") && !strings.Contains(got, "&lt;") &&
			!strings.Contains(got, "&gt;") && !strings.Contains(got, "&quot;") {
			t.Errorf("Slack(%q) = %q: a bare &", h, got)
		}
	}
	if got := Slack("<!channel> & co"); got != "&lt;!channel&gt; &amp; co" {
		t.Errorf("Slack = %q", got)
	}
}

func TestMarkdown(t *testing.T) {
	for _, h := range Hostile {
		got := Markdown(h)
		if strings.ContainsAny(got, "<>\n\r") {
			t.Errorf("Markdown(%q) = %q: HTML or a line break survived", h, got)
		}
		// Every | left is escaped: a value stays one cell.
		if strings.Count(got, "|") != strings.Count(got, `\|`) {
			t.Errorf("Markdown(%q) = %q: a bare |", h, got)
		}
		if strings.Contains(got, "](") && !strings.Contains(got, `\](`) {
			t.Errorf("Markdown(%q) = %q: a link survived", h, got)
		}
	}
	if got := Markdown("H100 SXM"); got != "H100 SXM" {
		t.Errorf("Markdown(plain) = %q", got)
	}
}

func TestCSV(t *testing.T) {
	for _, h := range Hostile {
		got := CSV(h)
		if got != "" && strings.ContainsRune("=+-@\t\r", rune(got[0])) {
			t.Errorf("CSV(%q) = %q: starts a formula", h, got)
		}
	}
	for _, n := range []string{"-3.5", "-0.0001", "+1e3", "12", "0.5"} {
		if got := CSV(n); got != n {
			t.Errorf("CSV(%q) = %q: a number must stay a number", n, got)
		}
	}
	if got := CSV("=1+1"); got != "'=1+1" {
		t.Errorf("CSV(=1+1) = %q", got)
	}
	// Written and read back by a CSV writer, the cell is the prefixed text.
	var b strings.Builder
	w := csv.NewWriter(&b)
	_ = w.Write([]string{CSV("=cmd|' /C calc'!A0"), CSV("-3.5")})
	w.Flush()
	rec, err := csv.NewReader(strings.NewReader(b.String())).Read()
	if err != nil || rec[0] != "'=cmd|' /C calc'!A0" || rec[1] != "-3.5" {
		t.Errorf("read back %q, %v", rec, err)
	}
}

func TestTerminal(t *testing.T) {
	for _, h := range Hostile {
		got := Terminal(h)
		for _, r := range got {
			if !unicode.IsPrint(r) || bidi(r) {
				t.Errorf("Terminal(%q) = %q: %U reaches the terminal", h, got, r)
			}
		}
		if !utf8.ValidString(got) {
			t.Errorf("Terminal(%q) = %q: invalid UTF-8", h, got)
		}
	}
	if got := Terminal("\x1b[2J\nÜ"); got != `\x1b[2J\nÜ` {
		t.Errorf("Terminal = %q", got)
	}
}

func TestPromLabel(t *testing.T) {
	seen := map[string]bool{}
	for _, h := range Hostile {
		seen[PromLabel(h)] = true
	}
	if len(seen) != 1 || !seen[Other] {
		t.Errorf("hostile labels gave %v, want only %q", seen, Other)
	}
	if PromLabel("us-east-1") != "us-east-1" || PromLabel("") != "" {
		t.Error("a boring label was changed")
	}
}

// FuzzClean checks the ingest rule on any input: the result is valid UTF-8 within
// the cap, holds no control, bidi or invisible character, is stable (Clean of it is
// itself), and Region of it is boring or empty.
// TestIsCleanASCII checks isClean's printable-ASCII path against the test of
// every rune, on the strings where the two could part: spaces doubled or at an
// end, the ASCII controls next to printable bytes, and the first non-ASCII bytes.
func TestIsCleanASCII(t *testing.T) {
	for _, s := range []string{"", "a", "a b", "a  b", " a", "a ", " ", "a\tb", "a\nb", "a\x7fb", "a\x00", "~!\"#",
		"caf\u00e9", "a\u00a0b", "a\u200bb", "\xff", "us-east-1a", "H100 SXM5 80GB"} {
		if got, want := isClean(s, 0), isCleanRunes(s); got != want {
			t.Errorf("isClean(%q) = %v, every rune's test says %v", s, got, want)
		}
	}
}

func FuzzClean(f *testing.F) {
	for _, h := range Hostile {
		f.Add(h, MaxName)
	}
	f.Add("Texas, US", 0)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 0 || max > 10_000 {
			max %= 10_000
			if max < 0 {
				max = -max
			}
		}
		if want := !(max > 0 && utf8.RuneCountInString(s) > max) && isCleanRunes(s); isClean(s, max) != want {
			t.Fatalf("isClean(%q, %d) = %v; every rune's test says %v", s, max, !want, want)
		}
		got := Clean(s, max)
		if !utf8.ValidString(got) {
			t.Fatalf("Clean(%q) = %q: invalid UTF-8", s, got)
		}
		if max > 0 && utf8.RuneCountInString(got) > max {
			t.Fatalf("Clean(%q, %d) = %q: over the cap", s, max, got)
		}
		for _, r := range got {
			if invisible(r) || (unicode.IsSpace(r) && r != ' ') {
				t.Fatalf("Clean(%q) = %q: %U survived", s, got, r)
			}
		}
		if again := Clean(got, max); again != got {
			t.Fatalf("Clean is not stable: %q → %q → %q", s, got, again)
		}
		if r, _ := Region(s); r != "" && !Boring(r) {
			t.Fatalf("Region(%q) = %q: not boring", s, r)
		}
		if l := PromLabel(s); l != "" && l != Other && !Boring(l) {
			t.Fatalf("PromLabel(%q) = %q", s, l)
		}
		for _, r := range Terminal(s) {
			if !unicode.IsPrint(r) || bidi(r) {
				t.Fatalf("Terminal(%q) lets %U through", s, r)
			}
		}
		if c := CSV(s); c != "" && strings.ContainsRune("=@\t\r", rune(c[0])) {
			t.Fatalf("CSV(%q) = %q", s, c)
		}
	})
}

// TestJSON: every string of a document, the hostile corpus among them, comes out
// cleaned (no control, bidi or invisible character, one line); structure, key order
// and numbers are kept.
func TestJSON(t *testing.T) {
	doc := map[string]any{"data": []any{}, "n": json.Number("1e400"), "ok": true, "none": nil}
	rows := []any{}
	for _, h := range Hostile {
		rows = append(rows, map[string]any{"gpu": h, "region": h, "price": 1.25, "attrs": map[string]any{h: []any{h}}})
	}
	doc["data"] = rows
	in, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	out, err := JSON(in)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(&back); err != nil {
		t.Fatalf("%v: %.300s", err, out)
	}
	if back["n"] != json.Number("1e400") || back["ok"] != true || back["none"] != nil {
		t.Errorf("scalars changed: %v %v %v", back["n"], back["ok"], back["none"])
	}
	got := back["data"].([]any)
	if len(got) != len(Hostile) {
		t.Fatalf("%d rows, want %d", len(got), len(Hostile))
	}
	for i, h := range Hostile {
		h = string([]rune(h)) // as json.Marshal wrote it: U+FFFD per invalid byte
		r := got[i].(map[string]any)
		if r["gpu"] != Clean(h, 0) || r["region"] != Clean(h, 0) || r["price"] != json.Number("1.25") {
			t.Errorf("row %d: %v, want %q", i, r, Clean(h, 0))
		}
		for k, v := range r["attrs"].(map[string]any) {
			if k != Clean(h, 0) || v.([]any)[0] != Clean(h, 0) {
				t.Errorf("row %d attrs: %q: %v", i, k, v)
			}
		}
	}
	for _, r := range string(out) {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || bidi(r) {
			t.Fatalf("output holds %U", r)
		}
	}
	// Key order kept: the first keys as written.
	in2 := []byte(`{"z":"a\u001b[2Jb","a":[1,2.50,{"k":"\u202eSU"}],"m":{}}`)
	if out, err := JSON(in2); err != nil || string(out) != `{"z":"a[2Jb","a":[1,2.50,{"k":"SU"}],"m":{}}` {
		t.Errorf("JSON(%s) = %s, %v", in2, out, err)
	}
	if _, err := JSON([]byte(`{"a":`)); err == nil {
		t.Error("a truncated document was accepted")
	}
}
