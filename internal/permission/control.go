package permission

import (
	"path/filepath"
	"strings"
)

// Control files decide what later runs may do: the project config holds
// permission rules, agent files carry permission overrides, .mcp.json
// names commands started at launch. A model that could rewrite them
// unattended could widen its own permissions for the next run, so every
// write to one needs a fresh human yes, like a dangerous command. Memory
// files (remember, forget) are read by every later session as the user's
// own words, so they are guarded the same way.

// workspaceControl are workspace-relative control files; a trailing slash
// covers a directory.
var workspaceControl = []string{
	"reasonix.toml",
	".mcp.json",
	".reasonix/agents/",
	".reasonix/commands/",
	".reasonix/skills/",
	".reasonix/settings.json",
	".claude/",
	".agents/skills/",
	".git/hooks/",
	".git/config",
	".reasonix/memory/",
}

// homeControl are control files relative to the Reasonix home.
var homeControl = []string{
	"config.toml",
	"agents/",
	"skills/",
	"commands/",
	"permissions.log",
	"memory/",
}

// controlFile reports whether path (absolute, or relative to the
// workspace) is a control file, and names it. Case is folded because
// macOS and Windows file systems do.
func (p Policy) controlFile(path string) (string, bool) {
	if path == "" || path == dynWord {
		return "", false
	}
	abs := filepath.FromSlash(path)
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(p.workspace(), abs)
	}
	abs = filepath.Clean(abs)
	if hit := underAny(abs, p.workspace(), workspaceControl); hit != "" {
		return hit, true
	}
	if p.Home != "" {
		if hit := underAny(abs, p.Home, homeControl); hit != "" {
			return filepath.Join(p.Home, hit), true
		}
	}
	return "", false
}

func underAny(abs, root string, entries []string) string {
	if root == "" {
		return ""
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return ""
	}
	rel = strings.ToLower(filepath.ToSlash(rel))
	for _, e := range entries {
		if dir := strings.TrimSuffix(e, "/"); dir != e {
			if rel == dir || strings.HasPrefix(rel, e) {
				return rel
			}
		} else if rel == e {
			return rel
		}
	}
	return ""
}

// controlDanger is the dangerous-class reason for a write to a control file.
func controlDanger(what, name string) string {
	if strings.Contains(filepath.ToSlash(name), "memory/") {
		return what + " " + name + ", a memory every later session reads as the user's own words"
	}
	return what + " " + name + ", which controls what later runs may do (permissions, agents, MCP servers)"
}
