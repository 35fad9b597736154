package textsafe

import "strings"

// Hostile is the corpus of issue 29: what a Vast host or a page author wrote to reach
// a channel, a shell, a spreadsheet or a query. Every sink's test feeds it to
// the sink (it is here, not in a _test file, so that other packages' tests share it).
var Hostile = []string{
	"<!channel>",
	"<https://evil.example/phish|view in gpuprice>",
	"US\n:white_check_mark: RESOLVED *all* all clear",
	`Texas, US\') OR 1=1 --`,
	"=HYPERLINK(\"https://evil.example\",\"click\")",
	"=cmd|' /C calc'!A0",
	"+1+cmd|' /C calc'!A0",
	"-2+3+cmd|' /C calc'!A0",
	"@SUM(1+1)*cmd|' /C calc'!A0",
	"\tTAB=1", "\rCR=1",
	"\x1b[2J\x1b[H",
	"\x1b]8;;https://evil.example\x1b\\ClickMe\x1b]8;;\x1b\\",
	"US\nvast  H100  0.01  FORGED",
	"<img src=x onerror=alert(1)>",
	"<svg onload=alert(1)>",
	"a | b | c\n| --- |",
	"[click](javascript:alert(1))",
	"\u202eSU\u202c", "\u2066RTL\u2069", "zero\u200bwidth", "\ufeffBOM",
	"\xff\xfe invalid",
	strings.Repeat("A", 5000),
}
