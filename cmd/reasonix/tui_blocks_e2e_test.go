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
