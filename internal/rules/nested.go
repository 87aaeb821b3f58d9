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
// session. Safe for concurrent use.
type Nested struct {
	opts Options
	// cwd is the working directory as seen from the session's root (a
	// plan worker's worktree holds the same tree elsewhere).
	cwd string
	mu  sync.Mutex
	// dirs are the folders already looked at.
	dirs map[string]bool
}

// NewNested returns the finder of one session whose files live under
// root (the workspace, or a worktree of it); opts are the options the
// rules were loaded with.
func NewNested(opts Options, root string) *Nested {
	cwd := opts.Cwd
	if cwd == "" {
		cwd = opts.Workspace
	}
	if root != "" && opts.Workspace != "" && filepath.Clean(root) != filepath.Clean(opts.Workspace) {
		if rel, err := filepath.Rel(opts.Workspace, cwd); err == nil && !strings.HasPrefix(rel, "..") {
			cwd = filepath.Join(root, rel)
		}
	}
	if root == "" {
		root = cwd
	}
	n := &Nested{opts: opts, cwd: filepath.Clean(cwd), dirs: map[string]bool{}}
	n.opts.Workspace = root
	return n
}

// Attach returns the rules files, not seen before, of the folders between
// the working directory (exclusive) and each of paths (relative to the
// session's root, or absolute), each in a <rules kind="nested"> block
// under a line saying what they are; "" when there is none.
func (n *Nested) Attach(paths []string) string {
	if n == nil || n.cwd == "" {
		return ""
	}
	var files []string
	n.mu.Lock()
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
					files = append(files, f)
				}
			}
		}
	}
	n.mu.Unlock()
	if len(files) == 0 {
		return ""
	}
	l := &loader{opts: n.opts, budget: TotalCap, seen: map[string]bool{}}
	var blocks []string
	for _, f := range files {
		if pt, ok := l.top(KindNested, f, false); ok {
			blocks = append(blocks, pt.Text)
		}
	}
	for _, note := range l.notices {
		blocks = append(blocks, "("+note+")")
	}
	if len(blocks) == 0 {
		return ""
	}
	return "This call reached a folder with rules files of its own. Follow them for the files under that folder:\n" + strings.Join(blocks, "\n")
}
