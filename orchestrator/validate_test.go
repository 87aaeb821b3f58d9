package orchestrator

import (
	"context"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/providers/scripted"
	"github.com/reasonix/reasonix/tools"
	_ "github.com/reasonix/reasonix/tools/builtin" // the real bash tool
)

func withBash(t *testing.T, v ValidationSettings) harnessOpt {
	return func(rt *Runtime) {
		bash, ok := tools.Builtin("bash")
		if !ok {
			t.Fatal("no bash tool")
		}
		rt.Tools.Add(bash)
		rt.Settings.Validation = v
	}
}

func validations(rec *events.Recorder) []events.ValidationRun {
	var out []events.ValidationRun
	for _, e := range rec.Events() {
		if e.Type == events.Validation && e.Validation != nil {
			out = append(out, *e.Validation)
		}
	}
	return out
}

// TestGoalValidationLoop: a goal turn that changed files runs the
// configured validation; its failure goes back to the model as the next
// turn (a "done" is not accepted while it fails), and the goal ends once
// it passes. Every run is an event.
func TestGoalValidationLoop(t *testing.T) {
	h := newHarness(t, []scripted.Turn{
		{ToolCalls: []scripted.Call{call("write_file", map[string]string{"path": "x.txt", "content": "bad\n"})}},
		{ToolCalls: []scripted.Call{call(GoalStatusTool, map[string]string{"status": "done", "summary": "wrote x"})}},
		{Match: "VALIDATION-OUTPUT-MARK", ToolCalls: []scripted.Call{call("write_file", map[string]string{"path": "x.txt", "content": "good\n"})}},
		{ToolCalls: []scripted.Call{call(GoalStatusTool, map[string]string{"status": "done", "summary": "fixed x"})}},
	}, withBash(t, ValidationSettings{Command: "grep -q good x.txt || { echo VALIDATION-OUTPUT-MARK: x.txt is not good; exit 3; }"}))
	cv, err := h.coord.Converse()
	if err != nil {
		t.Fatal(err)
	}
	defer cv.Close()
	res, err := cv.Goal(context.Background(), "make x.txt good")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != GoalDone || res.Turns != 1 || res.Last == nil || res.Last.Summary != "fixed x" {
		t.Errorf("goal = %+v", res.GoalState)
	}
	runs := validations(h.rec)
	if len(runs) != 2 || runs[0].Passed || runs[0].ExitCode != 3 || runs[0].Source != "config" || runs[0].Attempt != 1 ||
		!strings.Contains(runs[0].Output, "x.txt is not good") || !runs[1].Passed || runs[1].Attempt != 2 {
		t.Fatalf("validation runs = %+v", runs)
	}
	// The failure reached the model in a user turn, not the prefix.
	var fed bool
	for _, s := range h.sessions {
		for _, r := range s.requests() {
			m := r.Messages[len(r.Messages)-1]
			if m.Role == "user" && strings.Contains(m.Content, "<validation>") && strings.Contains(m.Content, "exit code 3") {
				fed = true
			}
			if strings.Contains(r.Messages[0].Content, "VALIDATION-OUTPUT-MARK") {
				t.Error("validation output reached the system prompt")
			}
		}
	}
	if !fed {
		t.Error("the failure was not fed back as a user turn")
	}
	h.checkPrefixes()
}

// TestChatValidationSwitch: plain turns do not validate by default;
// [validation] enabled = true makes them, and a fix that still fails ends
// after max_attempts with a notice.
func TestChatValidationSwitch(t *testing.T) {
	write := scripted.Turn{ToolCalls: []scripted.Call{call("write_file", map[string]string{"path": "y.txt", "content": "y"})}}
	h := newHarness(t, []scripted.Turn{write, {Text: "wrote y"}}, withBash(t, ValidationSettings{Command: "false"}))
	cv, err := h.coord.Converse()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cv.Send(context.Background(), "write y"); err != nil {
		t.Fatal(err)
	}
	cv.Close()
	if runs := validations(h.rec); len(runs) != 0 {
		t.Errorf("a plain turn validated by default: %+v", runs)
	}

	on := true
	h = newHarness(t, []scripted.Turn{write, {Text: "wrote y"}, write, {Text: "tried"}, write, {Text: "tried again"}},
		withBash(t, ValidationSettings{Enabled: &on, Command: "false", MaxAttempts: 2}))
	cv, err = h.coord.Converse()
	if err != nil {
		t.Fatal(err)
	}
	defer cv.Close()
	res, err := cv.Send(context.Background(), "write y")
	if err != nil {
		t.Fatal(err)
	}
	if runs := validations(h.rec); len(runs) != 2 || runs[0].Passed || runs[1].Passed {
		t.Errorf("runs = %+v", runs)
	}
	if res.Text != "tried" {
		t.Errorf("result text %q, want the fix turn's", res.Text)
	}
	var notice bool
	for _, e := range h.rec.Events() {
		notice = notice || e.Type == events.Notice && strings.Contains(e.Text, "still fails after 2 attempt(s)")
	}
	if !notice {
		t.Error("no notice that validation still fails")
	}
}
