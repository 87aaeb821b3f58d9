package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// wireRequest is what the tests read of a chat completions request.
type wireRequest struct {
	Model           string `json:"model"`
	ReasoningEffort string `json:"reasoning_effort"`
	Messages        []wireMsg
}

func wireReq(t *testing.T, body []byte) wireRequest {
	t.Helper()
	var r wireRequest
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestTUIModelSwitchIsKept: in a real terminal, /model picks another
// configured model and the next request (the scripted server's log) goes
// to it with the conversation intact; /models lists what the endpoint
// offers; after quitting, `reasonix --continue`, `reasonix run
// --continue` and `/resume` keep the model and the /effort chosen. Shift-Tab switches
// the posture shown in the status line.
func TestTUIModelSwitchIsKept(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{Text: "ANSWER ONE"},
		scripted.Turn{Text: "ANSWER TWO"},
		scripted.Turn{Text: "ANSWER THREE"},
		scripted.Turn{Text: "ANSWER FOUR"},
	)
	e.writeUserConfig(fmt.Sprintf("[[providers]]\nname = \"sim\"\nbase_url = %q\nmodels = [\"test-model\", \"other-model\"]\n", e.srv.URL()))
	tt := startTUI(t, e)
	// The command menu opens on "/" and filters as you type; Tab takes.
	tt.tmux("send-keys", "-t", "rx", "-l", "/mod")
	tt.waitFor("↑↓ move", "/model", "/models", "switch the model of the next request")
	tt.keys("Down", "Tab")
	tt.waitFor("/models ")
	tt.keys("C-c")
	tt.typeLine("first question")
	// The answer shows before its turn has ended (the session is still
	// being written); /model waits for the turn, so wait for "ready".
	tt.waitFor("ANSWER ONE", "│ ready")
	if got := wireReq(t, e.srv.Requests()[0]).Model; got != "test-model" {
		t.Fatalf("first request model = %q", got)
	}
	tt.typeLine("/model")
	tt.waitFor("model for the next request", "● sim/test-model", "sim/other-model")
	tt.keys("Down")
	tt.keys("Enter")
	tt.waitFor("model sim/other-model for the next request", "prompt cache is per model")
	tt.typeLine("second question")
	tt.waitFor("ANSWER TWO", "│ ready")
	second := wireReq(t, e.srv.Requests()[1])
	if second.Model != "other-model" {
		t.Errorf("after /model the request went to %q", second.Model)
	}
	if len(second.Messages) < 4 || second.Messages[1].Content != "first question" {
		t.Errorf("the switched request lost the conversation: %+v", second.Messages)
	}
	tt.typeLine("/models")
	tt.waitFor("configured models", "sim offers", "scripted")
	tt.keys("BTab")
	tt.waitFor("posture auto", "auto (Shift-Tab)")
	tt.quit()

	tt = startTUI(t, e, "--continue")
	tt.waitFor("ANSWER TWO", "│ ready")
	if s := tt.screen(); !strings.Contains(s, "sim/other-model") {
		t.Errorf("the continued conversation's status line does not show the switched model:\n%s", s)
	}
	tt.typeLine("/effort high")
	tt.waitFor("reasoning effort high for the next request")
	tt.typeLine("third question")
	tt.waitFor("ANSWER THREE")
	third := wireReq(t, e.srv.Requests()[2])
	if third.Model != "other-model" || third.ReasoningEffort != "high" {
		t.Errorf("after --continue: model %q effort %q", third.Model, third.ReasoningEffort)
	}
	tt.quit()

	if r := e.run("", "run", "--continue", "fourth question"); r.code != 0 {
		t.Fatalf("run --continue: %d %s", r.code, r.stderr)
	}
	fourth := wireReq(t, e.srv.Requests()[3])
	if fourth.Model != "other-model" || fourth.ReasoningEffort != "high" || len(fourth.Messages) < 8 {
		t.Errorf("run --continue: model %q effort %q, %d messages", fourth.Model, fourth.ReasoningEffort, len(fourth.Messages))
	}

	// A fresh start is on the default model; /resume brings the
	// conversation back with its own.
	tt = startTUI(t, e)
	tt.waitFor("sim/test-model")
	tt.typeLine("/resume")
	tt.waitFor("resume a conversation", "first question")
	tt.keys("Enter")
	tt.waitFor("ANSWER FOUR", "sim/other-model · effort high")
	// /cost counts the conversation's requests over every run from its file.
	tt.typeLine("/cost")
	s := tt.waitFor("cost so far", "every run")
	if !strings.Contains(s, "4 req") {
		t.Errorf("/cost after /resume does not count the 4 requests of the conversation:\n%s", s)
	}
	tt.quit()
}

// TestE2EStreamJSONSetModel: over stream-json input, set_model and
// set_effort lines switch the conversation between the turns around
// them; an unknown model is an error event and the run goes on.
func TestE2EStreamJSONSetModel(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "ONE"}, scripted.Turn{Text: "TWO"})
	e.writeUserConfig(fmt.Sprintf("[[providers]]\nname = \"sim\"\nbase_url = %q\nmodels = [\"test-model\", \"other-model\"]\n", e.srv.URL()))
	c := startStream(t, e)
	c.send(userLine("first"))
	c.send(map[string]any{"type": "set_model", "model": "nosuch/provider-model"})
	c.send(map[string]any{"type": "set_model", "model": "sim/other-model"})
	c.send(map[string]any{"type": "set_effort", "effort": "low"})
	c.send(userLine("second"))
	c.await("the first turn", turnDone)
	c.await("the unknown model's error", typed("error"))
	c.await("the switch notice", func(m map[string]any) bool {
		return m["type"] == "notice" && strings.Contains(fmt.Sprint(m["text"]), "model sim/other-model from the next request")
	})
	c.await("the second turn", turnDone)
	reqs := e.srv.Requests()
	if a, b := wireReq(t, reqs[0]), wireReq(t, reqs[1]); a.Model != "test-model" || b.Model != "other-model" || b.ReasoningEffort != "low" || a.ReasoningEffort != "" {
		t.Errorf("requests: %q/%q then %q/%q", a.Model, a.ReasoningEffort, b.Model, b.ReasoningEffort)
	}
	_ = c.stdin.Close()
}

// TestTUIPostureAndTodos: in the ask posture a todo_write and a todo_read
// never ask (they change nothing outside the session) and the list shows
// as a checklist with its progress in the status line, while an edit
// asks; after Shift-Tab to auto, the same kind of edit runs without an
// overlay and the file changes.
func TestTUIPostureAndTodos(t *testing.T) {
	t.Parallel()
	todos := map[string]any{"todos": []map[string]string{
		{"content": "read the greeting", "status": "completed"},
		{"content": "change the greeting", "status": "in_progress", "activeForm": "changing the greeting"},
		{"content": "check it", "status": "pending"},
	}}
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("todo_write", todos), call("todo_read", map[string]any{})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("edit_file", map[string]any{"path": "greet.txt", "old_string": "hello", "new_string": "hello, world"})}},
		scripted.Turn{Text: "First edit refused."},
		scripted.Turn{ToolCalls: []scripted.Call{call("edit_file", map[string]any{"path": "greet.txt", "old_string": "hello", "new_string": "hello, auto"})}},
		scripted.Turn{Text: "Second edit done."},
	)
	e.write("greet.txt", "hello\n")
	tt := startTUI(t, e)
	tt.waitFor("ask (Shift-Tab)")
	tt.typeLine("plan and edit")
	s := tt.waitFor("approve edit_file?")
	for _, w := range []string{"approve todo_write?", "approve todo_read?"} {
		if strings.Contains(s, w) {
			t.Errorf("%s was asked", w)
		}
	}
	tt.keys("n")
	s = tt.waitFor("First edit refused.", "✓ todo_write", "✓ todo_read", "[x] read the greeting", "[~] changing the greeting", "[ ] check it", "todo 1/3")
	if strings.Contains(s, "✗ todo_") {
		t.Errorf("a todo call was refused:\n%s", s)
	}
	tt.keys("BTab")
	tt.waitFor("posture auto", "auto (Shift-Tab)")
	tt.typeLine("edit again")
	s = tt.waitFor("Second edit done.", "✓ edit_file greet.txt")
	if strings.Contains(s, "approve edit_file?") {
		t.Errorf("auto posture still asked about a workspace edit:\n%s", s)
	}
	if got := e.read("greet.txt"); got != "hello, auto\n" {
		t.Errorf("after the edit in auto the file is %q", got)
	}
	tt.quit()
}
