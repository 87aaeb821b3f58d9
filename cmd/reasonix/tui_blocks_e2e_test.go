package main

import (
	"os"
	"path/filepath"
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

// TestTUIPlanWorkersLiveAndAskOneAtATime: an approved /plan's two
// independent steps run at once, each a live line with its status; both
// workers want a command the gate asks about, and their questions come
// one at a time in one overlay naming the step; answered, both steps end
// as summary lines.
func TestTUIPlanWorkersLiveAndAskOneAtATime(t *testing.T) {
	t.Parallel()
	plan := map[string]any{"goal": "two marker files", "steps": []map[string]any{
		{"id": "s1", "title": "touch one", "files": []string{"one.txt"}},
		{"id": "s2", "title": "touch two", "files": []string{"two.txt"}},
	}}
	turns := []scripted.Turn{{ToolCalls: []scripted.Call{call("submit_plan", plan)}}}
	turns = append(turns, stepWorker("s1", call("bash", map[string]any{"command": "touch one.txt"}))...)
	turns = append(turns, stepWorker("s2", call("bash", map[string]any{"command": "touch two.txt"}))...)
	e := newE2E(t, turns...)
	e.write("reasonix.toml", "[agent]\nmax_parallel = 2\n")
	tt := startTUI(t, e, "chat")
	tt.typeLine("/plan make two marker files")
	tt.waitFor("run this plan?", "touch one", "touch two")
	tt.keys("a")
	// One question on screen, naming its step; both steps live meanwhile.
	s := tt.waitFor("approve bash?", "[step s1] touch one · executor · running", "[step s2] touch two · executor · running")
	other, file := "s2", "two.txt"
	if strings.Contains(s, "step     s2") {
		other, file = "s1", "one.txt"
	} else if !strings.Contains(s, "step     s1") {
		t.Fatalf("the approval does not name its step:\n%s", s)
	}
	if strings.Contains(s, "step     "+other) {
		t.Fatalf("both workers' questions on screen at once:\n%s", s)
	}
	tt.keys("y")
	tt.waitFor("approve bash?", "step     "+other+": touch "+map[string]string{"s1": "one", "s2": "two"}[other], file)
	tt.keys("y")
	s = tt.waitFor("▸ [step s1: touch one] done: did s1", "▸ [step s2: touch two] done: did s2")
	if strings.Contains(s, "approve bash?") || strings.Contains(s, "· running") {
		t.Errorf("a question or a live step left after the plan ended:\n%s", s)
	}
	for _, f := range []string{"one.txt", "two.txt"} {
		if _, err := os.Stat(filepath.Join(e.repo, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	tt.quit()
}
