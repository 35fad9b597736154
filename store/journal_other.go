//go:build !unix

package store

// processAlive cannot tell here: a started record's process is judged gone only
// by its silence (GoneAfter).
func processAlive(int) bool { return true }
