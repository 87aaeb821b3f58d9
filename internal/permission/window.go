package permission

import (
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"
)

// byPlanWindow is the log's "by" for an edit allowed by an open write window.
const byPlanWindow = "plan-window"

// writeWindow is the short period after a person approves a plan in which
// the plan's edits are not asked about again: they have just read and
// approved what is about to be written, and a prompt per file would only
// teach them to approve without reading.
//
// It only ever turns an ask into an allow for Edit-family tools (write_file,
// edit_file, multi_edit, patch, move_file) whose every path lies inside the
// workspace and, when the plan listed files, matches one of them. Plan mode,
// deny rules and explicit ask rules still apply, bash is never covered, and
// dangerous commands (all bash) still need a fresh answer.
type writeWindow struct {
	mu    sync.Mutex
	until time.Time
	// open is false when closed; until alone cannot say so because the
	// zero time is a valid deadline for an injected clock.
	open bool
	// all covers every workspace file; otherwise only patterns.
	all      bool
	patterns []string
}

// OpenWriteWindow opens (or replaces) the write window for d: until it
// ends, an Edit-family call that the policy would ask about is allowed
// without a prompt and logged with by "plan-window", provided every path it
// touches is inside the workspace and, when paths is not empty, covered by
// one of them. paths are the plan's files, relative to the workspace (or
// absolute inside it); an entry names a file, a directory (covering what is
// under it) or a doublestar glob. Entries outside the workspace or with ".."
// are ignored, so a plan cannot widen the window beyond the workspace; if
// every entry is ignored the window covers nothing. Deny rules, explicit
// ask rules and plan mode still apply, and bash is never covered. d <= 0
// closes the window. The window is shared by every view of the gate.
func (g *Gate) OpenWriteWindow(d time.Duration, paths []string) {
	if d <= 0 {
		g.CloseWriteWindow()
		return
	}
	var pats []string
	for _, p := range paths {
		if pat, ok := g.windowPattern(p); ok {
			pats = append(pats, pat)
		}
	}
	w := &g.sh.window
	w.mu.Lock()
	defer w.mu.Unlock()
	w.open, w.until = true, g.sh.now().Add(d)
	w.all, w.patterns = len(paths) == 0, pats
}

// CloseWriteWindow ends the write window now; later edits are asked about
// as usual.
func (g *Gate) CloseWriteWindow() {
	w := &g.sh.window
	w.mu.Lock()
	defer w.mu.Unlock()
	w.open, w.all, w.patterns = false, false, nil
}

// WriteWindowOpen reports whether the write window is open and until when.
func (g *Gate) WriteWindowOpen() (time.Time, bool) {
	w := &g.sh.window
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.open || !g.sh.now().Before(w.until) {
		return time.Time{}, false
	}
	return w.until, true
}

// windowPattern turns one plan file entry into a workspace-relative
// doublestar pattern, or reports that the entry cannot be covered.
func (g *Gate) windowPattern(p string) (string, bool) {
	p = strings.TrimSpace(p)
	if p == "" || strings.HasPrefix(p, "~") {
		return "", false
	}
	dir := strings.HasSuffix(p, "/") || strings.HasSuffix(p, string(filepath.Separator))
	for _, seg := range strings.Split(filepath.ToSlash(p), "/") {
		if seg == ".." {
			return "", false
		}
	}
	if filepath.IsAbs(p) {
		// relPaths makes it workspace-relative, or leaves it absolute
		// when it lies outside the workspace.
		p = g.policy.relPaths([]string{p})[0]
		if path.IsAbs(p) {
			return "", false
		}
	}
	p = path.Clean(filepath.ToSlash(p))
	if p == "." {
		// The workspace itself: the same as listing no files.
		return "**", true
	}
	if dir {
		p += "/**"
	}
	return p, true
}

// windowCovers reports whether the open window allows an Edit-family call
// the policy would ask about. out must be that Ask outcome.
func (g *Gate) windowCovers(c *call, out Outcome) bool {
	if c.family != FamilyEdit || out.Decision != Ask || out.List == "Ask" || len(out.Dangerous) > 0 {
		return false
	}
	w := &g.sh.window
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.open || !g.sh.now().Before(w.until) {
		return false
	}
	if len(c.paths) == 0 {
		return false // nothing to check against the workspace
	}
	for _, p := range c.paths {
		// c.paths are workspace-relative inside the workspace and
		// absolute outside it.
		if p == "" || path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") {
			return false
		}
		if !w.all && !matchAny(w.patterns, p) {
			return false
		}
	}
	return true
}

// matchAny matches a workspace-relative path against window patterns: a
// glob match, the path itself, or a directory entry covering its contents.
func matchAny(patterns []string, p string) bool {
	for _, pat := range patterns {
		if pat == p || strings.HasPrefix(p, pat+"/") {
			return true
		}
		if ok, err := doublestar.Match(pat, p); err == nil && ok {
			return true
		}
	}
	return false
}
