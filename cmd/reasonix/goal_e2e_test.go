package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/llmtest"
	"github.com/reasonix/reasonix/internal/store"
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
	first := savedGoal(t, e)
	if first == nil || first.Status != "active" {
		t.Fatalf("goal not saved as active in its session: %+v", first)
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

	// The goal went on in its own session, not a new one.
	if g := savedGoal(t, e); g == nil || g.Status != "done" || g.SessionID != first.SessionID {
		t.Errorf("resumed goal %+v, want done in session %s", g, first.SessionID)
	}

	r = e.run("", "run", "--goal", "clear")
	if r.code != 0 || !strings.Contains(r.stderr, "goal cleared") {
		t.Fatalf("clear: exit %d %s", r.code, r.stderr)
	}
	if g := savedGoal(t, e); g != nil {
		t.Errorf("goal still saved after clear: %+v", g)
	}
	if n := len(e.srv.Requests()); n != 1 {
		t.Errorf("clear talked to the model: %d requests", n)
	}
}

// savedGoal is the goal of the newest session of e's repository, or nil.
func savedGoal(t *testing.T, e *e2e) *events.GoalState {
	t.Helper()
	list, _, err := store.List(filepath.Join(e.repo, ".reasonix", "sessions"), false)
	if err != nil || len(list) == 0 {
		t.Fatalf("no sessions: %v", err)
	}
	l, err := store.Load(list[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	return l.Meta.Goal
}
