package api

import (
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"time"
)

// AddressFile is the file in the data directory where a running server says where
// it listens, so that the command line can ask it while it holds the embedded store.
const AddressFile = "serve.json"

// Address is the content of AddressFile.
type Address struct {
	URL       string    `json:"url"`   // e.g. http://127.0.0.1:8080
	Store     string    `json:"store"` // the store's DSN, redacted
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
}

// URLOf is the URL a local client reaches a listener at: an unspecified host
// (":8080", "[::]:8080") becomes the loopback address.
func URLOf(addr net.Addr) string {
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return "http://" + addr.String()
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// WriteAddress records a in dir (atomically) and returns a function that removes it.
func WriteAddress(dir string, a Address) (func(), error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	b, err := json.MarshalIndent(a, "", "  ")
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, AddressFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, err
	}
	return func() {
		if cur, err := ReadAddress(dir); err == nil && cur.PID == a.PID && cur.URL == a.URL {
			os.Remove(path)
		}
	}, nil
}

// ReadAddress reads the address a server recorded in dir.
func ReadAddress(dir string) (Address, error) {
	var a Address
	b, err := os.ReadFile(filepath.Join(dir, AddressFile))
	if err != nil {
		return a, err
	}
	if err := json.Unmarshal(b, &a); err != nil {
		return a, err
	}
	if a.URL == "" {
		return a, errors.New("server address file without a url")
	}
	return a, nil
}
