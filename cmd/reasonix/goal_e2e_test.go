package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/internal/llmtest"
	"github.com/reasonix/reasonix/providers/scripted"
)

// TestE2EGoalResumeAndClear: a goal interrupted by a provider failure stays
// active on disk; `--goal resume` continues it in a new process with the
// earlier history, and `--goal clear` forgets it.
func TestE2EGoalResumeAndClear(t *testing.T) {
	e := newE2E(t,
		goalStatus("continue", "step one done"),
		scripted.Turn{Text: "half an answ", ChunkSize: 4, CutAfter: 2},
	)
	r := e.run("", "run", "--goal", "ship RESUME-ME")
	if r.code != 1 {
		t.Fatalf("first run: exit %d, want 1 (stream cut); %s", r.code, r.stderr)
	}
	state := filepath.Join(e.repo, ".reasonix", "goals", "current.json")
	b, err := os.ReadFile(state)
	if err != nil || !strings.Contains(string(b), `"active"`) {
		t.Fatalf("goal not saved as active: %v %s", err, b)
	}

	e.srv = llmtest.Start(t, &scripted.Script{Turns: []scripted.Turn{goalStatus("done", "shipped")}})
	e.env = append(e.env, "REASONIX_BASE_URL="+e.srv.URL())
	r = e.run("", "run", "--goal", "resume")
	if r.code != 0 || !strings.Contains(r.stderr, "goal done") {
		t.Fatalf("resume: exit %d %s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	msgs := string(messagesOf(t, reqs[0]))
	if !strings.Contains(msgs, "ship RESUME-ME") || !strings.Contains(msgs, "step one done") {
		t.Errorf("resumed session lacks the earlier history: %s", msgs)
	}

	r = e.run("", "run", "--goal", "clear")
	if r.code != 0 {
		t.Fatalf("clear: exit %d %s", r.code, r.stderr)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("goal state still on disk after clear: %v", err)
	}
	if n := len(e.srv.Requests()); n != 1 {
		t.Errorf("clear talked to the model: %d requests", n)
	}
}
