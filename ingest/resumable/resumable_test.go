package resumable

import (
	"path/filepath"
	"testing"
)

func TestCheckpoint(t *testing.T) {
	c := Checkpoint{Path: filepath.Join(t.TempDir(), "sub", "cp.json")}
	var v map[string]string
	if ok, err := c.Load(&v); ok || err != nil {
		t.Fatalf("Load of none = %v, %v", ok, err)
	}
	if err := c.Save(map[string]string{"us-east-1": "tok"}); err != nil {
		t.Fatal(err)
	}
	if ok, err := c.Load(&v); !ok || err != nil || v["us-east-1"] != "tok" {
		t.Fatalf("Load = %v, %v, %v", ok, err, v)
	}
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(c.Path), "*.tmp"))
	if len(matches) != 0 {
		t.Errorf("temporary files left: %v", matches)
	}
	if err := c.Remove(); err != nil {
		t.Fatal(err)
	}
	if err := c.Remove(); err != nil {
		t.Fatal(err)
	}
}
