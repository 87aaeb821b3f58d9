package rules

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// KindNested labels a rules file of a folder below the working
// directory, read when a session's work first reaches that folder.
const KindNested = "nested"

// Nested finds the rules files of folders below the working directory
// that a session's file tools reach, as Claude Code reads a subfolder's
// CLAUDE.md once it reads a file there. The prefix stays frozen: what it
// finds joins the result of the call that reached the folder, once per
// session: a file the prefix already holds (a top CLAUDE.md importing
// it), or an earlier call's result, is not attached again. Safe for
// concurrent use.
type Nested struct {
	opts Options
	// cwd is the working directory as seen from the session's root (a
	// plan worker's worktree holds the same tree elsewhere).
	cwd string
	// prefix returns the files the prefix holds, as seen from the root;
	// asked once, at the first folder reached.
	prefix func() []string
	mu     sync.Mutex
	// dirs are the folders already looked at.
	dirs map[string]bool
	// inPrefix are the identities of the files the prefix holds (nil
	// until the first folder is reached), attached those of the rules
	// files attached to results the session's history carries (as the
	// session recorded them, never as the results' text says): the
	// session holds both.
	inPrefix map[string]bool
	attached map[string]bool
}

// NewNested returns the finder of one session whose files live under
// root (the workspace, or a worktree of it); opts are the options the
// rules were loaded with, and prefix, when set, returns the files the
// prefix they loaded holds (Prefix.Files), asked when a call first
// reaches a folder.
func NewNested(opts Options, root string, prefix func() []string) *Nested {
	cwd := opts.Cwd
	if cwd == "" {
		cwd = opts.Workspace
	}
	moved := func(p string) string { return p }
	if root != "" && opts.Workspace != "" && filepath.Clean(root) != filepath.Clean(opts.Workspace) {
		ws := filepath.Clean(opts.Workspace)
		moved = func(p string) string {
			if rel, err := filepath.Rel(ws, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return filepath.Join(root, rel)
			}
			return p
		}
		cwd = moved(cwd)
	}
	if root == "" {
		root = cwd
	}
	n := &Nested{opts: opts, cwd: filepath.Clean(cwd), dirs: map[string]bool{}, attached: map[string]bool{}}
	if prefix != nil {
		n.prefix = func() []string {
			files := prefix()
			for i, f := range files {
				files[i] = moved(f)
			}
			return files
		}
	}
	n.opts.Workspace = root
	return n
}

// nestedIntro opens what Attach returns.
const nestedIntro = "This call reached a folder with rules files of its own."

// Hold makes what the session holds the prefix's files and files, the
// rules files Attach returned for the tool results its history still
// carries (after a resumed session's history is restored or a compaction
// pruned or folded some away), as the session recorded them beside each
// result: never read from a result's text, which a file the model read
// could fill with an imitation of an attachment to keep a folder's rules
// out. A folder whose rules are among them is not attached again, one
// whose rules left the history is, when a call reaches it.
func (n *Nested) Hold(files []string) {
	if n == nil {
		return
	}
	attached := map[string]bool{}
	for _, p := range files {
		if filepath.IsAbs(p) {
			attached[identity(p)] = true
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.attached = attached
	n.dirs = map[string]bool{}
}

// held returns the identities of the files the session holds, the
// prefix's read the first time. Call with mu held.
func (n *Nested) held() map[string]bool {
	if n.inPrefix == nil {
		n.inPrefix = map[string]bool{}
		if n.prefix != nil {
			for _, f := range n.prefix() {
				n.inPrefix[identity(f)] = true
			}
		}
	}
	held := make(map[string]bool, len(n.inPrefix)+len(n.attached))
	for id := range n.inPrefix {
		held[id] = true
	}
	for id := range n.attached {
		held[id] = true
	}
	return held
}

// Attach returns the rules files the session does not hold, of the folders between
// the working directory (exclusive) and each of paths (relative to the
// session's root, or absolute), each in a <rules kind="nested"> block
// under a line saying what they are; "" when there is none. files are
// the files that text holds (the rules files and their imports), for
// the session to record beside the result and give back to Hold.
func (n *Nested) Attach(paths []string) (text string, files []string) {
	if n == nil || n.cwd == "" {
		return "", nil
	}
	var found []string
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, p := range paths {
		if p == "" {
			continue
		}
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(n.opts.Workspace, p)
		}
		abs = filepath.Clean(abs)
		dir := abs
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			dir = filepath.Dir(abs)
		}
		rel, err := filepath.Rel(n.cwd, dir)
		if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		cur := n.cwd
		for _, el := range strings.Split(rel, string(filepath.Separator)) {
			cur = filepath.Join(cur, el)
			if n.dirs[cur] {
				continue
			}
			n.dirs[cur] = true
			for _, name := range ProjectFiles {
				f := filepath.Join(cur, name)
				if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() {
					found = append(found, f)
				}
			}
		}
	}
	if len(found) == 0 {
		return "", nil
	}
	// The loader skips what the session holds (an import of such a file
	// says "included above"); what it reads is attached.
	l := &loader{opts: n.opts, budget: TotalCap, seen: n.held()}
	var blocks []string
	for _, f := range found {
		if pt, ok := l.top(KindNested, f, false); ok {
			blocks = append(blocks, pt.Text)
			for _, p := range append([]string{f}, pt.Imports...) {
				n.attached[identity(p)] = true
				files = append(files, p)
			}
		}
	}
	for _, note := range l.notices {
		blocks = append(blocks, "("+note+")")
	}
	if len(blocks) == 0 {
		return "", nil
	}
	return nestedIntro + " Follow them for the files under that folder:\n" + strings.Join(blocks, "\n"), files
}
