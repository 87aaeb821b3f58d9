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
// offers; after quitting, `reasonix --continue` and `reasonix run
// --continue` keep the model and the /effort chosen. Shift-Tab switches
// the posture shown in the status line.
func TestTUIModelSwitchIsKept(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{Text: "ANSWER ONE"},
		scripted.Turn{Text: "ANSWER TWO"},
		scripted.Turn{Text: "ANSWER THREE"},
		scripted.Turn{Text: "ANSWER FOUR"},
	)
	e.write("reasonix.toml", fmt.Sprintf("[[providers]]\nname = \"sim\"\nbase_url = %q\nmodels = [\"test-model\", \"other-model\"]\n", e.srv.URL()))
	tt := startTUI(t, e)
	tt.typeLine("first question")
	tt.waitFor("ANSWER ONE")
	if got := wireReq(t, e.srv.Requests()[0]).Model; got != "test-model" {
		t.Fatalf("first request model = %q", got)
	}
	tt.typeLine("/model")
	tt.waitFor("model for the next request", "● sim/test-model", "sim/other-model")
	tt.keys("Down")
	tt.keys("Enter")
	tt.waitFor("model sim/other-model for the next request", "prompt cache is per model")
	tt.typeLine("second question")
	tt.waitFor("ANSWER TWO")
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
	tt.waitFor("ANSWER TWO")
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
}
