package orchestrator

import (
	"context"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/providers/scripted"
)

// TestEngineCarriesWhatRanIntoTheNextTurn: a skill run as a subagent and
// an executed plan ran in sessions of their own; the conversation's next
// turn carries their reports and changed files, in the user turn, so the
// cached prefix is untouched.
func TestEngineCarriesWhatRanIntoTheNextTurn(t *testing.T) {
	setup := func(ws string) {
		writeSkill(t, ws, "review", "description: Review the code.\nrunAs: subagent\n", "REVIEWBODY Review it.\n")
	}
	h := newHarness(t, []scripted.Turn{
		{Match: "CHAT-ONE", Text: "hello"},
		{Match: "REVIEW-ARGS", Text: "REVIEW FOUND: nil check missing in parse()"},
		{Match: "fix what the review found", Text: "fixed"},
		{Match: "PLAN-IT", ToolCalls: []scripted.Call{call(SubmitPlanTool, map[string]any{
			"goal": "add x", "steps": []map[string]any{{"id": "s1", "title": "write x.go"}}})}},
		{Match: "assigned step s1 ", ToolCalls: []scripted.Call{call("write_file", map[string]string{"path": "x.go", "content": "package x"})}},
		{Match: "assigned step s1 ", Text: "PLAN DONE: x.go written"},
		{Match: "and after the plan", Text: "ok"},
	}, withSkills(t, setup))
	hub := &events.Hub{}
	h.coord.rt.Sink = hub
	eng, err := NewEngine(h.coord, hub, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx := context.Background()
	for _, step := range []func() error{
		func() error { return eng.Send(ctx, "CHAT-ONE") },
		func() error { return eng.Send(ctx, "/review REVIEW-ARGS") },
		func() error { return eng.Send(ctx, "fix what the review found") },
		func() error { return eng.Plan(ctx, "PLAN-IT") },
		func() error { return eng.Send(ctx, "and after the plan") },
	} {
		if err := step(); err != nil {
			t.Fatal(err)
		}
	}
	conv := h.session("CHAT-ONE")
	reqs := conv.requests()
	if len(reqs) != 3 {
		t.Fatalf("conversation requests = %d, want 3", len(reqs))
	}
	turn := func(i int) string { m := reqs[i].Messages; return m[len(m)-1].Content }
	if got := turn(1); !strings.Contains(got, "/review") || !strings.Contains(got, "REVIEW FOUND: nil check missing in parse()") ||
		!strings.HasSuffix(got, "fix what the review found") {
		t.Errorf("turn after the skill:\n%s", got)
	}
	if got := turn(2); !strings.Contains(got, `the plan "add x" (1 steps) was approved and executed`) ||
		!strings.Contains(got, "PLAN DONE: x.go written") || !strings.Contains(got, "Files changed: x.go") ||
		strings.Contains(got, "REVIEW FOUND") {
		t.Errorf("turn after the plan:\n%s", got)
	}
	if strings.Contains(reqs[2].Messages[0].Content, "earlier-work") {
		t.Error("a record reached the system prompt")
	}
	h.checkPrefixes()
}

func TestPersonTextDropsWhatReasonixAdded(t *testing.T) {
	typed := "fix the <b>bug</b>\nplease"
	turn := earlierWork([]string{"/plan x: done.\nReport: fine"}, "<tool-changes>\nMCP server s now offers: a\n</tool-changes>\n\n"+typed)
	if got := personText(turn); got != typed {
		t.Errorf("personText = %q, want %q", got, typed)
	}
	if got := personText(typed); got != typed {
		t.Errorf("plain text changed: %q", got)
	}
	if half := "<earlier-work>\nno end"; personText(half) != half {
		t.Errorf("an unclosed block was cut")
	}
}
