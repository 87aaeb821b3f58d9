package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/providers/scripted"
)

func status(s, summary string) scripted.Call {
	return call(GoalStatusTool, map[string]string{"status": s, "summary": summary, "evidence": "tests"})
}

// checkGoalTurns asserts the goal rides in every user turn and never in
// the system prompt.
func checkGoalTurns(t *testing.T, p *recProvider, goal string) {
	t.Helper()
	if strings.Contains(p.system(), goal) {
		t.Errorf("goal text is in the system prompt")
	}
	for i, r := range p.requests() {
		var last providers.Message
		for _, m := range r.Messages {
			if m.Role == providers.RoleUser {
				last = m
			}
		}
		if !strings.Contains(last.Content, goal) {
			t.Errorf("request %d: newest user turn lacks the goal: %q", i, last.Content)
		}
	}
}

func TestGoalDone(t *testing.T) {
	const goal = "GOALTEXT make tests pass"
	h := newHarness(t, []scripted.Turn{
		{ToolCalls: []scripted.Call{call("write_file", map[string]string{"path": "fix.go", "content": "package x"})}},
		{ToolCalls: []scripted.Call{status(GoalContinue, "wrote fix.go")}},
		{Match: "Last status: continue: wrote fix.go", ToolCalls: []scripted.Call{status(GoalDone, "all green")}},
	})
	res, err := h.coord.Goal(context.Background(), goal)
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != GoalDone || res.Reason != ReasonDone || res.Turns != 2 || res.Last.Summary != "all green" {
		t.Errorf("result %+v", res.GoalState)
	}
	saved, ok, err := h.coord.CurrentGoal()
	if err != nil || !ok || saved.Status != GoalDone || saved.Turns != 2 || saved.SessionID != res.SessionID {
		t.Errorf("saved %+v ok %v err %v", saved, ok, err)
	}
	if len(h.used()) != 1 {
		t.Errorf("goal used %d sessions, want one executor session throughout", len(h.used()))
	}
	checkGoalTurns(t, h.session("GOALTEXT"), goal)
	h.checkPrefixes()
	if _, err := h.coord.ResumeGoal(context.Background()); err == nil {
		t.Error("a done goal resumed")
	}
	if err := h.coord.ClearGoal(); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := h.coord.CurrentGoal(); ok {
		t.Error("goal survived ClearGoal")
	}
	if err := h.coord.ClearGoal(); err != nil {
		t.Errorf("clearing no goal: %v", err)
	}
}

func TestGoalBlockedThreeTimes(t *testing.T) {
	h := newHarness(t, []scripted.Turn{
		{ToolCalls: []scripted.Call{status(GoalBlocked, "Need the API key.")}},
		{ToolCalls: []scripted.Call{status(GoalBlocked, "Need a database")}}, // a different blocker resets the count
		{ToolCalls: []scripted.Call{status(GoalBlocked, "need the   API key")}},
		{ToolCalls: []scripted.Call{status(GoalContinue, "tried again")}},
		{ToolCalls: []scripted.Call{status(GoalBlocked, "NEED THE API KEY!")}},
		{ToolCalls: []scripted.Call{status(GoalBlocked, "need the API key?")}},
		{Text: "never reached"},
	})
	res, err := h.coord.Goal(context.Background(), "GOALTEXT deploy")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != GoalBlocked || res.Turns != 6 || res.BlockedCount != 3 {
		t.Errorf("result %+v", res.GoalState)
	}
	if h.script.Queue().Remaining() != 1 {
		t.Errorf("goal ran past the third identical blocked report")
	}
	checkGoalTurns(t, h.session("GOALTEXT"), "GOALTEXT deploy")
	h.checkPrefixes()
}

func TestGoalCapAndResume(t *testing.T) {
	turns := []scripted.Turn{
		{ToolCalls: []scripted.Call{status(GoalContinue, "step one")}},
		{Text: "I forgot to call goal_status"},
		{ToolCalls: []scripted.Call{status(GoalContinue, "step three")}},
		// After the restart.
		{Match: "Last status: continue: step three", ToolCalls: []scripted.Call{status(GoalDone, "finished")}},
	}
	h := newHarness(t, turns, func(rt *Runtime) { rt.Settings.GoalMaxTurns = 3 })
	res, err := h.coord.Goal(context.Background(), "GOALTEXT refactor")
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != GoalStopped || res.Reason != ReasonMaxTurns || res.Turns != 3 {
		t.Fatalf("result %+v", res.GoalState)
	}
	first := h.session("GOALTEXT")
	checkGoalTurns(t, first, "GOALTEXT refactor")
	if got := first.requests()[2].Messages; !strings.Contains(got[len(got)-1].Content, "Last status: continue: I forgot to call goal_status") {
		t.Errorf("a turn without goal_status was not treated as continue: %q", got[len(got)-1].Content)
	}

	// A new coordinator over the same state directory, as after a restart.
	rt := h.coord.rt
	h.coord = New(rt)
	res2, err := h.coord.ResumeGoal(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// The goal goes on in its own session: the same id and file.
	if res2.Status != GoalDone || res2.Turns != 4 || res2.SessionID != res.SessionID {
		t.Errorf("resumed %+v", res2.GoalState)
	}
	used := h.used()
	resumed := used[len(used)-1]
	// The resumed session carries the old history: its first request
	// extends the old session's last one (system prompt included).
	old := first.requests()
	if !strings.HasPrefix(string(joinEncoded(resumed.requests()[0])), string(joinEncoded(old[len(old)-1]))) {
		t.Errorf("resumed session does not continue the old history")
	}
	checkGoalTurns(t, resumed, "GOALTEXT refactor")
	h.checkPrefixes()
}

func TestGoalCancel(t *testing.T) {
	h := newHarness(t, []scripted.Turn{{DelayMS: 5000, Text: "slow"}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := h.coord.Goal(ctx, "GOALTEXT x")
	if !errors.Is(err, context.Canceled) || res.Status != GoalStopped || res.Reason != ReasonCancelled {
		t.Fatalf("res %+v err %v", res.GoalState, err)
	}
	saved, ok, _ := h.coord.CurrentGoal()
	if !ok || saved.Status != GoalStopped {
		t.Errorf("saved %+v", saved)
	}
	if _, err := h.coord.Goal(context.Background(), "  "); err == nil {
		t.Error("empty goal accepted")
	}
}

func TestGoalCancelledBeforeTurnCountsNoTurn(t *testing.T) {
	h := newHarness(t, []scripted.Turn{{Text: "never sent"}})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := h.coord.Goal(ctx, "GOALTEXT y")
	if !errors.Is(err, context.Canceled) || res.Status != GoalStopped || res.Reason != ReasonCancelled || res.Turns != 0 {
		t.Fatalf("res %+v err %v", res.GoalState, err)
	}
	if saved, ok, _ := h.coord.CurrentGoal(); !ok || saved.Turns != 0 {
		t.Errorf("saved %+v", saved)
	}
}

func TestNormalizeBlocked(t *testing.T) {
	a := normalizeBlocked("Need the API key.")
	for _, s := range []string{"need the   API key", "NEED THE API KEY!", "  need, the api key  "} {
		if normalizeBlocked(s) != a {
			t.Errorf("%q normalises to %q, want %q", s, normalizeBlocked(s), a)
		}
	}
	if normalizeBlocked("need a database") == a {
		t.Error("different blockers compare equal")
	}
}

func TestConversationGoal(t *testing.T) {
	h := newHarness(t, []scripted.Turn{
		{Text: "hi"},
		{ToolCalls: []scripted.Call{status(GoalContinue, "half")}},
		{ToolCalls: []scripted.Call{status(GoalDone, "whole")}},
		{Text: "anything else?"},
	})
	cv, err := h.coord.Converse()
	if err != nil {
		t.Fatal(err)
	}
	defer cv.Close()
	if res, err := cv.Send(context.Background(), "CONVO hello"); err != nil || res.Text != "hi" || res.SessionID != cv.ID() {
		t.Fatalf("send: %+v %v", res, err)
	}
	g, err := cv.Goal(context.Background(), "GOALTEXT finish")
	if err != nil || g.Status != GoalDone || g.Turns != 2 || g.SessionID != cv.ID() {
		t.Fatalf("goal: %+v %v", g.GoalState, err)
	}
	if res, err := cv.Send(context.Background(), "thanks"); err != nil || res.Text != "anything else?" {
		t.Fatalf("send after goal: %+v %v", res, err)
	}
	if len(h.used()) != 1 {
		t.Errorf("conversation used %d sessions", len(h.used()))
	}
	h.checkPrefixes()
}

func TestGoalMode(t *testing.T) {
	for _, c := range []struct {
		in, goal string
		research bool
	}{
		{"add a README", "add a README", false},
		{"--research map the callers of parse", "map the callers of parse", true},
		{"find out why the build is slow", "find out why the build is slow", true},
		{"--simple optimise the loop", "optimise the loop", false},
		{"--simple --research x", "x", true},
	} {
		g, r := goalMode(c.in)
		if g != c.goal || r != c.research {
			t.Errorf("goalMode(%q) = %q, %v; want %q, %v", c.in, g, r, c.goal, c.research)
		}
	}
}

// TestGoalStormSpansContinuationTurns: the storm breaker forgives
// repeats at a person's turn, not at the goal's own "keep going" turns,
// so a model re-reading the same file every turn is stopped on the
// fourth read.
func TestGoalStormSpansContinuationTurns(t *testing.T) {
	read := call("read_file", map[string]string{"path": "a.txt"})
	var turns []scripted.Turn
	for range 4 {
		turns = append(turns,
			scripted.Turn{ToolCalls: []scripted.Call{read}},
			scripted.Turn{ToolCalls: []scripted.Call{status(GoalContinue, "still looking")}})
	}
	turns = append(turns, scripted.Turn{ToolCalls: []scripted.Call{status(GoalDone, "gave up reading")}})
	h := newHarness(t, turns)
	if _, err := h.coord.Goal(context.Background(), "find the thing"); err != nil {
		t.Fatal(err)
	}
	var blocked []bool
	for _, ev := range h.events(events.ToolEnd) {
		if ev.Tool.Name == "read_file" {
			blocked = append(blocked, ev.Tool.Summary == "repeated call not run")
		}
	}
	if want := []bool{false, false, false, true}; fmt.Sprint(blocked) != fmt.Sprint(want) {
		t.Errorf("read_file blocked per turn = %v, want %v", blocked, want)
	}
}

// TestGoalKeepsThePersonsControlFileEdit: a person edits a control file
// between a chat turn and a /goal; the goal's first call must not take
// the edit for the model's and revert it.
func TestGoalKeepsThePersonsControlFileEdit(t *testing.T) {
	var guard *permission.ControlGuard
	h := newHarness(t, []scripted.Turn{
		{ToolCalls: []scripted.Call{call("write_file", map[string]string{"path": "a.txt", "content": "one"})}},
		{Text: "wrote a.txt"},
		{ToolCalls: []scripted.Call{call("write_file", map[string]string{"path": "b.txt", "content": "two"})}},
		{ToolCalls: []scripted.Call{status(GoalDone, "wrote b.txt")}},
	}, func(rt *Runtime) {
		guard = permission.NewControlGuard(rt.Workspace, "")
		rt.Guard = guard
	})
	settings := filepath.Join(h.ws, ".claude", "settings.json")
	cv, err := h.coord.Converse()
	if err != nil {
		t.Fatal(err)
	}
	defer cv.Close()
	if _, err := cv.Send(context.Background(), "write a.txt"); err != nil {
		t.Fatal(err)
	}
	// The person, in their editor, between turns.
	if err := os.MkdirAll(filepath.Dir(settings), 0o755); err != nil {
		t.Fatal(err)
	}
	const mine = `{"permissions":{"allow":["Bash(make test)"]}}`
	if err := os.WriteFile(settings, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := cv.Goal(context.Background(), "write b.txt"); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(settings)
	if err != nil || string(got) != mine {
		t.Errorf("the person's settings.json after the goal: %q, %v; want it kept", got, err)
	}
}
