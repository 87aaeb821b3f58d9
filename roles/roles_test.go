package roles

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/tools"
)

type fakeTool struct {
	name     string
	readOnly bool
}

func (f fakeTool) Name() string            { return f.name }
func (f fakeTool) Description() string     { return f.name }
func (f fakeTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (f fakeTool) ReadOnly() bool          { return f.readOnly }
func (f fakeTool) Execute(context.Context, *tools.Env, json.RawMessage) (tools.Result, error) {
	return tools.Result{}, nil
}

func fullRegistry() *tools.Registry {
	return tools.NewRegistry(
		fakeTool{"read_file", true}, fakeTool{"ls", true}, fakeTool{"glob", true}, fakeTool{"grep", true},
		fakeTool{"skill", true}, fakeTool{"ask", true}, fakeTool{"write_file", false}, fakeTool{"edit_file", false},
		fakeTool{"bash", false}, fakeTool{"task", false}, fakeTool{"todo_write", true},
		fakeTool{"mcp__gh__search", true}, fakeTool{"mcp__gh__create_issue", false},
	)
}

func TestBuiltinRoles(t *testing.T) {
	for _, name := range []string{Planner, Executor, General, Explore} {
		r, ok := Builtin(name)
		if !ok || r.Name != name || r.Source != SourceBuiltin || r.Description == "" {
			t.Fatalf("%s: %+v %v", name, r, ok)
		}
		if len(r.System) == 0 || len(r.System) > 2560 {
			t.Errorf("%s prompt is %d bytes", name, len(r.System))
		}
		r2, _ := Builtin(name)
		if r2.System != r.System {
			t.Errorf("%s prompt differs between calls", name)
		}
		// Nothing that changes per run may appear in a cached prefix.
		if regexp.MustCompile(`\d{4}-\d{2}-\d{2}|\{\{|%[sdv]`).MatchString(r.System) {
			t.Errorf("%s prompt looks templated or dated", name)
		}
		want, err := os.ReadFile(filepath.Join("prompts", name+".md"))
		if err != nil || string(want) != r.System {
			t.Errorf("%s prompt is not the embedded file byte for byte (%v)", name, err)
		}
	}
	if _, ok := Builtin("nope"); ok {
		t.Error("unknown builtin found")
	}
	p, _ := Builtin(Planner)
	if !p.PlanMode || !p.ReadOnlyOnly || p.MaxSteps != DefaultPlannerMaxSteps {
		t.Errorf("planner = %+v", p)
	}
	if !strings.Contains(p.System, "submit_plan") {
		t.Error("planner prompt does not mention submit_plan")
	}
	// Mutating a returned role must not leak into the next caller.
	p.Tools[0] = "bash"
	if p2, _ := Builtin(Planner); p2.Tools[0] != "read_file" {
		t.Error("Builtin shares its Tools slice")
	}
}

func TestFilterTools(t *testing.T) {
	reg := fullRegistry()
	cases := map[string][]string{
		Planner:  {"ask", "glob", "grep", "ls", "read_file", "skill"},
		Explore:  {"glob", "grep", "ls", "read_file"},
		Executor: reg.Names(),
		General:  reg.Names(),
	}
	for name, want := range cases {
		r, _ := Builtin(name)
		if got := r.FilterTools(reg).Names(); !reflect.DeepEqual(got, want) {
			t.Errorf("%s tools = %v, want %v", name, got, want)
		}
	}
	// A read-only role keeps only readers even when a writer is listed.
	r := Role{Tools: []string{"read_file", "write_file", "mcp__gh__*"}, ReadOnlyOnly: true}
	if got := r.FilterTools(reg).Names(); !reflect.DeepEqual(got, []string{"mcp__gh__search", "read_file"}) {
		t.Errorf("filtered = %v", got)
	}
	if got := (Role{Tools: []string{}}).FilterTools(reg).Names(); len(got) != 0 {
		t.Errorf("empty tool list kept %v", got)
	}
	if got := r.FilterTools(nil).Names(); len(got) != 0 {
		t.Errorf("nil registry gave %v", got)
	}
}

// TestPromptsAgreeWithAsk: a built-in role whose tools include ask is told
// how to use it, and one without it is told it cannot ask; a prompt that
// says "cannot ask" while the tool is there (or names ask when it is not)
// leaves the model guessing.
func TestPromptsAgreeWithAsk(t *testing.T) {
	reg := fullRegistry()
	cannot := regexp.MustCompile(`(?i)cannot ask|can't ask|cannot put questions`)
	for _, name := range []string{Planner, Executor, General, Explore} {
		r, _ := Builtin(name)
		has := contains(r.FilterTools(reg).Names(), "ask")
		says := cannot.MatchString(r.System)
		switch {
		case has && says:
			t.Errorf("%s has the ask tool but its prompt says it cannot ask", name)
		case !has && !says:
			t.Errorf("%s has no ask tool but its prompt does not say it cannot ask", name)
		case has && name != Executor && !strings.Contains(r.System, "ask tool") && !strings.Contains(r.System, "ask to "):
			t.Errorf("%s has the ask tool but its prompt does not say when to use it", name)
		}
	}
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func writeAgent(t *testing.T, dir, file, content string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, file)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func hasNotice(notices []string, parts ...string) bool {
	for _, n := range notices {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(n, p)
		}
		if all {
			return true
		}
	}
	return false
}

// claudeAgent is shaped like agent files published for Claude Code; its
// frontmatter is not valid YAML.
const claudeAgent = `---
name: code-reviewer
description: Use this agent after writing significant code. Examples:

<example>
Context: The user just wrote a handler.
user: "Please review my login handler"
assistant: "I'll use the code-reviewer agent to review it."
<commentary>
New code was written, so review it.
</commentary>
</example>
tools: Read, Grep, Glob, Bash(git diff:*), WebSearch
model: sonnet
color: red
---

You are a senior code reviewer. Review only the changed code.
`

func TestLoadAgents(t *testing.T) {
	d := t.TempDir()
	ws, home, userHome := filepath.Join(d, "ws"), filepath.Join(d, "u", ".reasonix"), filepath.Join(d, "u")
	projR, projC := filepath.Join(ws, ".reasonix/agents"), filepath.Join(ws, ".claude/agents")
	userR, userC := filepath.Join(home, "agents"), filepath.Join(userHome, ".claude/agents")

	reviewer := writeAgent(t, projC, "code-reviewer.md", claudeAgent)
	writeAgent(t, userR, "code-reviewer.md", "---\nname: code-reviewer\ndescription: user copy\n---\nUser prompt.\n")
	writeAgent(t, projR, "tester.md", "---\nname: tester\ndescription: Runs tests.\ntools:\n  - bash\n  - read_file\nmodel: inherit\nmax_steps: 30\n---\nRun the tests.\n")
	writeAgent(t, userC, "docs-writer.md", "# Docs\n\nWrites documentation for a package.\n\nMore.\n")
	broken := writeAgent(t, projR, "broken.md", "---\nname: broken\ndescription: never closed\n")
	garbage := writeAgent(t, projR, "garbage.md", "---\n\t: : :\n---\nbody\n")
	empty := writeAgent(t, projR, "empty.md", "---\nname: empty\ndescription: no body\n---\n\n")
	reserved := writeAgent(t, userR, "planner.md", "---\nname: planner\n---\nhijack\n")
	writeAgent(t, projR, "notes.txt", "not an agent")

	set, notices := Load(LoadOptions{Workspace: ws, Home: home, UserHome: userHome})

	var names []string
	for _, r := range set.Subagents() {
		names = append(names, r.Name)
	}
	if want := []string{"code-reviewer", "docs-writer", "explore", "general", "tester"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("subagents = %v, want %v\nnotices %q", names, want, notices)
	}

	cr, _ := set.Get("code-reviewer")
	if cr.Source != reviewer || cr.System != "You are a senior code reviewer. Review only the changed code." {
		t.Errorf("code-reviewer = %+v; the project file should win", cr)
	}
	if !strings.Contains(cr.Description, `user: "Please review my login handler"`) || !strings.Contains(cr.Description, "<example>") {
		t.Errorf("description lost its examples: %q", cr.Description)
	}
	if !reflect.DeepEqual(cr.Tools, []string{"read_file", "grep", "glob", "bash"}) || cr.Model != "" {
		t.Errorf("code-reviewer tools %q model %q", cr.Tools, cr.Model)
	}

	ts, _ := set.Get("tester")
	if !reflect.DeepEqual(ts.Tools, []string{"bash", "read_file"}) || ts.Model != "" || ts.MaxSteps != 30 {
		t.Errorf("tester = %+v", ts)
	}
	dw, _ := set.Get("docs-writer")
	if dw.Tools != nil || dw.Description != "Writes documentation for a package." || !strings.HasPrefix(dw.System, "# Docs") {
		t.Errorf("docs-writer = %+v", dw)
	}

	for _, want := range [][]string{
		{broken, "skipped"},
		{garbage, "skipped"},
		{empty, "skipped", "no system prompt"},
		{reserved, "reserved"},
		{filepath.Join(userR, "code-reviewer.md"), "shadowed by " + reviewer},
		{reviewer, `"WebSearch"`},
		{reviewer, "Bash(git diff:*)"},
		{reviewer, "sonnet"},
	} {
		if !hasNotice(notices, want...) {
			t.Errorf("no notice with %q in\n%s", want, strings.Join(notices, "\n"))
		}
	}
	if p, _ := set.Get(Planner); p.Source != SourceBuiltin {
		t.Errorf("planner replaced by %s", p.Source)
	}
	if _, ok := set.Get("broken"); ok {
		t.Error("malformed agent loaded")
	}
}

func TestLoadAgentOverridesBuiltinSubagent(t *testing.T) {
	ws := t.TempDir()
	p := writeAgent(t, filepath.Join(ws, ".reasonix/agents"), "explore.md", "---\ndescription: my explorer\ntools: Read Grep\n---\nExplore my way.\n")
	set, notices := Load(LoadOptions{Workspace: ws})
	r, _ := set.Get(Explore)
	if r.Source != p || !reflect.DeepEqual(r.Tools, []string{"read_file", "grep"}) {
		t.Errorf("explore = %+v", r)
	}
	if !hasNotice(notices, p, "replaces the built-in explore") {
		t.Errorf("notices %q", notices)
	}
}

func TestLoadNothing(t *testing.T) {
	set, notices := Load(LoadOptions{Workspace: t.TempDir()})
	if len(notices) != 0 || len(set.Subagents()) != 2 {
		t.Errorf("subagents %d notices %q", len(set.Subagents()), notices)
	}
	if _, ok := set.Get(Executor); !ok {
		t.Error("executor missing")
	}
}

func TestMapTools(t *testing.T) {
	cases := []struct {
		in       []string
		out      []string
		dropped  []string
		narrowed []string
	}{
		{nil, nil, nil, nil},
		{[]string{"*"}, nil, nil, nil},
		{[]string{"Read", "read_file", "Edit", "MultiEdit", "Write", "LS", "TodoWrite", "Task"},
			[]string{"read_file", "edit_file", "multi_edit", "write_file", "ls", "todo_write", "task"}, nil, nil},
		{[]string{"WebSearch", "Frobnicate", "mcp__gh__*"}, []string{"mcp__gh__*"}, []string{"WebSearch", "Frobnicate"}, nil},
		{[]string{"WebFetch"}, []string{"web_fetch"}, nil, nil},
		{[]string{" TodoRead ", "todo_read"}, []string{"todo_read"}, nil, nil},
		{[]string{"Bash(npm test:*)", "Bash(go test:*)"}, []string{"bash"}, nil, []string{"Bash(npm test:*)", "Bash(go test:*)"}},
	}
	for _, c := range cases {
		out, dropped, narrowed := mapTools(c.in)
		if !reflect.DeepEqual(out, c.out) || !reflect.DeepEqual(dropped, c.dropped) || !reflect.DeepEqual(narrowed, c.narrowed) {
			t.Errorf("mapTools(%q) = %q %q %q", c.in, out, dropped, narrowed)
		}
	}
}

func TestAgentPermissionOverride(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, ".reasonix", "agents")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "reviewer.md"), []byte("---\nname: reviewer\ndescription: Reviews.\npermissionMode: plan\ndeny:\n  - Bash(git push:*)\nallow: [\"Bash(go test:*)\", \"Read\"]\n---\nReview the change.\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "plain.md"), []byte("---\nname: plain\ndescription: Plain.\n---\nDo it.\n"), 0o644)
	set, notices := Load(LoadOptions{Workspace: ws, Home: t.TempDir()})
	r, ok := set.Get("reviewer")
	if !ok {
		t.Fatalf("reviewer not loaded: %v", notices)
	}
	if !r.PlanMode || r.Permissions.Mode != "plan" {
		t.Errorf("permissionMode not applied: %+v", r.Permissions)
	}
	if strings.Join(r.Permissions.Deny, ",") != "Bash(git push:*)" || strings.Join(r.Permissions.Allow, ",") != "Bash(go test:*),Read" {
		t.Errorf("rules = %+v", r.Permissions)
	}
	if p, _ := set.Get("plain"); !p.Permissions.IsZero() || p.PlanMode {
		t.Errorf("plain agent got an override: %+v", p.Permissions)
	}
}

func TestNilSetIsBuiltins(t *testing.T) {
	var s *Set
	var names []string
	for _, r := range s.Subagents() {
		names = append(names, r.Name)
	}
	if strings.Join(names, ",") != "explore,general" {
		t.Errorf("nil set subagents = %v", names)
	}
	if r, ok := s.Get(Planner); !ok || r.System == "" {
		t.Error("nil set has no planner")
	}
}

func TestNameChecks(t *testing.T) {
	for name, want := range map[string]bool{
		"a": true, "Code-Reviewer_2.0": true, "9lives": true, strings.Repeat("x", 64): true,
		"": false, "-lead": false, ".hidden": false, "_x": false, "has space": false, "é": false,
		strings.Repeat("x", 65): false, "a/b": false,
	} {
		if got := validAgentName(name); got != want {
			t.Errorf("validAgentName(%q) = %v, want %v", name, got, want)
		}
	}
	for name, want := range map[string]bool{
		"read_file": true, "mcp2": true, "x": true,
		"": false, "Read": false, "2x": false, "_x": false, "a-b": false, "aB": false,
	} {
		if got := ownToolName(name); got != want {
			t.Errorf("ownToolName(%q) = %v, want %v", name, got, want)
		}
	}
}

// Plugins such as sentry's group agents in folders; every level is found,
// and hidden folders are not.
func TestLoadNestedAgentFiles(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, ".claude", "agents")
	nested := writeAgent(t, filepath.Join(dir, "cl"), "code-explorer.md", "---\nname: code-explorer\ndescription: Explores code.\n---\nExplore.\n")
	writeAgent(t, filepath.Join(dir, "a", "b"), "deep.md", "---\ndescription: Deep one.\n---\nDeep.\n")
	writeAgent(t, filepath.Join(dir, ".git"), "hidden.md", "---\ndescription: hidden\n---\nNo.\n")
	set, notices := Load(LoadOptions{Workspace: ws})
	r, ok := set.Get("code-explorer")
	if !ok || r.Source != nested {
		t.Fatalf("code-explorer = %+v, %v; notices %q", r, ok, notices)
	}
	if _, ok := set.Get("deep"); !ok {
		t.Errorf("two levels down not found; notices %q", notices)
	}
	if _, ok := set.Get("hidden"); ok {
		t.Error("agent in a hidden folder loaded")
	}
}
