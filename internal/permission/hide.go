package permission

import (
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

// HiddenReads returns what the sandbox hides from commands for the Read
// deny rules (raw rule text) that name paths inside the workspace, where
// Landlock cannot deny a single file (see ReadRuleDenies): each call
// lists the matching files and folders that exist then. Rules naming one
// path are checked at every call (a stat each); glob rules (Read(./.env)
// is **/.env) are matched by one bounded walk of the workspace, at the
// first call, which skips .git and node_modules, and a **/NAME rule's
// NAME at the workspace root is checked at every call too. nil when no rule names a
// path inside the workspace.
func HiddenReads(deny []string, workspace string) func() []string {
	ws, err := filepath.Abs(workspace)
	if err != nil || ws == "" {
		return nil
	}
	var fixed []string
	var globs []Rule
	for _, raw := range deny {
		r, err := ParseRule(raw)
		if err != nil || r.Family != FamilyRead || r.pattern == "" {
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
			fixed = append(fixed, p)
		case !strings.ContainsAny(pat, `*?[{\`):
			fixed = append(fixed, filepath.Join(ws, filepath.FromSlash(pat)))
		default:
			globs = append(globs, r)
			if name, ok := strings.CutPrefix(pat, "**/"); ok && !strings.ContainsAny(name, `*?[{\/`) {
				// Read(./.env): the workspace's own .env is checked at
				// every call, so one made after the walk is hidden too.
				fixed = append(fixed, filepath.Join(ws, name))
			}
		}
	}
	if len(fixed) == 0 && len(globs) == 0 {
		return nil
	}
	walked := sync.OnceValue(func() []string {
		if len(globs) == 0 {
			return nil
		}
		p := Policy{Workspace: ws}
		var found []string
		n := 0
		_ = filepath.WalkDir(ws, func(path string, e fs.DirEntry, err error) error {
			if err != nil || path == ws {
				return nil
			}
			if n++; n > maxReaderWalk {
				return filepath.SkipAll
			}
			if e.IsDir() && (e.Name() == ".git" || e.Name() == "node_modules") {
				return filepath.SkipDir
			}
			rel := p.relPaths([]string{path})[0]
			for _, r := range globs {
				if r.matchPath(rel) || (foldCase && r.matchPathFold(rel)) {
					found = append(found, path)
					if e.IsDir() {
						return filepath.SkipDir
					}
					break
				}
			}
			return nil
		})
		return found
	})
	return func() []string {
		var out []string
		for _, p := range append(slices.Clone(fixed), walked()...) {
			if _, err := os.Lstat(p); err == nil && !slices.Contains(out, p) {
				out = append(out, p)
			}
		}
		return out
	}
}
