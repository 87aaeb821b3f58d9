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
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// prefix starts every run directory's name.
const prefix = "reasonix-run-"

// minAge keeps a directory whose process looks gone for a little while:
// a process id is checked after the directory is made, and a young
// directory costs nothing to keep until the next sweep.
const minAge = time.Minute

// Dir is a run's private directory, named at once and made when the
// first command needs it (Make): a mkdir in the shared temporary
// directory is a journalled change to a large directory, 0.1-1 ms of
// mostly kernel time on a loaded machine, which a run that starts no
// command need not pay at all, and one that does pays after a model's
// answer, not on the way to the first request. The name goes into the
// sandbox's rules, the permission policy and the commands' environment
// before the directory exists.
type Dir struct {
	path string
	once sync.Once
	made bool
	err  error
}

// New names a private directory for this process under root (the
// system's temporary directory when root is empty, with its symlinks
// resolved, so the name is the one the sandbox and the kernel see). The
// name's random part comes from a generator seeded by the kernel, so
// another user cannot make it first; if something already has the name,
// Make reports that and the directory is not used.
func New(root string) *Dir {
	if root == "" {
		root = os.TempDir()
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	return &Dir{path: filepath.Join(root, fmt.Sprintf("%s%d-%d", prefix, os.Getpid(), rand.Uint64()))}
}

// Path is the directory's name; it may not exist yet (see Make).
func (d *Dir) Path() string { return d.path }

// Make makes the directory the first time it is called and reports
// whether that failed; later calls report the same.
func (d *Dir) Make() error {
	d.once.Do(func() {
		if err := os.Mkdir(d.path, 0o700); err != nil {
			d.err = fmt.Errorf("private temp dir: %w", err)
			return
		}
		d.made = true
	})
	return d.err
}

// Remove removes the directory and what it holds if this process made
// it, and reports whether it had; a Make after it fails.
func (d *Dir) Remove() bool {
	d.once.Do(func() { d.err = errors.New("private temp dir: the run has ended") })
	if !d.made {
		return false
	}
	_ = os.RemoveAll(d.path)
	return true
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
	return SweepDir(root, pidOf, func(pid int, info fs.FileInfo) bool {
		return pid != os.Getpid() && info.IsDir() && now.Sub(info.ModTime()) >= minAge && !Alive(pid)
	}, func(p string) error {
		if err := os.RemoveAll(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	})
}

// SweepDir removes the entries of dir that processes left behind: those
// whose name carries a process id (owner reports it, ok false for a name
// that is not such an entry) and that stale, given the id and the entry's
// Lstat, says are abandoned; remove removes one. It returns how many it
// removed; a directory it cannot read, or an entry it cannot remove, is
// no error: the next sweep tries again.
func SweepDir(dir string, owner func(name string) (pid int, ok bool), stale func(pid int, info fs.FileInfo) bool, remove func(path string) error) int {
	// Names only, then a stat of the few that match: a shared temporary
	// directory or a sessions folder can hold thousands of entries, and a
	// DirEntry for each (sorted, as os.ReadDir returns them) costs more.
	d, err := os.Open(dir)
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
		pid, ok := owner(name)
		if !ok {
			continue
		}
		p := filepath.Join(dir, name)
		info, err := os.Lstat(p)
		if err != nil || !stale(pid, info) {
			continue
		}
		if remove(p) == nil {
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
