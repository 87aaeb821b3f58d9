// Package runtmp makes each run's private temporary directory and
// removes the ones that runs killed before their own clean-up left
// behind.
//
// A run removes its directory when it ends; a run killed with SIGKILL
// or by a power cut cannot. The directory's name carries the run's
// process id so a later run can tell an abandoned directory from one
// still in use.
package runtmp

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// prefix starts every run directory's name.
const prefix = "reasonix-run-"

// minAge keeps a directory whose process looks gone for a little while:
// a process id is checked after the directory is made, and a young
// directory costs nothing to keep until the next sweep.
const minAge = time.Minute

// New makes a private directory for this process under root (the
// system's temporary directory when root is empty).
func New(root string) (string, error) {
	dir, err := os.MkdirTemp(root, fmt.Sprintf("%s%d-", prefix, os.Getpid()))
	if err != nil {
		return "", fmt.Errorf("private temp dir: %w", err)
	}
	return dir, nil
}

// Sweep removes run directories under root (the system's temporary
// directory when empty) whose process is no longer running and which
// were last changed more than a minute before now. It returns how many
// it removed; a directory it cannot read or remove is left alone, as
// it may belong to another user.
func Sweep(root string, now time.Time) int {
	if root == "" {
		root = os.TempDir()
	}
	// Names only: the shared temporary directory can hold thousands of
	// entries, and a DirEntry for each (sorted, as os.ReadDir returns
	// them) costs more than the few this looks at closer.
	d, err := os.Open(root)
	if err != nil {
		return 0
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return 0
	}
	removed := 0
	for _, name := range names {
		pid, ok := pidOf(name)
		if !ok || pid == os.Getpid() || alive(pid) {
			continue
		}
		info, err := os.Lstat(filepath.Join(root, name))
		if err != nil || !info.IsDir() || now.Sub(info.ModTime()) < minAge {
			continue
		}
		if err := os.RemoveAll(filepath.Join(root, name)); err == nil || errors.Is(err, os.ErrNotExist) {
			removed++
		}
	}
	return removed
}

// pidOf reads the process id from a run directory's name
// ("reasonix-run-1234-567890"). Names from older versions carry no id
// and are left alone.
func pidOf(name string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return 0, false
	}
	id, _, ok := strings.Cut(rest, "-")
	if !ok {
		return 0, false
	}
	pid, err := strconv.Atoi(id)
	return pid, err == nil && pid > 0
}
