// Package settings reads the Claude Code settings files a project brings
// (.claude/settings.json, .claude/settings.local.json and the user's
// ~/.claude/settings.json): their permissions, which join Reasonix's own
// rules, and their hooks. Everything else in them is named as ignored, so
// a user can see what Reasonix did not take over. Like a config file, a
// malformed settings file stops the run with its file, line and key: a
// file of deny rules skipped in silence would weaken the gate.
package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/reasonix/reasonix/internal/config"
	"github.com/reasonix/reasonix/internal/hooks"
	"github.com/reasonix/reasonix/internal/permission"
)

// Scope says who a settings file belongs to.
type Scope string

// Scopes, in the order they are read (lowest precedence first).
const (
	User    Scope = "user"    // ~/.claude/settings.json
	Project Scope = "project" // .claude/settings.json
	Local   Scope = "local"   // .claude/settings.local.json
)

// Rule is one permission rule as written in a settings file.
type Rule struct {
	List string // allow, ask or deny
	Text string
	Line int
	// Unsupported names a tool Reasonix does not have (WebSearch,
	// NotebookRead): the rule is kept for doctor but decides nothing.
	Unsupported string
	// Written is the rule as the file has it, before normalising.
	Written string
	// Held says an allow rule of a project's file waits for the person to
	// trust the project (HoldAllow): it decides nothing yet.
	Held bool
}

// File is one settings file that exists.
type File struct {
	Path  string
	Scope Scope
	// Rules are the permission rules of allow, ask and deny, in order;
	// rule text is normalised to Reasonix syntax (see normalise).
	Rules []Rule
	// AdditionalDirectories are readable and writable beyond the workspace.
	AdditionalDirectories []string
	// DefaultMode is the permission posture the file asks for; Ignored
	// says why it is not applied, when it is not.
	DefaultMode        string
	DefaultModeIgnored string
	Hooks              []hooks.Hook
	// Ignored lists what the file holds that Reasonix does not use: other
	// top-level keys, hook events it does not run, non-command hooks.
	Ignored []string
}

// Set is every settings file found.
type Set struct {
	Files []*File
}

// Paths are the settings files in reading order, with their scopes.
func Paths(workspace, userHome string) []struct {
	Path  string
	Scope Scope
} {
	var out []struct {
		Path  string
		Scope Scope
	}
	add := func(p string, s Scope) {
		out = append(out, struct {
			Path  string
			Scope Scope
		}{p, s})
	}
	if userHome != "" {
		add(filepath.Join(userHome, ".claude", "settings.json"), User)
	}
	if workspace != "" {
		add(filepath.Join(workspace, ".claude", "settings.json"), Project)
		add(filepath.Join(workspace, ".claude", "settings.local.json"), Local)
	}
	return out
}

// Load reads the settings files that exist. A file the user's home and the
// workspace share (a run from the home directory) is read once, as the
// user's. Every fault of every file is reported.
func Load(workspace, userHome string) (*Set, error) {
	set := &Set{}
	var errs []error
	seen := map[string]bool{}
	for _, p := range Paths(workspace, userHome) {
		abs, _ := filepath.Abs(p.Path)
		if seen[abs] {
			continue
		}
		seen[abs] = true
		data, err := os.ReadFile(p.Path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("settings: %w", err))
			continue
		}
		f, ferrs := Parse(p.Path, p.Scope, data)
		errs = append(errs, ferrs...)
		if f != nil {
			set.Files = append(set.Files, f)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return set, nil
}

// Error is a fault in a settings file: the same file, line and key
// error as a config file's, so both read alike.
type Error = config.Error

// Parse reads one settings file.
func Parse(path string, scope Scope, data []byte) (*File, []error) {
	f := &File{Path: path, Scope: scope}
	if len(bytes.TrimSpace(data)) == 0 {
		return f, nil
	}
	var root map[string]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&root); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			line, col := lineCol(data, se.Offset)
			return nil, []error{&Error{File: path, Line: line, Col: col, Msg: "invalid JSON: " + se.Error()}}
		case errors.As(err, &te):
			return nil, []error{&Error{File: path, Line: 1, Msg: "the file must hold a JSON object"}}
		}
		return nil, []error{&Error{File: path, Msg: "invalid JSON: " + err.Error()}}
	}
	p := &parser{f: f, lines: config.JSONLines(data)}
	for _, k := range sortedKeys(root) {
		switch k {
		case "permissions":
			p.permissions(root[k])
		case "hooks":
			p.hooks(root[k])
		case "$schema":
		case "enableAllProjectMcpServers", "enabledMcpjsonServers", "disabledMcpjsonServers":
			// Claude Code's own approvals of .mcp.json servers: a
			// repository's settings must not approve its own servers.
			f.Ignored = append(f.Ignored, "key "+strconv.Quote(k)+" (a project's MCP servers start once a person trusts them in Reasonix, or with --mcp-trust)")
		default:
			f.Ignored = append(f.Ignored, "key "+strconv.Quote(k))
		}
	}
	return f, p.errs
}

type parser struct {
	f     *File
	lines map[string]int
	errs  []error
}

func (p *parser) fail(key, format string, a ...any) {
	p.errs = append(p.errs, &Error{File: p.f.Path, Line: p.line(key), Key: key, Msg: fmt.Sprintf(format, a...)})
}

// line is the line of key, or of the nearest enclosing key it is missing
// from.
func (p *parser) line(key string) int {
	for key != "" {
		if l, ok := p.lines[key]; ok {
			return l
		}
		i := strings.LastIndexAny(key, ".[")
		if i < 0 {
			break
		}
		key = key[:i]
	}
	return 0
}

func (p *parser) permissions(v any) {
	obj, ok := v.(map[string]any)
	if !ok {
		p.fail("permissions", "expected an object, got %s", jsonType(v))
		return
	}
	for _, k := range sortedKeys(obj) {
		key := "permissions." + k
		switch k {
		case "allow", "ask", "deny":
			list, ok := p.strings(obj[k], key)
			if !ok {
				continue
			}
			for i, s := range list {
				p.rule(k, s, fmt.Sprintf("%s[%d]", key, i))
			}
		case "additionalDirectories":
			list, ok := p.strings(obj[k], key)
			if ok {
				p.f.AdditionalDirectories = append(p.f.AdditionalDirectories, list...)
			}
		case "defaultMode":
			s, ok := obj[k].(string)
			if !ok {
				p.fail(key, "expected a string, got %s", jsonType(obj[k]))
				continue
			}
			if _, _, err := permission.ParseMode(s); err != nil {
				p.fail(key, "unknown mode %q: want default, acceptEdits, plan, dontAsk or bypassPermissions", s)
				continue
			}
			p.f.DefaultMode = s
			if s == "bypassPermissions" && p.f.Scope != User {
				// A cloned repository must not switch the gate off.
				p.f.DefaultModeIgnored = "bypassPermissions is honoured only in ~/.claude/settings.json"
			}
		default:
			p.f.Ignored = append(p.f.Ignored, "key "+strconv.Quote(key))
		}
	}
}

func (p *parser) strings(v any, key string) ([]string, bool) {
	arr, ok := v.([]any)
	if !ok {
		p.fail(key, "expected an array of strings, got %s", jsonType(v))
		return nil, false
	}
	out := make([]string, 0, len(arr))
	good := true
	for i, e := range arr {
		s, ok := e.(string)
		if !ok {
			p.fail(fmt.Sprintf("%s[%d]", key, i), "expected a string, got %s", jsonType(e))
			good = false
			continue
		}
		out = append(out, s)
	}
	return out, good
}

// rule checks one permission rule: a rule for a tool Reasonix lacks is
// kept as unsupported, any other fault is an error.
func (p *parser) rule(list, text, key string) {
	norm := normalise(text, p.f.Scope)
	r := Rule{List: list, Text: norm, Line: p.lines[key], Written: text}
	if _, err := permission.ParseRule(norm); err != nil {
		if errors.Is(err, permission.ErrUnknownTool) {
			r.Unsupported = err.Error()
		} else {
			p.fail(key, "%v", err)
			return
		}
	}
	p.f.Rules = append(p.f.Rules, r)
}

// normalise turns Claude Code path specifiers into Reasonix's: //abs is
// an absolute path, and in a project's file /path is relative to the
// project root (Reasonix reads a leading / as absolute).
func normalise(rule string, scope Scope) string {
	rule = strings.TrimSpace(rule)
	name, spec, ok := strings.Cut(rule, "(")
	if !ok || !strings.HasSuffix(spec, ")") {
		return rule
	}
	switch strings.TrimSpace(name) {
	case "Read", "Edit", "Write", "MultiEdit", "NotebookEdit", "Glob", "Grep", "LS":
	default:
		return rule
	}
	body := strings.TrimSuffix(spec, ")")
	switch {
	case strings.HasPrefix(body, "//"):
		body = body[1:]
	case strings.HasPrefix(body, "/") && scope != User:
		body = "./" + body[1:]
	default:
		return rule
	}
	return name + "(" + body + ")"
}

func (p *parser) hooks(v any) {
	obj, ok := v.(map[string]any)
	if !ok {
		p.fail("hooks", "expected an object of events, got %s", jsonType(v))
		return
	}
	for _, event := range sortedKeys(obj) {
		key := "hooks." + event
		groups, ok := obj[event].([]any)
		if !ok {
			p.fail(key, "expected an array of matcher groups, got %s", jsonType(obj[event]))
			continue
		}
		if !hooks.Known(event) {
			p.f.Ignored = append(p.f.Ignored, fmt.Sprintf("hooks for %s (Reasonix does not run that event)", event))
			continue
		}
		for i, g := range groups {
			gkey := fmt.Sprintf("%s[%d]", key, i)
			group, ok := g.(map[string]any)
			if !ok {
				p.fail(gkey, "expected an object with matcher and hooks, got %s", jsonType(g))
				continue
			}
			matcher := ""
			if m, ok := group["matcher"]; ok {
				if matcher, ok = m.(string); !ok {
					p.fail(gkey+".matcher", "expected a string, got %s", jsonType(m))
					continue
				}
			}
			list, ok := group["hooks"].([]any)
			if !ok {
				p.fail(gkey+".hooks", "expected an array of hooks, got %s", jsonType(group["hooks"]))
				continue
			}
			for j, h := range list {
				hkey := fmt.Sprintf("%s.hooks[%d]", gkey, j)
				p.hook(event, matcher, h, hkey)
			}
		}
	}
}

func (p *parser) hook(event, matcher string, v any, key string) {
	obj, ok := v.(map[string]any)
	if !ok {
		p.fail(key, "expected an object with type and command, got %s", jsonType(v))
		return
	}
	typ, _ := obj["type"].(string)
	if typ != "" && typ != "command" {
		p.f.Ignored = append(p.f.Ignored, fmt.Sprintf("%s hook of type %q at line %d (only command hooks run)", event, typ, p.lines[key]))
		return
	}
	cmd, ok := obj["command"].(string)
	if !ok || strings.TrimSpace(cmd) == "" {
		p.fail(key+".command", "a command hook needs a command string")
		return
	}
	h := hooks.Hook{Event: event, Matcher: matcher, Command: cmd, Source: p.f.Path, Line: p.lines[key], Project: p.f.Scope != User}
	if t, ok := obj["timeout"]; ok {
		n, isNum := t.(json.Number)
		secs, err := n.Float64()
		if !isNum || err != nil || secs < 0 {
			p.fail(key+".timeout", "expected a number of seconds, got %v", t)
			return
		}
		h.Timeout = time.Duration(secs * float64(time.Second))
	}
	p.f.Hooks = append(p.f.Hooks, h)
}

// Rules returns the supported rules of every file for one list (allow,
// ask or deny), in reading order.
func (s *Set) Rules(list string) []string {
	if s == nil {
		return nil
	}
	var out []string
	for _, f := range s.Files {
		for _, r := range f.Rules {
			if r.List == list && r.Unsupported == "" && !r.Held {
				out = append(out, r.Text)
			}
		}
	}
	return out
}

// HoldAllow marks the allow rules of the project's files (not the user's)
// that do not apply yet, so Rules leaves them out: applies is asked with
// the file's path and the rule as written (config.Loaded's
// SettingsAllowApplies: once the project is trusted, or a rule the person
// added). A repository's allow rules would run calls without asking the
// person who only opened it; its ask and deny rules apply at once.
func (s *Set) HoldAllow(applies func(file, rule string) bool) {
	if s == nil {
		return
	}
	for _, f := range s.Files {
		if f.Scope == User {
			continue
		}
		for i := range f.Rules {
			if r := &f.Rules[i]; r.List == "allow" {
				r.Held = !applies(f.Path, r.Written)
			}
		}
	}
}

// Directories are the additionalDirectories of every file, resolved:
// ~/ against the user's home, relative paths against the workspace. A
// project's file (it comes with the repository) may not make a folder
// outside the workspace writable, any more than set bypassPermissions:
// those are honoured only from ~/.claude/settings.json (IgnoredDirectories).
func (s *Set) Directories(workspace, userHome string) []string {
	dirs, _ := s.directories(workspace, userHome)
	return dirs
}

// IgnoredDirectories are the additionalDirectories of project files that
// Directories leaves out.
func (s *Set) IgnoredDirectories(workspace, userHome string) []string {
	_, ignored := s.directories(workspace, userHome)
	return ignored
}

func (s *Set) directories(workspace, userHome string) (dirs, ignored []string) {
	if s == nil {
		return nil, nil
	}
	for _, f := range s.Files {
		for _, d := range f.AdditionalDirectories {
			switch {
			case d == "~" || strings.HasPrefix(d, "~/"):
				d = filepath.Join(userHome, d[1:])
			case !filepath.IsAbs(d):
				d = filepath.Join(workspace, d)
			}
			d = filepath.Clean(d)
			if rel, err := filepath.Rel(workspace, d); f.Scope != User && (err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))) {
				ignored = append(ignored, d)
				continue
			}
			dirs = append(dirs, d)
		}
	}
	return dirs, ignored
}

// ProjectLoosens reports whether Mode comes from a project's file and
// runs calls without asking (acceptEdits): a project's file comes with
// the repository, so the caller applies it only once the person trusted
// the project.
func (s *Set) ProjectLoosens() bool {
	f := s.modeFile()
	return f != nil && f.Scope != User && f.DefaultMode == "acceptEdits"
}

// Mode is the defaultMode the files ask for (the last file that sets one
// and is allowed to), or "".
func (s *Set) Mode() string {
	if f := s.modeFile(); f != nil {
		return f.DefaultMode
	}
	return ""
}

// modeFile is the file whose defaultMode applies (see Mode), or nil.
func (s *Set) modeFile() *File {
	if s == nil {
		return nil
	}
	var from *File
	for _, f := range s.Files {
		if f.DefaultMode != "" && f.DefaultModeIgnored == "" {
			from = f
		}
	}
	return from
}

// Hooks are the hooks of every file, in reading order.
func (s *Set) Hooks() []hooks.Hook {
	if s == nil {
		return nil
	}
	var out []hooks.Hook
	for _, f := range s.Files {
		out = append(out, f.Hooks...)
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case json.Number:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func lineCol(data []byte, off int64) (int, int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line := bytes.Count(before, []byte("\n")) + 1
	col := int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	return line, max(col, 1)
}
