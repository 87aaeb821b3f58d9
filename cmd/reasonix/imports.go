package main

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/reasonix/reasonix/internal/hooks"
	"github.com/reasonix/reasonix/internal/rules"
	"github.com/reasonix/reasonix/internal/settings"
)

// These say whether the features that read a file kind are built; doctor
// words its report by them, so a file is never listed as used when it is
// not. The helpers that build them switch them on.
const (
	commandsBuilt = true // .claude/commands and .reasonix/commands as slash commands
	mcpBuilt      = true // .mcp.json and [[plugins]] as MCP servers
)

// importedFile is one Claude Code or OpenCode file doctor found, and what
// Reasonix does with it.
type importedFile struct {
	path string
	what string
}

// countFiles counts the files under dir whose names end in ext, at any
// depth; 0 when dir does not exist.
func countFiles(dir, ext string) int {
	n := 0
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ext) {
			n++
		}
		return nil
	})
	return n
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// foreignFiles lists the Claude Code and OpenCode files of the workspace
// and the user, each with what Reasonix does with it; set is the parsed
// settings (nil when they failed to load, with err saying why).
func foreignFiles(workspace, userHome string, set *settings.Set, setErr error) []importedFile {
	var out []importedFile
	add := func(p, what string) { out = append(out, importedFile{p, what}) }

	// Settings files.
	parsed := map[string]*settings.File{}
	if set != nil {
		for _, f := range set.Files {
			parsed[f.Path] = f
		}
	}
	for _, sp := range settings.Paths(workspace, userHome) {
		if !exists(sp.Path) {
			continue
		}
		f := parsed[sp.Path]
		if f == nil {
			msg := "not read"
			if setErr != nil {
				msg = "ERROR: " + firstLine(setErr.Error())
			}
			add(sp.Path, msg)
			continue
		}
		add(sp.Path, describeSettings(f))
	}

	// Files Reasonix reads as they are.
	for _, p := range []string{
		filepath.Join(workspace, "CLAUDE.md"), filepath.Join(workspace, ".claude", "CLAUDE.md"),
		filepath.Join(workspace, "CLAUDE.local.md"),
		filepath.Join(userHome, ".claude", "CLAUDE.md"), filepath.Join(workspace, "AGENTS.md"),
	} {
		if exists(p) {
			add(p, "rules file: part of every session's system prompt (`reasonix context` shows it)")
		}
	}
	for _, d := range []string{filepath.Join(workspace, ".claude", "rules"), filepath.Join(userHome, ".claude", "rules")} {
		if n := len(rules.RuleDirFiles(d)); n > 0 {
			add(d, fmt.Sprintf("%d rules file(s): part of every session's system prompt; one scoped by `paths:` is marked with its globs for the model to apply to those files", n))
		}
	}
	if nested := nestedRules(workspace); len(nested) > 0 {
		add(workspace, fmt.Sprintf("rules files in subfolders (%s): read when a file tool first reaches their folder, "+
			"and added to that call's result (run reasonix in the folder, or @import one from CLAUDE.md, to have it from the start)", strings.Join(nested, ", ")))
	}
	for _, d := range []string{filepath.Join(workspace, ".claude", "agents"), filepath.Join(userHome, ".claude", "agents")} {
		if n := countFiles(d, ".md"); n > 0 {
			add(d, fmt.Sprintf("%d agent file(s): subagents for the task tool", n))
		}
	}
	for _, d := range []string{filepath.Join(workspace, ".claude", "skills"), filepath.Join(userHome, ".claude", "skills")} {
		if n := countFiles(d, "SKILL.md"); n > 0 {
			add(d, fmt.Sprintf("%d skill(s): offered through the skill tool and as /name", n))
		}
	}
	for _, d := range []string{filepath.Join(workspace, ".claude", "commands"), filepath.Join(userHome, ".claude", "commands")} {
		if n := countFiles(d, ".md"); n > 0 {
			if commandsBuilt {
				add(d, fmt.Sprintf("%d command file(s): custom slash commands (reasonix commands lists them; a skipped file is a notice)", n))
			} else {
				add(d, fmt.Sprintf("IGNORED: %d command file(s); custom slash commands are not built yet", n))
			}
		}
	}
	if p := filepath.Join(workspace, ".mcp.json"); exists(p) {
		if mcpBuilt {
			add(p, "MCP servers: started like [[plugins]] once this project's servers are trusted (a name in reasonix.toml wins)")
		} else {
			add(p, "IGNORED: MCP servers are not supported yet")
		}
	}
	if p := filepath.Join(userHome, ".claude.json"); exists(p) {
		add(p, "its mcpServers (user scope, and this project's local scope) are MCP servers; the rest of Claude Code's state file is ignored")
	}

	// OpenCode.
	for _, p := range []string{filepath.Join(workspace, "opencode.json"), filepath.Join(workspace, "opencode.jsonc"),
		filepath.Join(userHome, ".config", "opencode", "opencode.json")} {
		if exists(p) {
			add(p, "IGNORED: OpenCode's config is not read (its agents, commands, MCP servers, permissions and providers); move providers to reasonix.toml and rules to [permissions]")
		}
	}
	for _, sub := range []string{"agent", "agents", "command", "commands"} {
		d := filepath.Join(workspace, ".opencode", sub)
		if n := countFiles(d, ".md"); n > 0 {
			add(d, fmt.Sprintf("IGNORED: %d OpenCode %s file(s); copy agents to .claude/agents or .reasonix/agents", n, strings.TrimSuffix(sub, "s")))
		}
	}
	return out
}

// nestedRules lists the rules files (rules.ProjectFiles) in subfolders
// of the workspace, relative to it: sessions started in the workspace
// read them only when their work reaches the folder (rules.Nested). The walk skips hidden folders and dependency trees and
// stops early in a big tree; at most 10 are named, then a count.
func nestedRules(workspace string) []string {
	var found []string
	seen := 0
	_ = filepath.WalkDir(workspace, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if seen++; seen > 50000 {
			return filepath.SkipAll
		}
		if d.IsDir() {
			if n := d.Name(); p != workspace && (strings.HasPrefix(n, ".") || n == "node_modules" || n == "vendor" || n == "target") {
				return filepath.SkipDir
			}
			if p == workspace {
				return nil
			}
			for _, f := range rules.ProjectFiles {
				if exists(filepath.Join(p, f)) {
					rel, _ := filepath.Rel(workspace, filepath.Join(p, f))
					found = append(found, filepath.ToSlash(rel))
				}
			}
		}
		return nil
	})
	if len(found) > 10 {
		found = append(found[:10], fmt.Sprintf("and %d more", len(found)-10))
	}
	return found
}

// describeSettings says what was taken from one settings file and what not.
func describeSettings(f *settings.File) string {
	counts := map[string]int{}
	var unsupported []string
	held := 0
	for _, r := range f.Rules {
		switch {
		case r.Unsupported != "":
			unsupported = append(unsupported, fmt.Sprintf("%s (line %d)", r.Text, r.Line))
		case r.Held:
			held++
		default:
			counts[r.List]++
		}
	}
	parts := []string{fmt.Sprintf("permissions: %d allow, %d ask, %d deny rule(s) merged", counts["allow"], counts["ask"], counts["deny"])}
	if held > 0 {
		parts = append(parts, fmt.Sprintf("%d allow rule(s) NOT APPLIED until you trust the project (`reasonix trust`)", held))
	}
	if len(f.AdditionalDirectories) > 0 {
		parts = append(parts, fmt.Sprintf("%d additional director(ies) readable and writable", len(f.AdditionalDirectories)))
		if f.Scope != settings.User {
			parts = append(parts, "additionalDirectories outside the workspace IGNORED: honoured only in ~/.claude/settings.json")
		}
	}
	if f.DefaultMode != "" {
		if f.DefaultModeIgnored != "" {
			parts = append(parts, "defaultMode IGNORED: "+f.DefaultModeIgnored)
		} else {
			parts = append(parts, "defaultMode "+f.DefaultMode+" (when reasonix.toml sets no mode)")
		}
	}
	if len(f.Hooks) > 0 {
		parts = append(parts, fmt.Sprintf("%d hook(s)", len(f.Hooks)))
	}
	if len(unsupported) > 0 {
		parts = append(parts, "KEPT BUT INERT (no such tool in Reasonix): "+strings.Join(unsupported, ", "))
	}
	if len(f.Ignored) > 0 {
		parts = append(parts, "IGNORED: "+strings.Join(f.Ignored, "; "))
	}
	return strings.Join(parts, "; ")
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// printImports writes doctor's report of foreign files and hooks.
func printImports(w io.Writer, workspace, home, userHome string, hs []hooks.Hook, set *settings.Set, setErr error) {
	files := foreignFiles(workspace, userHome, set, setErr)
	if len(files) == 0 {
		fmt.Fprintln(w, "claude/opencode: no Claude Code or OpenCode files found")
	} else {
		fmt.Fprintln(w, "claude/opencode files:")
		for _, f := range files {
			fmt.Fprintf(w, "  %s\n    %s\n", f.path, f.what)
		}
	}
	if len(hs) == 0 {
		fmt.Fprintln(w, "hooks:      none")
		return
	}
	var project []hooks.Hook
	for _, h := range hs {
		if h.Project {
			project = append(project, h)
		}
	}
	trust := "trusted"
	if len(project) > 0 {
		if ok, err := hooks.Trusted(home, workspace, project); err != nil {
			trust = "NOT trusted: " + trustFileNotice(err)
		} else if !ok {
			trust = "NOT trusted yet: they run after a person trusts them (interactive) or with --hooks-trust"
		}
	}
	fmt.Fprintf(w, "hooks:      %d loaded; project hooks %s\n", len(hs), trust)
	for _, h := range hs {
		scope := "user"
		if h.Project {
			scope = "project"
		}
		fmt.Fprintf(w, "  [%s] %s  (%s:%d)\n", scope, h.Describe(), h.Source, h.Line)
	}
}
