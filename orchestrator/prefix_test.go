package orchestrator

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
	"github.com/reasonix/reasonix/roles"
)

func TestRulesInEverySystemPrompt(t *testing.T) {
	const rulesText = "<rules source=\"/repo/AGENTS.md\">\nALWAYS-RULE\n</rules>"
	var calls atomic.Int32
	h := newHarness(t, []scripted.Turn{
		{Match: "PARENT", ToolCalls: []scripted.Call{
			call(TaskTool, map[string]string{"agent": "explore", "description": "look", "prompt": "CHILD"}),
		}},
		{Match: "CHILD", Text: "found"},
		{Match: "PARENT", Text: "done"},
		{Match: "Plan this task", ToolCalls: []scripted.Call{{Name: SubmitPlanTool, Arguments: planArgs(helloPlan)}}},
	}, func(rt *Runtime) {
		rt.Rules = func() string { calls.Add(1); return rulesText }
	})
	if _, err := h.coord.Run(context.Background(), "PARENT"); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := h.coord.Plan(context.Background(), "Plan this task"); err != nil {
		t.Fatal(err)
	}
	for _, first := range []string{"PARENT", "CHILD", "Plan this task"} {
		sys := h.session(first).system()
		if !strings.Contains(sys, "\n\n"+rulesText) {
			t.Errorf("%s session's system prompt lacks the rules:\n%s", first, sys)
		}
	}
	exec := h.session("PARENT")
	if rs := exec.requests(); len(rs) != 2 || rs[0].Messages[0].Content != rs[1].Messages[0].Content {
		t.Errorf("executor system prompt changed between turns (%d requests)", len(rs))
	}
	h.checkPrefixes()

	p, err := h.coord.Prefix(roles.Executor)
	if err != nil {
		t.Fatal(err)
	}
	if p.System != exec.system() || p.Rules != rulesText || !strings.HasPrefix(p.System, p.RolePrompt+"\n\n") || len(p.Tools) == 0 {
		t.Errorf("Prefix disagrees with the session:\n%+v", p)
	}
	if _, err := h.coord.Prefix("nobody"); err == nil {
		t.Error("unknown role accepted")
	}
}
