package permission

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// SandboxHelperArg, as a program's first argument, makes the Reasonix
// binary the sandbox's helper (RunSandboxHelper): cmd/reasonix hands it
// the rest of its arguments before anything else.
const SandboxHelperArg = "__reasonix-sandbox"

// Hidden is what the sandbox hides from commands for the Read deny rules
// that name paths inside the workspace, where Landlock cannot deny a
// single file (see ReadRuleDenies). It is kept up to date at each call:
//
//   - Rules naming one path are checked at every call (a stat each).
//   - Glob rules (Read(./.env) is **/.env) are matched by a bounded walk
//     of the workspace, which skips .git and node_modules, at the first
//     call; a **/NAME rule's NAME at the workspace root is checked at
//     every call too. On Linux each directory walked is watched
//     (inotify; past a budget of watches, or where inotify fails, its
//     mtime and ctime are compared at every call instead), and the walk
//     is made again when a directory appears, moves or goes, or a file
//     whose name a rule matches appears, so one made or moved in later
//     by anyone is hidden from the next command.
//   - Each file or folder found is followed wherever it is renamed (on
//     Linux, a descriptor kept open on it, whose path the kernel keeps
//     current), so that renaming a folder holding it (mv app app2), or
//     moving it out of the workspace into another writable tree, does
//     not unhide it from the next command.
//
// Each call costs a stat per one-path rule, a read of the watch's queue
// and two system calls per file found; the walk is made only when
// something it depends on changed.
//
// The same list, made by ProtectedWrites for the Edit deny rules, is
// what the sandbox makes read-only for commands instead of hiding it.
type Hidden struct {
	ws    string
	fixed []string
	globs []Rule
	// readOnly: the files are mounted read-only over themselves
	// (ProtectedWrites), not hidden.
	readOnly bool
	mu       sync.Mutex
	st       *hiddenState // the platform's part, guarded by mu
}

// hiddenFile is one path hidden (or made read-only), and which file it
// was when listed (device and inode number; zero where the platform
// does not say), so the helper can refuse to mount over another file
// put in its place.
type hiddenFile struct {
	path     string
	dev, ino uint64
	readOnly bool
	// redact, when set, names the variables whose lines are left out of
	// a copy of the file (a dotenv file) mounted over it instead.
	redact []string
}

// HiddenReads returns what the sandbox hides from commands for the Read
// deny rules (raw rule text) that name paths inside workspace; nil when
// none does.
func HiddenReads(deny []string, workspace string) *Hidden {
	return pathRules(deny, workspace, FamilyRead)
}

// ProtectedWrites returns what the sandbox makes read-only for commands
// for the Edit deny rules (raw rule text; Write(…) is the same family)
// that name paths inside workspace, where Landlock cannot deny a write
// (the workspace's rule grants writing all of it); nil when none does.
// The files and folders are found and followed as HiddenReads' are. Only
// what exists can be protected: a file made later under a denied folder
// that did not exist when the command started is the gate's and no
// mount's.
func ProtectedWrites(deny []string, workspace string) *Hidden {
	h := pathRules(deny, workspace, FamilyEdit)
	if h != nil {
		h.readOnly = true
	}
	return h
}

// pathRules lists the paths inside workspace that the deny rules of
// family (Read or Edit) name.
func pathRules(deny []string, workspace, family string) *Hidden {
	ws, err := filepath.Abs(workspace)
	if err != nil || ws == "" {
		return nil
	}
	h := &Hidden{ws: ws}
	for _, raw := range deny {
		r, err := ParseRule(raw)
		if err != nil || r.Family != family || r.pattern == "" {
			continue
		}
		pat := strings.TrimSuffix(r.pattern, "/**")
		switch {
		case strings.HasPrefix(pat, "/"):
			// Absolute: inside the workspace only (outside it the read
			// deny list covers it, see ReadRuleDenies).
			p := filepath.Clean(filepath.FromSlash(pat))
			if strings.ContainsAny(pat, `*?[{\`) || p == ws || !within(p, ws) {
				continue
			}
			h.fixed = append(h.fixed, p)
		case !strings.ContainsAny(pat, `*?[{\`):
			h.fixed = append(h.fixed, filepath.Join(ws, filepath.FromSlash(pat)))
		default:
			h.globs = append(h.globs, r)
			if name, ok := strings.CutPrefix(pat, "**/"); ok && !strings.ContainsAny(name, `*?[{\/`) {
				// Read(./.env): the workspace's own .env is checked at
				// every call, so one made after the walk is hidden at once.
				h.fixed = append(h.fixed, filepath.Join(ws, name))
			}
		}
	}
	if len(h.fixed) == 0 && len(h.globs) == 0 {
		return nil
	}
	h.st = newHiddenState(h)
	return h
}

// Paths lists the files and folders hidden now.
func (h *Hidden) Paths() []string {
	files := h.files()
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.path
	}
	return out
}

// matches reports whether a glob rule matches path (absolute, inside the
// workspace).
func (h *Hidden) matches(path string) bool {
	rel := Policy{Workspace: h.ws}.relPaths([]string{path})[0]
	for _, r := range h.globs {
		if r.matchPath(rel) || (foldCase && r.matchPathFold(rel)) {
			return true
		}
	}
	return false
}

// walk walks the workspace for the glob rules, within maxReaderWalk
// entries and past .git and node_modules: dir is called with each
// directory it will list, before listing it, and found with each path a
// rule matches (a folder that matches is not entered).
func (h *Hidden) walk(dir, found func(string)) {
	n := 0
	_ = filepath.WalkDir(h.ws, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if path != h.ws {
			if n++; n > maxReaderWalk {
				return filepath.SkipAll
			}
			if e.IsDir() && (e.Name() == ".git" || e.Name() == "node_modules") {
				return filepath.SkipDir
			}
			if h.matches(path) {
				found(path)
				if e.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		if e.IsDir() {
			dir(path)
		}
		return nil
	})
}

// redactDotEnv returns the dotenv content b less the lines that set one of
// names: KEY=VALUE with or without "export " before it and blanks around,
// as the configuration's .env reader takes them. Every other line, and
// each line's ending, is kept as it was.
func redactDotEnv(b []byte, names []string) []byte {
	out := make([]byte, 0, len(b))
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line = b[:i+1]
		}
		b = b[len(line):]
		t := strings.TrimSpace(string(line))
		t = strings.TrimPrefix(t, "export ")
		if key, _, ok := strings.Cut(t, "="); ok && slices.Contains(names, strings.TrimSpace(key)) {
			continue
		}
		out = append(out, line...)
	}
	return out
}

// homeState are what Reasonix keeps in its home that a run may make after
// start-up: keys, configuration, transcripts, checkpoints (copies of the
// workspace's files), history and the decision log (memory and plans are
// read through their tools, which would refuse them).
var homeState = []string{"config.toml", "credentials.json", "credentials.lock", "credentials.json.lock",
	"sessions", "seals", "checkpoints", "history", "projects", "permissions.log",
	"mcp-trust.json", "trusted-hooks.json", "trusted-projects.json"}

// InsideDenyRules turns the entries of the read deny list (deny, with the
// exceptions beneath them, as [DenyReadPaths] returns them) that lie
// inside one of workspaces (the workspace as given and as resolved) into
// Read deny rules. Landlock cannot deny a read inside a writable tree, so
// without them a workspace that is a home directory left ~/.ssh, ~/.aws
// and Reasonix's own home readable; as rules, the gate and the file tools
// refuse them and the sandbox hides them from commands ([HiddenReads]).
// An entry with exceptions beneath it (Reasonix's home, whose skills
// commands run) is denied child by child as it is now, less the
// exceptions.
func InsideDenyRules(deny, except []string, workspaces ...string) []string {
	var out []string
	// Rules name such a path relative to the workspace: the gate matches
	// a path inside it in that form.
	add := func(p string) {
		for _, ws := range workspaces {
			rel, err := filepath.Rel(ws, p)
			if ws == "" || err != nil || !within(p, ws) || p == ws {
				continue
			}
			rel = "./" + filepath.ToSlash(rel)
			for _, r := range []string{"Read(" + rel + ")", "Read(" + rel + "/**)"} {
				if !slices.Contains(out, r) {
					out = append(out, r)
				}
			}
		}
	}
	for _, p := range deny {
		if !slices.ContainsFunc(workspaces, func(ws string) bool { return ws != "" && p != ws && within(p, ws) }) {
			continue
		}
		var kept []string
		for _, e := range except {
			if within(e, p) {
				kept = append(kept, e)
			}
		}
		if len(kept) == 0 {
			add(p)
			continue
		}
		// Its children now, and those Reasonix may make there later.
		names := slices.Clone(homeState)
		entries, _ := os.ReadDir(p)
		for _, e := range entries {
			names = append(names, e.Name())
		}
		for _, n := range names {
			c := filepath.Join(p, n)
			if !slices.ContainsFunc(kept, func(k string) bool { return within(k, c) }) {
				add(c)
			}
		}
	}
	return out
}
