package permission

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/nofollow"
	"github.com/reasonix/reasonix/tools"
)

// ControlGuard makes the protection of control files independent of how a
// call is parsed. Before each call of a tool that may write it fingerprints
// the control paths (and keeps a copy of small files); afterwards it looks
// again, and any change that no person approved for that very call is
// undone: created entries are removed, deleted ones recreated, modified
// ones restored with their content and mode.
//
// The guard keeps one baseline for the run. It is taken at the first
// watched call, refreshed when a person's turn starts (TurnStart, so edits
// made between turns become the baseline), after a call a person approved,
// and for files Reasonix writes itself (Accept). A change made between two
// calls of a turn, say by a background process an earlier call left
// running, is therefore undone after the next call. Calls that overlap (parallel subagents)
// are checked against the same baseline, so a change made during an
// approved call that overlaps an unapproved one may be undone too: the
// guard fails closed.
type ControlGuard struct {
	ws, home string
	publish  func(events.Event)
	log      *decisionLog

	mu       sync.Mutex
	inflight int
	base     *ctlSnap
	// last is the latest look and lastAt when it began: a file that has
	// not changed since (the same inode, size, times and mode) and whose
	// last change was well before that look keeps the hash and copy made
	// then, rather than being read again at every call (see reuse).
	last   *ctlSnap
	lastAt int64
	// homeRoots says whether the home's control paths are watched apart
	// from the workspace's .reasonix (they are not when the home is that
	// directory). Decided at the first scan: resolving both paths stats
	// each of their components, which every call's scan would repeat.
	homeRoots func() bool
	// MaxFile is the largest file whose content is kept (and so can be
	// restored); MaxTotal caps all kept content; MaxEntries caps the walk.
	MaxFile, MaxTotal int64
	MaxEntries        int
}

// ctlRoot is a watched path: a file or a directory walked to its leaves,
// less the excluded children (workspace-relative, slash-separated).
type ctlRoot struct {
	path    string
	exclude []string
	// self watches the entry itself, not what a folder holds: the .git
	// folder, whose hooks and config are watched by their paths. A call
	// that moves it away and leaves a .git file ("gitdir: elsewhere") in
	// its place makes git run hooks and read config from a folder no
	// watched path names, and the restore of .git/hooks could not even
	// make its folder; so the folder itself is watched by what it is (its
	// inode), and moved back (restoreDir).
	self bool
}

// Reasonix's own state lives next to control files in .reasonix (and in
// the home, which is .reasonix of the user's home directory); it is not
// watched.
var stateNames = []string{"sessions", "plans", "checkpoints", "history", "permissions.log", "tmp", "research", ".gitignore"}

// ctlSnap is one look at the control paths: every file and symlink, and
// the directories holding them (only so that directories a call created
// can be removed again).
type ctlSnap struct {
	files map[string]ctlEntry
	dirs  map[string]bool
}

// lookup is the entry for path in s, which may be nil.
func (s *ctlSnap) lookup(path string) (ctlEntry, bool) {
	if s == nil {
		return ctlEntry{}, false
	}
	e, ok := s.files[path]
	return e, ok
}

type ctlEntry struct {
	mode    fs.FileMode // type and permission bits
	size    int64
	mtime   int64
	ino     uint64
	ctime   int64 // status change time; 0 where unknown
	sum     [32]byte
	hashed  bool   // sum is valid
	content []byte // kept copy; nil when over the caps
	kept    bool
	link    string // symlink target
}

func (e ctlEntry) same(o ctlEntry) bool {
	if e.mode.IsDir() && o.mode.IsDir() {
		// Only a self root's folder is an entry: the same one, whatever
		// its mode.
		return e.ino == o.ino
	}
	if e.mode != o.mode || e.link != o.link {
		return false
	}
	if e.mode.IsRegular() {
		if e.hashed && o.hashed {
			return e.sum == o.sum
		}
		return e.size == o.size && e.mtime == o.mtime && e.ino == o.ino && e.hashed == o.hashed
	}
	return true
}

// NewControlGuard watches the control files of workspace and home.
func NewControlGuard(workspace, home string) *ControlGuard {
	if abs, err := filepath.Abs(workspace); err == nil {
		workspace = abs
	}
	if real, err := realPath(workspace); err == nil {
		workspace = real
	}
	// Both free of symlinks: an undo reaches its files without following
	// one (restore).
	if home != "" {
		if abs, err := filepath.Abs(home); err == nil {
			home = abs
		}
		if real, err := realPath(home); err == nil {
			home = real
		}
	}
	cg := &ControlGuard{ws: workspace, home: home, MaxFile: 1 << 20, MaxTotal: 32 << 20, MaxEntries: 20000}
	cg.homeRoots = sync.OnceValue(func() bool {
		return home != "" && !samePath(home, filepath.Join(workspace, ".reasonix"))
	})
	return cg
}

// ControlGuard returns a guard over the gate's workspace and home that
// publishes and logs like the gate.
func (g *Gate) ControlGuard() *ControlGuard {
	cg := NewControlGuard(g.policy.Workspace, g.policy.Home)
	cg.publish, cg.log = g.sh.publish, g.sh.log
	return cg
}

// roots are the watched paths, less the hooks folder core.hooksPath may
// add, which goes at hooksAt (hooksRoot: the scan has read .git/config by
// then).
func (cg *ControlGuard) roots() (r []ctlRoot, hooksAt int) {
	ws := func(rel string) string { return filepath.Join(cg.ws, filepath.FromSlash(rel)) }
	r = []ctlRoot{
		{path: ws("reasonix.toml")},
		{path: ws(".mcp.json")},
		{path: ws(".reasonix"), exclude: stateNames},
		{path: ws(".claude")},
		{path: ws(".agents/skills")},
		{path: ws(".git"), self: true},
		{path: ws(".git/hooks")},
		{path: ws(".git/config")},
		{path: ws(".git/config.worktree")},
	}
	for _, e := range otherPrograms {
		r = append(r, ctlRoot{path: ws(strings.TrimSuffix(e, "/"))})
	}
	hooksAt = len(r)
	if cg.homeRoots() {
		r = append(r,
			ctlRoot{path: filepath.Join(cg.home, "config.toml")},
			ctlRoot{path: filepath.Join(cg.home, "agents")},
			ctlRoot{path: filepath.Join(cg.home, "skills")},
			ctlRoot{path: filepath.Join(cg.home, "memory")},
		)
	}
	return r, hooksAt
}

// hooksRoot is the hooks folder core.hooksPath puts in the tree, which is
// .git/hooks too, or "" when there is none or it is .git/hooks itself.
// config is the scan's entry for .git/config: its kept copy is the
// file's content (read by that scan, or reused when unchanged), so the
// file is read here only when no copy was kept. Both folders are compared
// by what they are (two stats), not by resolving each path's components.
func (cg *ControlGuard) hooksRoot(config ctlEntry) string {
	h := hooksPath(cg.ws, cg.configText(config))
	if h == "" {
		return ""
	}
	if a, err := os.Stat(h); err == nil {
		if g, err := os.Stat(filepath.Join(cg.ws, ".git", "hooks")); err == nil && os.SameFile(a, g) {
			return ""
		}
	}
	return h
}

// maxModules bounds the submodules the guard watches.
const maxModules = 256

// moduleRoots are the watched paths of the workspace's submodules, which
// git runs hooks and reads config of as it does the root's (a plain `git
// status` in the workspace runs a submodule's core.fsmonitor): the
// hooks and config of each git directory under .git/modules (found by
// its HEAD; nested ones too), and each submodule's own .git that
// .gitmodules (gm, the scan's entry: its kept copy is the content) names,
// by what it is, as the root's .git, with its hooks and config when it
// is a folder. hooks are the hooks folders among them.
func (cg *ControlGuard) moduleRoots(gm ctlEntry) (r []ctlRoot, hooks []string) {
	addGitDir := func(d string) {
		h := filepath.Join(d, "hooks")
		r = append(r, ctlRoot{path: h}, ctlRoot{path: filepath.Join(d, "config")}, ctlRoot{path: filepath.Join(d, "config.worktree")})
		hooks = append(hooks, h)
	}
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		if depth > 8 || len(hooks) >= maxModules {
			return
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		for _, e := range ents {
			if !e.IsDir() {
				continue
			}
			p := filepath.Join(dir, e.Name())
			if _, err := os.Lstat(filepath.Join(p, "HEAD")); err == nil {
				addGitDir(p)
				walk(filepath.Join(p, "modules"), depth+1)
				continue
			}
			walk(p, depth+1) // a name with slashes (libs/foo)
		}
	}
	walk(filepath.Join(cg.ws, ".git", "modules"), 0)
	b := gm.content
	if !gm.kept {
		var err error
		if b, err = os.ReadFile(filepath.Join(cg.ws, ".gitmodules")); err != nil {
			return r, hooks
		}
	}
	for _, p := range submodulePaths(b) {
		g := filepath.Join(cg.ws, filepath.FromSlash(p), ".git")
		if rel, err := filepath.Rel(cg.ws, g); err != nil || rel == ".git" || strings.HasPrefix(rel, "..") {
			continue
		}
		r = append(r, ctlRoot{path: g, self: true})
		if fi, err := os.Lstat(g); err == nil && fi.IsDir() {
			addGitDir(g)
		}
		if len(r) > 4*maxModules {
			break
		}
	}
	return r, hooks
}

// submodulePaths are the `path = …` values of a .gitmodules file.
func submodulePaths(b []byte) []string {
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "path") {
			continue
		}
		v = strings.TrimSpace(v)
		if uq, err := strconv.Unquote(v); err == nil && strings.HasPrefix(v, `"`) {
			v = uq
		}
		if v != "" {
			out = append(out, v)
		}
	}
	return out
}

// configText is .git/config's content: the scan's kept copy (config is
// its entry), read only when none was kept.
func (cg *ControlGuard) configText(config ctlEntry) []byte {
	if config.kept {
		return config.content
	}
	b, _ := os.ReadFile(filepath.Join(cg.ws, ".git", "config"))
	return b
}

func samePath(a, b string) bool {
	a, b = filepath.Clean(a), filepath.Clean(b)
	if ra, err := realPath(a); err == nil {
		a = ra
	}
	if rb, err := realPath(b); err == nil {
		b = rb
	}
	return a == b
}

// racyMargin is how long before a look a file must have last changed for
// the look's hash of it to be trusted later (reuse). The kernel stamps a
// change with a coarse clock, a tick (at most 10 ms) behind; a second
// also covers the clock being slewed.
const racyMargin = int64(time.Second)

// reuse says whether the hash prev holds for a file can stand for the file
// now described by e. Its change time must be the same, which no call can
// forge (touch sets the modification time, not this one), and must
// predate the look that hashed it by more than the clock's coarseness: a
// change made in the same tick as that look could carry the very same
// stamp (git's "racy clean" entries).
func reuse(prev, e ctlEntry, prevAt int64) bool {
	return prev.hashed && e.ctime != 0 && prev.ctime == e.ctime && prev.ino == e.ino &&
		prev.size == e.size && prev.mtime == e.mtime && prev.mode == e.mode && e.ctime < prevAt-racyMargin
}

// scan fingerprints every control path. Called with cg.mu held.
func (cg *ControlGuard) scan() *ctlSnap {
	out := &ctlSnap{files: map[string]ctlEntry{}, dirs: map[string]bool{}}
	at := time.Now().UnixNano()
	prev, prevAt := cg.last, cg.lastAt
	var total int64
	keep := func(e *ctlEntry, b []byte) {
		if total+int64(len(b)) <= cg.MaxTotal {
			e.content, e.kept = b, true
			total += int64(len(b))
		}
	}
	// gitHooks are the hooks folders of git directories (the root's,
	// then those of submodules, added below).
	gitHooks := map[string]bool{filepath.Join(cg.ws, ".git", "hooks"): true}
	add := func(path string, fi fs.FileInfo) {
		if fi.IsDir() {
			out.dirs[path] = true
			return
		}
		e := ctlEntry{mode: fi.Mode() & (fs.ModeType | fs.ModePerm), size: fi.Size(), mtime: fi.ModTime().UnixNano(), ino: inode(fi), ctime: changeTime(fi)}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			e.link, _ = os.Readlink(path)
		case fi.Mode().IsRegular() && strings.HasSuffix(path, ".sample") && gitHooks[filepath.Dir(path)]:
			// Git never runs a hook sample, so only that it is there
			// counts, not what it says or its mode (reading a fresh
			// repository's dozen at every look was most of a look); a
			// sample renamed to a hook's name is a new file.
			e = ctlEntry{}
		case fi.Mode().IsRegular() && fi.Size() <= cg.MaxFile:
			if p, ok := prev.lookup(path); ok && reuse(p, e, prevAt) {
				e.sum, e.hashed = p.sum, true
				if p.kept {
					keep(&e, p.content)
				}
				break
			}
			if b, err := os.ReadFile(path); err == nil && int64(len(b)) <= cg.MaxFile {
				e.sum, e.hashed = sha256.Sum256(b), true
				keep(&e, b)
			}
		}
		out.files[path] = e
	}
	n := 0
	roots, hooksAt := cg.roots()
	gitConfig := filepath.Join(cg.ws, ".git", "config")
	modules := false
	for i := 0; i <= len(roots); i++ {
		if i == hooksAt {
			if h := cg.hooksRoot(out.files[gitConfig]); h != "" {
				roots = slices.Insert(roots, i, ctlRoot{path: h})
			}
			// Files .git/config includes are git's config as much as
			// it is (a project's shared settings file, included by a
			// relative path): a core.fsmonitor written there runs at
			// the person's next git status.
			for _, p := range includePaths(cg.ws, cg.configText(out.files[gitConfig])) {
				roots = slices.Insert(roots, i, ctlRoot{path: p})
			}
			hooksAt = -1
		}
		if i == len(roots) && !modules {
			// Submodules last: their paths come from .gitmodules, which
			// this scan has read by now.
			modules = true
			more, hooks := cg.moduleRoots(out.files[filepath.Join(cg.ws, ".gitmodules")])
			roots = append(roots, more...)
			for _, h := range hooks {
				gitHooks[h] = true
			}
		}
		if i == len(roots) {
			break
		}
		r := roots[i]
		fi, err := os.Lstat(r.path)
		if err != nil {
			continue
		}
		if r.self && fi.IsDir() {
			out.files[r.path] = ctlEntry{mode: fi.Mode() & (fs.ModeType | fs.ModePerm), ino: inode(fi)}
			continue
		}
		add(r.path, fi)
		if r.self {
			continue
		}
		if !fi.IsDir() {
			continue
		}
		_ = filepath.WalkDir(r.path, func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == r.path {
				return nil
			}
			if n++; n > cg.MaxEntries {
				return filepath.SkipAll
			}
			if filepath.Dir(p) == r.path && excluded(d.Name(), r.exclude) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			info, err := os.Lstat(p)
			if err != nil {
				return nil
			}
			add(p, info)
			return nil
		})
	}
	cg.last, cg.lastAt = out, at
	return out
}

func excluded(name string, list []string) bool {
	for _, x := range list {
		if strings.EqualFold(name, x) || strings.HasSuffix(strings.ToLower(name), ".lock") {
			return true
		}
	}
	return false
}

// Watch is called before a call of a tool that may write. The function it
// returns is called after the call with the gate's verdict on it; it
// returns "" or the error to append to the call's result. A command a
// person approved may change any control file; a file tool's call only
// the files the person was asked about (tools.Verdict.Writes).
func (cg *ControlGuard) Watch(session, role, tool string) func(v tools.Verdict) string {
	cg.mu.Lock()
	if cg.base == nil {
		cg.base = cg.scan()
	}
	cg.inflight++
	cg.mu.Unlock()
	return func(v tools.Verdict) string {
		cg.mu.Lock()
		defer cg.mu.Unlock()
		cg.inflight--
		now := cg.scan()
		if v.Person && v.Writes == nil {
			cg.base = now
			return ""
		}
		changed := diff(cg.base.files, now.files)
		if v.Person {
			changed = cg.acceptNamed(now, changed, v.Writes)
		}
		if len(changed) == 0 {
			return ""
		}
		failed := cg.revert(cg.base, now, changed)
		// A folder moved back brings what the call put in it, which the
		// look after the call could not see where it was: look again.
		for pass := 0; pass < 2; pass++ {
			again := diff(cg.base.files, cg.scan().files)
			if len(again) == 0 {
				break
			}
			failed = cg.revert(cg.base, cg.last, again)
			for _, q := range again {
				if !slices.Contains(changed, q) {
					changed = append(changed, q)
				}
			}
		}
		sort.Strings(changed)
		names := make([]string, len(changed))
		for i, p := range changed {
			names[i] = cg.name(p)
		}
		what := strings.Join(names, ", ")
		msg := fmt.Sprintf("Error: this call changed control file %s, which needs a person's approval; the change was reverted", what)
		if len(failed) > 0 {
			msg += fmt.Sprintf(" (except %s, which could not be restored)", strings.Join(failed, ", "))
		}
		msg += ". Do not retry it another way; tell the user what you wanted to change and why."
		if cg.publish != nil {
			cg.publish(events.Event{Type: events.Notice, Session: session, Role: role,
				Text: fmt.Sprintf("control files: %s changed %s without a person's approval; reverted", tool, what)})
		}
		if cg.log != nil {
			for _, n := range names {
				_ = cg.log.append(logEntry{Session: session, Role: role, Tool: tool, Subject: n, Decision: "revert", By: "guard"})
			}
		}
		if len(failed) > 0 {
			// What stays changed becomes the baseline, so it is reported once.
			cg.base = cg.scan()
		}
		return msg
	}
}

// acceptNamed takes the changes of changed at or below one of named (the
// files a person approved writing) into the baseline, with the folders
// made on the way to them, and returns the others.
func (cg *ControlGuard) acceptNamed(now *ctlSnap, changed, named []string) []string {
	covered := func(p string) bool {
		return slices.ContainsFunc(named, func(n string) bool { return within(p, filepath.Clean(n)) })
	}
	var rest []string
	for _, p := range changed {
		if !covered(p) {
			rest = append(rest, p)
			continue
		}
		if e, ok := now.files[p]; ok {
			cg.base.files[p] = e
		} else {
			delete(cg.base.files, p)
		}
	}
	for d := range now.dirs {
		if !cg.base.dirs[d] && slices.ContainsFunc(named, func(n string) bool { return within(filepath.Clean(n), d) }) {
			cg.base.dirs[d] = true
		}
	}
	return rest
}

// name is how a control path is shown: workspace-relative, or absolute.
func (cg *ControlGuard) name(p string) string {
	if rel, err := filepath.Rel(cg.ws, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.ToSlash(rel)
	}
	return p
}

// diff lists the paths created, deleted or changed, sorted.
func diff(base, now map[string]ctlEntry) []string {
	var out []string
	for p, e := range now {
		if b, ok := base[p]; !ok || !b.same(e) {
			out = append(out, p)
		}
	}
	for p := range base {
		if _, ok := now[p]; !ok {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// revert makes the changed paths what base holds and removes directories
// the call created (when nothing else is left in them). It returns the
// paths it could not restore (a large file, an I/O error).
func (cg *ControlGuard) revert(base, now *ctlSnap, changed []string) []string {
	var failed []string
	fail := func(p string) { failed = append(failed, cg.name(p)) }
	// Remove what is new or of another type, deepest first.
	rm := append([]string(nil), changed...)
	for d := range now.dirs {
		if !base.dirs[d] {
			rm = append(rm, d)
		}
	}
	sort.Slice(rm, func(i, j int) bool { return len(rm[i]) > len(rm[j]) })
	for _, p := range rm {
		if now.dirs[p] {
			if !base.dirs[p] {
				_ = nofollow.Remove(p) // only if empty: Reasonix's own state stays
			}
			continue
		}
		n, isNow := now.files[p]
		if !isNow {
			continue
		}
		b, wasBase := base.files[p]
		if n.mode.IsDir() {
			// Another folder where the watched one was: set aside, not
			// deleted (a person may want what it holds).
			if err := nofollow.Rename(p, asideName(p)); err != nil {
				fail(p)
			}
			continue
		}
		if !wasBase || b.mode.Type() != n.mode.Type() || b.link != n.link {
			if err := nofollow.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				fail(p)
			}
		}
	}
	// Recreate and restore, shallowest first.
	sort.Strings(changed)
	for _, p := range changed {
		b, ok := base.files[p]
		if !ok {
			continue
		}
		if err := cg.restore(p, b); err != nil {
			fail(p)
		}
	}
	return failed
}

func (cg *ControlGuard) restore(p string, b ctlEntry) error {
	// A command left running may swap a folder on p for a symlink while
	// the guard works: every step is taken without following one
	// (internal/nofollow), so an undo never removes or writes outside.
	cur, err := os.Lstat(p)
	exists := err == nil
	switch {
	case b.mode == 0 && exists && cur.Mode().IsRegular():
		// A hook sample, noted only as there (scan): it is back with
		// the folder it was moved away in.
		return nil
	case b.mode.IsDir():
		return cg.restoreDir(p, b)
	case b.mode&fs.ModeSymlink != 0:
		if exists {
			if t, _ := os.Readlink(p); t == b.link && cur.Mode()&fs.ModeSymlink != 0 {
				return nil
			}
		}
		return replace(p, func(d *os.File, tmp string) error { return nofollow.SymlinkIn(b.link, d, tmp) })
	case b.mode.IsRegular():
		if !b.kept {
			return fmt.Errorf("no copy kept")
		}
		if exists && cur.Mode().IsRegular() {
			if f, err := nofollow.Open(p, nofollow.ReadFlags, 0); err == nil {
				now, rerr := io.ReadAll(io.LimitReader(f, int64(len(b.content))+1))
				if rerr == nil && bytes.Equal(now, b.content) {
					err := f.Chmod(b.mode.Perm())
					f.Close()
					return err
				}
				f.Close()
			}
		}
		// A fresh file renamed over the old one: a hard link the call
		// made to the control file does not carry the old content out.
		return replace(p, func(d *os.File, tmp string) error {
			f, err := nofollow.CreateIn(d, tmp)
			if err != nil {
				return err
			}
			_, werr := f.Write(b.content)
			if werr == nil {
				werr = f.Chmod(b.mode.Perm())
			}
			if cerr := f.Close(); werr == nil {
				werr = cerr
			}
			return werr
		})
	}
	return fmt.Errorf("cannot restore %s", b.mode.Type())
}

// replace makes a temporary entry with make in p's folder (made where
// missing) and renames it over p; what stood at p is gone, a non-empty
// folder excepted.
func replace(p string, make func(d *os.File, tmp string) error) error {
	d, err := nofollow.OpenDir(filepath.Dir(p), true)
	if err != nil {
		return err
	}
	defer d.Close()
	tmp := fmt.Sprintf(".reasonix-guard-%d", time.Now().UnixNano())
	if err := make(d, tmp); err != nil {
		_ = nofollow.RemoveIn(d, tmp)
		return err
	}
	if err := nofollow.RenameIn(d, tmp, d, filepath.Base(p)); err != nil {
		// A folder in the way: out of it, then again.
		if rerr := nofollow.RemoveIn(d, filepath.Base(p)); rerr == nil {
			err = nofollow.RenameIn(d, tmp, d, filepath.Base(p))
		}
		if err != nil {
			_ = nofollow.RemoveIn(d, tmp)
			return err
		}
	}
	return nil
}

// asideName is where a folder found in place of a watched one is moved.
func asideName(p string) string {
	return fmt.Sprintf("%s.reasonix-moved-%d", p, time.Now().UnixNano())
}

// restoreDir moves the watched folder b describes (by its inode) back to
// p, from wherever in the workspace the call renamed it to (a rename
// keeps the inode; a confined command can only write inside the
// workspace). Not found, an empty folder is made at p so its watched
// files can be restored, and the loss is reported.
func (cg *ControlGuard) restoreDir(p string, b ctlEntry) error {
	if cur, err := os.Lstat(p); err == nil {
		if cur.IsDir() && inode(cur) == b.ino {
			return nil
		}
		if err := nofollow.Rename(p, asideName(p)); err != nil {
			return err
		}
	}
	found := ""
	if b.ino != 0 {
		n := 0
		_ = filepath.WalkDir(cg.ws, func(q string, d fs.DirEntry, err error) error {
			if err != nil || found != "" {
				return filepath.SkipDir
			}
			if n++; n > cg.MaxEntries {
				return filepath.SkipAll
			}
			if !d.IsDir() {
				return nil
			}
			if fi, err := d.Info(); err == nil && inode(fi) == b.ino && q != cg.ws {
				found = q
				return filepath.SkipAll
			}
			if q != cg.ws && filepath.Dir(q) != cg.ws && d.Name() == "objects" {
				return filepath.SkipDir // a repository's objects hold no folder of interest
			}
			return nil
		})
	}
	if found != "" {
		return nofollow.Rename(found, p)
	}
	d, err := nofollow.OpenDir(p, true)
	if err != nil {
		return err
	}
	d.Close()
	return fmt.Errorf("%s was moved where it could not be found; an empty folder was made in its place", p)
}

// TurnStart takes a new baseline when no watched call is running, so what
// changed since (a person's edits between turns) is accepted. It is called
// when a person's turn starts. Between turn starts the baseline moves only
// for approved calls and [ControlGuard.Accept]: a change that a process
// left running by an earlier call makes between two calls is undone after
// the next one.
//
// What changed since the previous baseline is kept, but said: a notice
// names it and the decision log records it ("kept", by "turn start"), so
// a change that a process left running made after the last turn (which
// cannot be told from the person's own edit) does not pass unseen.
func (cg *ControlGuard) TurnStart() {
	cg.mu.Lock()
	defer cg.mu.Unlock()
	if cg.inflight != 0 {
		return
	}
	prev := cg.base
	cg.base = cg.scan()
	if prev == nil {
		return
	}
	changed := diff(prev.files, cg.base.files)
	if len(changed) == 0 {
		return
	}
	names := make([]string, len(changed))
	for i, p := range changed {
		names[i] = cg.name(p)
	}
	if cg.publish != nil {
		cg.publish(events.Event{Type: events.Notice, Text: fmt.Sprintf("control files changed since the last turn, kept: %s "+
			"(if you did not change them, a process left running may have: check them)", strings.Join(names, ", "))})
	}
	if cg.log != nil {
		for _, n := range names {
			_ = cg.log.append(logEntry{Subject: n, Decision: "kept", By: "turn start"})
		}
	}
}

// Accept makes the current content of path part of the baseline: Reasonix
// calls it after writing a control file itself (an "always allow" rule
// saved to reasonix.toml), so a call running meanwhile does not undo it.
func (cg *ControlGuard) Accept(path string) {
	if cg == nil {
		return
	}
	cg.mu.Lock()
	defer cg.mu.Unlock()
	if cg.base == nil {
		return
	}
	now := cg.scan()
	path = filepath.Clean(path)
	if e, ok := now.files[path]; ok {
		cg.base.files[path] = e
	} else {
		delete(cg.base.files, path)
	}
}
