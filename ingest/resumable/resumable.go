// Package resumable keeps the progress of long imports and backfills in a
// checkpoint file, so that an interrupted one goes on where it stopped. The rows
// themselves go through a stepwise ingest.Run (ingest.Runner.Import): its Commit
// returns only once a step's rows and quarantined rows are in the store, so the
// caller saves its checkpoint after Commit and a resumed run starts exactly after the
// last stored step. The store keeps one row per observation identity, so a step
// written twice (an interruption between Commit and the checkpoint save) adds
// nothing.
package resumable

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Checkpoint is a JSON file holding an import's progress. Save replaces it atomically
// (a temporary file renamed over it), so an interruption leaves the old or the new
// state, never a torn one.
type Checkpoint struct {
	Path string
}

// String is the checkpoint's path.
func (c Checkpoint) String() string { return c.Path }

// Load reads the checkpoint into v. It reports false, with v untouched, when there is
// none.
func (c Checkpoint) Load(v any) (bool, error) {
	data, err := os.ReadFile(c.Path)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("resumable: checkpoint: %w", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return false, fmt.Errorf("resumable: checkpoint %s: %w", c.Path, err)
	}
	return true, nil
}

// Save writes v as the checkpoint.
func (c Checkpoint) Save(v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("resumable: checkpoint: %w", err)
	}
	dir := filepath.Dir(c.Path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("resumable: checkpoint: %w", err)
	}
	f, err := os.CreateTemp(dir, filepath.Base(c.Path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("resumable: checkpoint: %w", err)
	}
	_, werr := f.Write(append(data, '\n'))
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("resumable: checkpoint: %w", err)
	}
	if err := os.Rename(f.Name(), c.Path); err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("resumable: checkpoint: %w", err)
	}
	return nil
}

// Remove deletes the checkpoint; a missing one is not an error.
func (c Checkpoint) Remove() error {
	if err := os.Remove(c.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("resumable: checkpoint: %w", err)
	}
	return nil
}
