package main

import (
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// TestTUIBlocksDiffAndJobs drives the real binary in a terminal: the
// model's reasoning folds to one line once it acts, an edit shows its
// counts and a coloured diff, a background job is counted in the status
// line, listed by /jobs and its end reported; Ctrl-T shows the reasoning.
func TestTUIBlocksDiffAndJobs(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{Reasoning: "The greeting must become a farewell, so edit greet.go.",
			ToolCalls: []scripted.Call{call("edit_file", map[string]any{"path": "greet.go", "old_string": "hello", "new_string": "farewell"})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{
			"command": "echo server-up; sleep 30", "run_in_background": true})}},
		scripted.Turn{Text: "Edited and started the server."},
		scripted.Turn{ToolCalls: []scripted.Call{call("job", map[string]any{"job_id": "job-1", "kill": true})}},
		scripted.Turn{Text: "Stopped it."},
	)
	e.write("greet.go", greetSource)
	tt := startTUI(t, e, "chat", "--yolo")
	tt.typeLine("make it a farewell")
	s := tt.waitFor("▸ thought for", "(10 words)", "✓ edit_file greet.go +1 −1", `+const greeting = "farewell"`,
		"Edited and started the server.", "1 job running (/jobs)")
	if strings.Contains(s, "The greeting must become") {
		t.Errorf("the reasoning is not folded:\n%s", s)
	}
	dump := tt.tmux("capture-pane", "-e", "-p", "-t", "rx")
	if p := sgrBefore(t, dump, `+const greeting = "farewell"`); !hasColour(p) {
		t.Errorf("an added line has SGR %v, want a colour", p)
	}
	if p := sgrBefore(t, dump, `-const greeting = "hello"`); !hasColour(p) {
		t.Errorf("a removed line has SGR %v, want a colour", p)
	}
	tt.typeLine("/jobs")
	tt.waitFor("background jobs (1 running", "● job-1 running", "echo server-up; sleep 30")
	tt.keys("C-t")
	tt.waitFor("▾ thought for", "The greeting must become a farewell, so edit greet.go.")
	tt.typeLine("stop it")
	s = tt.waitFor("Stopped it.", "■ background job-1 killed")
	if strings.Contains(s, "job running") {
		t.Errorf("the status line still counts the killed job:\n%s", s)
	}
	tt.quit()
}

// TestTUISubagentBlock: a subagent started by the task tool is one live
// line named by its description while it runs (its calls counted in
// place), then one summary line; Ctrl-T shows its calls.
func TestTUISubagentBlock(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("task", map[string]any{"agent": "explore", "description": "find the TODOs", "prompt": "SUBJOB look for TODO"})}},
		scripted.Turn{Match: "SUBJOB", ToolCalls: []scripted.Call{call("grep", map[string]any{"pattern": "TODO"})}},
		scripted.Turn{Match: "SUBJOB", ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": "notes.txt"})}, DelayMS: 300},
		scripted.Turn{Match: "SUBJOB", Text: "Found two TODOs.", DelayMS: 2500},
		scripted.Turn{Text: "The subagent reported back."},
	)
	e.write("notes.txt", "TODO one\nTODO two\n")
	tt := startTUI(t, e, "chat", "--yolo")
	tt.typeLine("look around")
	s := tt.waitFor("[explore: find the TODOs] · running", "2 calls")
	if n := strings.Count(s, "[explore: find the TODOs]"); n != 1 {
		t.Errorf("the running subagent has %d lines, want 1:\n%s", n, s)
	}
	s = tt.waitFor("▸ [explore: find the TODOs] done", "2 calls", "The subagent reported back.")
	if strings.Contains(s, "· running") || strings.Contains(s, "grep TODO") {
		t.Errorf("the finished subagent is still live or shows its calls collapsed:\n%s", s)
	}
	tt.keys("C-t")
	tt.waitFor("▾ [explore: find the TODOs] done", "✓ grep TODO", "✓ read_file notes.txt")
	tt.quit()
}
