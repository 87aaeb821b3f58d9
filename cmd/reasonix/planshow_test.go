package main

import (
	"strings"
	"testing"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/orchestrator"
	"github.com/reasonix/reasonix/providers"
)

func TestRenderPlanDAG(t *testing.T) {
	p := orchestrator.Plan{Goal: "g", Validation: "make test", Steps: []orchestrator.PlanStep{
		{ID: "s1", Title: "one"}, {ID: "s2", Title: "two", DependsOn: []string{"s1"}},
	}}
	out := renderPlanDAG(p, "plan-x", []events.StepResult{
		{Step: "s1", Status: events.StepDone, Session: "e-1", Millis: 1500,
			Usage: providers.Usage{PromptTokens: 100, CacheHitTokens: 80, CompletionTokens: 5, Cost: 0.0123, Currency: "USD"}},
		{Step: "s1-resolve", Kind: events.StepKindResolve, Title: "resolve the merge of s1", Status: events.StepFailed, Branch: "reasonix/plan-x/s1"},
	})
	for _, want := range []string{"plan plan-x: g", "s1  done     one  [worker e-1, 100 in (80 cached) / 5 out tokens, cost", "1.5s",
		"s2  pending  two  ← s1", "s1-resolve  failed   resolve the merge of s1  [branch reasonix/plan-x/s1]", "validation: make test"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}
