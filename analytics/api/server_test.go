package api

import (
	"net"
	"testing"
)

func TestAddressFile(t *testing.T) {
	dir := t.TempDir()
	addr := &net.TCPAddr{IP: net.IPv6unspecified, Port: 8080}
	if got := URLOf(addr); got != "http://127.0.0.1:8080" {
		t.Errorf("URLOf(%v) = %s", addr, got)
	}
	remove, err := WriteAddress(dir, Address{URL: "http://127.0.0.1:8080", Store: "duckdb:///x", PID: 42})
	if err != nil {
		t.Fatal(err)
	}
	a, err := ReadAddress(dir)
	if err != nil || a.URL != "http://127.0.0.1:8080" || a.PID != 42 {
		t.Fatalf("read back %+v %v", a, err)
	}
	remove()
	if _, err := ReadAddress(dir); err == nil {
		t.Error("address file still there after remove")
	}
}
