// Package githistory reads the versions of files kept in a git repository's
// history: the public archives whose commits are dated snapshots of a price list or
// a provider's published data (the SkyPilot catalog, the GCP pricing calculator's
// pricing.yml, copies of the AWS Spot Advisor file). It runs the git command; a
// version is a commit of HEAD's history that added or changed the file.
package githistory

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// ErrNotRepo is returned for a path that is not a git work tree or repository.
var ErrNotRepo = errors.New("not a git repository")

// Version is one version of one file: a commit that added or changed it.
type Version struct {
	Commit string    `json:"commit"`
	Time   time.Time `json:"time"` // committer time, UTC
	Path   string    `json:"path"`
}

// Short is the commit's first 12 hex digits, as messages name it.
func (v Version) Short() string { return Short(v.Commit) }

// Short is a commit's first 12 hex digits.
func Short(commit string) string { return commit[:min(len(commit), 12)] }

// command is git -C repo args…, never prompting, in the C locale.
func command(ctx context.Context, repo string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", repo}, args...)...)
	cmd.Env = append(cmd.Environ(), "GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	return cmd
}

// Versions lists the versions of the files pathspec matches (a git pathspec, e.g.
// "pricing.yml" or ":(glob)catalogs/v*/*/vms.csv") in repo's HEAD history, oldest
// first: commits in git log's order reversed, the files of one commit in path
// order. Deletions are not versions. A repository without commits has none.
func Versions(ctx context.Context, repo, pathspec string) ([]Version, error) {
	if out, err := command(ctx, repo, "rev-parse", "--git-dir").CombinedOutput(); err != nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrNotRepo, repo, strings.TrimSpace(string(out)))
	}
	cmd := command(ctx, repo, "log", "--reverse", "--format=%x00%H %ct", "--name-only", "--diff-filter=d",
		"--", pathspec)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("git log: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git log: %w", err)
	}
	var vs []Version
	var commit string
	var at time.Time
	sc := bufio.NewScanner(out)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if h, ok := strings.CutPrefix(line, "\x00"); ok {
			hash, ts, _ := strings.Cut(h, " ")
			sec, err := strconv.ParseInt(ts, 10, 64)
			if err != nil {
				_ = cmd.Wait()
				return nil, fmt.Errorf("git log: commit %s time %q", hash, ts)
			}
			commit, at = hash, time.Unix(sec, 0).UTC()
			continue
		}
		if line == "" || commit == "" {
			continue
		}
		vs = append(vs, Version{Commit: commit, Time: at, Path: line})
	}
	if err := sc.Err(); err != nil {
		_ = cmd.Wait()
		return nil, fmt.Errorf("git log: %w", err)
	}
	if err := cmd.Wait(); err != nil {
		if strings.Contains(stderr.String(), "does not have any commits") {
			return nil, nil
		}
		return nil, fmt.Errorf("git log: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return vs, nil
}

// Origin is the clone's origin URL, else its path: where its rows say they came
// from.
func Origin(ctx context.Context, repo string) string {
	out, err := command(ctx, repo, "remote", "get-url", "origin").Output()
	if u := strings.TrimSpace(string(out)); err == nil && u != "" {
		return u
	}
	return repo
}

// Blobs reads file versions through one `git cat-file --batch` process.
type Blobs struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

// OpenBlobs starts the reader of repo's file versions; Close ends it.
func OpenBlobs(ctx context.Context, repo string) (*Blobs, error) {
	cmd := command(ctx, repo, "cat-file", "--batch")
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	return &Blobs{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}, nil
}

// Read returns the content of path at commit.
func (b *Blobs) Read(commit, path string) ([]byte, error) {
	if _, err := fmt.Fprintf(b.in, "%s:%s\n", commit, path); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	head, err := b.out.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	f := strings.Fields(head)
	if len(f) != 3 || f[1] != "blob" {
		return nil, fmt.Errorf("git cat-file %s:%s: %s", Short(commit), path, strings.TrimSpace(head))
	}
	n, err := strconv.Atoi(f[2])
	if err != nil {
		return nil, fmt.Errorf("git cat-file: size %q", f[2])
	}
	data := make([]byte, n+1) // content and the trailing newline
	if _, err := io.ReadFull(b.out, data); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	return data[:n], nil
}

// Close ends the reader.
func (b *Blobs) Close() {
	b.in.Close()
	_ = b.cmd.Wait()
}
