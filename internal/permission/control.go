package permission

import (
	"path/filepath"
	"slices"
	"strconv"
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

// otherPrograms are workspace-relative control files too, of what other
// programs run on their own later: git (submodule URLs, and a home
// directory's own config and shell startup files when the workspace is a
// home directory) and an editor opening the folder (tasks, interpreter
// and terminal settings), the hook managers a routine `git commit` runs
// from an installed git hook (pre-commit, lefthook), and editors and
// dev containers that start language servers or host commands from the
// folder's own settings (Helix, Zed, a dev container's initializeCommand).
// The control guard watches each of them as it is listed here.
var otherPrograms = []string{
	".gitmodules",
	".vscode/",
	".pre-commit-config.yaml",
	"lefthook.yml",
	".lefthook.yml",
	"lefthook-local.yml",
	".helix/",
	".zed/",
	".devcontainer/",
	".gitconfig",
	".bashrc",
	".bash_profile",
	".zshrc",
	".zprofile",
	".profile",
}

// homeControl are control files relative to the Reasonix home.
var homeControl = []string{
	"config.toml",
	// What the person trusted (a project's held settings and the allow
	// rules they answered "always" to, hooks, MCP servers) and their keys:
	// an edit there grants what the person never said yes to.
	"trusted-projects.json",
	"trusted-hooks.json",
	"mcp-trust.json",
	"credentials.json",
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
	if hit := underAny(abs, p.workspace(), workspaceControl, otherPrograms); hit != "" {
		return hit, true
	}
	if p.Home != "" {
		if hit := underAny(abs, p.Home, homeControl); hit != "" {
			return filepath.Join(p.Home, hit), true
		}
	}
	return "", false
}

// underAny is abs relative to root, lower-cased, when it is one of the
// entries of lists (a trailing slash covers a directory), "" otherwise.
func underAny(abs, root string, lists ...[]string) string {
	if root == "" {
		return ""
	}
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return ""
	}
	rel = strings.ToLower(filepath.ToSlash(rel))
	for _, entries := range lists {
		for _, e := range entries {
			if dir := strings.TrimSuffix(e, "/"); dir != e {
				if rel == dir || strings.HasPrefix(rel, e) {
					return rel
				}
			} else if rel == e {
				return rel
			}
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

// gitConfigValues are the values of key (case folded) in the sections
// named (lower case, without a subsection: [includeIf "…"] is
// "includeif") of a git config file's content, in the file's order,
// unquoted or with a trailing comment cut.
func gitConfigValues(config []byte, key string, sections ...string) []string {
	var out []string
	section := ""
	for _, line := range strings.Split(string(config), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			section = strings.ToLower(strings.TrimSpace(line[1:end]))
			if i := strings.IndexAny(section, " \t\""); i >= 0 {
				section = section[:i]
			}
			line = strings.TrimSpace(line[end+1:])
			if line == "" {
				continue
			}
		}
		if !slices.Contains(sections, section) {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), key) {
			continue
		}
		v = strings.TrimSpace(v)
		if uq, err := strconv.Unquote(v); err == nil && strings.HasPrefix(v, `"`) {
			v = uq
		} else if i := strings.IndexAny(v, "#;"); i >= 0 {
			v = strings.TrimSpace(v[:i])
		}
		out = append(out, v)
	}
	return out
}

// includePaths are the files inside workspace that the .git/config
// content config includes ([include] and [includeIf "…"] path =, a
// relative one taken from the .git folder, as git does), at most 16.
func includePaths(workspace string, config []byte) []string {
	var out []string
	for _, v := range gitConfigValues(config, "path", "include", "includeif") {
		if v == "" || strings.HasPrefix(v, "~") {
			continue
		}
		p := filepath.FromSlash(v)
		if !filepath.IsAbs(p) {
			p = filepath.Join(workspace, ".git", p)
		}
		p = filepath.Clean(p)
		if rel, err := filepath.Rel(workspace, p); err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			continue
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
		if len(out) == 16 {
			break
		}
	}
	return out
}

// hooksPath is the folder git runs this repository's hooks from when
// .git/config sets core.hooksPath to one inside workspace (husky and the
// like put it in the tree), "" otherwise. config is that file's content.
// A folder named "_" (husky's) runs the scripts one level up, so that
// folder is returned instead.
func hooksPath(workspace string, config []byte) string {
	var val string
	if vals := gitConfigValues(config, "hooksPath", "core"); len(vals) > 0 {
		val = vals[len(vals)-1] // the last one wins, as in git
	}
	if val == "" || strings.HasPrefix(val, "~") {
		return ""
	}
	p := filepath.FromSlash(val)
	if !filepath.IsAbs(p) {
		p = filepath.Join(workspace, p)
	}
	p = filepath.Clean(p)
	if filepath.Base(p) == "_" {
		p = filepath.Dir(p)
	}
	if rel, err := filepath.Rel(workspace, p); err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return ""
	}
	return p
}
