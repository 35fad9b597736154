package clickhouse

import (
	"strings"
	"testing"
)

func TestVersionNotice(t *testing.T) {
	for v, want := range map[string]bool{"18.16.1": false, "26.7.2.1": false, "24.8.14.39": true, "25.8.1": true, "x": true} {
		got := versionNotice(v)
		if (got != "") != want || (want && !strings.Contains(got, v) || want && strings.Contains(got, "\n")) {
			t.Errorf("%s: %q", v, got)
		}
	}
}
