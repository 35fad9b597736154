package cli

import (
	"runtime/debug"
	"testing"
)

func TestVersionLine(t *testing.T) {
	bi := &debug.BuildInfo{GoVersion: "go1.25.1", Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "0123456789abcdef0123"},
		{Key: "vcs.time", Value: "2026-11-30T21:00:00Z"}, {Key: "vcs.modified", Value: "true"},
	}}
	if got, want := versionLine("dev", bi), "gpuprice dev (commit 0123456789ab, committed 2026-11-30T21:00:00Z, with uncommitted changes, go1.25.1)"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
	bi = &debug.BuildInfo{GoVersion: "go1.25.1", Main: debug.Module{Version: "v1.4.0"}}
	if got, want := versionLine("dev", bi), "gpuprice v1.4.0 (commit unknown (built outside a git checkout), go1.25.1)"; got != want {
		t.Errorf("go install'd: got %q, want %q", got, want)
	}
	if got := versionLine("v2.0.0", bi); got != "gpuprice v2.0.0 (commit unknown (built outside a git checkout), go1.25.1)" {
		t.Errorf("-ldflags version: got %q", got)
	}
}
