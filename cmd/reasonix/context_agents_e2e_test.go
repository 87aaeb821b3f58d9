package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestE2EContextListsTheSubagents: a Claude Code project's
// .claude/agents/*.md show in `reasonix context` as the subagents the task
// tool can start, with the file each came from (and the built-ins), in the
// text and in --json; a read-only role, which gets no task tool, lists none.
func TestE2EContextListsTheSubagents(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.write(".claude/agents/reviewer.md", "---\nname: code-reviewer\ndescription: Reviews code for quality\ntools: Read, Grep, Glob\n---\nYou review code.\n")
	r := e.run("", "context")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	var line string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.Contains(l, "code-reviewer") {
			line = l
		}
	}
	if line == "" || !strings.Contains(line, ".claude/agents/reviewer.md") || !strings.Contains(r.stdout, "explore (builtin)") {
		t.Fatalf("context does not list the subagents with their sources:\n%s", r.stdout)
	}
	r = e.run("", "context", "--json")
	var rep struct {
		Agents []struct{ Name, Source, Description string } `json:"agents"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.stdout)
	}
	found := false
	for _, a := range rep.Agents {
		if a.Name == "code-reviewer" && strings.HasSuffix(a.Source, ".claude/agents/reviewer.md") && a.Description == "Reviews code for quality" {
			found = true
		}
	}
	if !found {
		t.Errorf("--json agents = %+v, want code-reviewer from .claude/agents/reviewer.md", rep.Agents)
	}
	r = e.run("", "context", "--json", "--role", "explore")
	rep.Agents = nil
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || len(rep.Agents) != 0 {
		t.Errorf("the read-only explore role lists subagents: %+v (%v)", rep.Agents, err)
	}
}
