package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/reasonix/reasonix/agents"
	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/orchestrator"
)

// showPlan prints a saved plan as its DAG with each step's status, worker
// and usage (`reasonix plan show ID`). ok is false when ref names no
// saved plan, so "plan show X" can still be a prompt.
func showPlan(ref string, io stdio) (ok bool, err error) {
	loaded, wd, err := loadConfig("")
	if err != nil {
		return true, err
	}
	state := filepath.Join(workspaceOf(loaded, wd), ".reasonix")
	// Showing runs nothing: a file changed outside Reasonix is shown with
	// a warning, read without its seal (and left unsealed, so run --plan
	// still refuses it).
	p, id, notice, err := orchestrator.LoadPlan(loaded.Home, state, ref, store.Refuse)
	var mod *store.ModifiedError
	if errors.As(err, &mod) {
		fmt.Fprintf(io.err, "reasonix: warning: %v\n  reasonix run --plan %s refuses it; --accept-modified runs it as it stands\n", err, mod.ID)
		p, id, notice, err = orchestrator.LoadPlan("", state, ref, store.Refuse)
	}
	if err != nil {
		return false, nil
	}
	if notice != "" {
		fmt.Fprintln(io.err, "reasonix: "+notice)
	}
	steps, notice, err := orchestrator.LoadProgress(loaded.Home, state, id, store.Refuse)
	if errors.As(err, &mod) {
		fmt.Fprintf(io.err, "reasonix: warning: %v\n  reasonix run --plan %s --resume refuses it; --accept-modified resumes from it as it stands\n", err, id)
		steps, notice, err = orchestrator.LoadProgress("", state, id, store.Refuse)
	}
	if err != nil && !errors.Is(err, orchestrator.ErrNoProgress) {
		return true, err
	}
	if notice != "" {
		fmt.Fprintln(io.err, "reasonix: "+notice)
	}
	fmt.Fprint(io.out, renderPlanDAG(p, id, steps))
	return true, nil
}

// renderPlanDAG lays a plan out one step a line, each after the steps it
// depends on (the plan's order guarantees that), with what ran it.
func renderPlanDAG(p orchestrator.Plan, id string, steps []events.StepResult) string {
	byID := map[string]events.StepResult{}
	for _, s := range steps {
		byID[s.Step] = s
	}
	var b strings.Builder
	fmt.Fprintf(&b, "plan %s: %s\n", id, text.OneLine(p.Goal))
	width := 0
	for _, s := range p.Steps {
		width = max(width, len(s.ID))
	}
	line := func(s events.StepResult, title string, deps []string) {
		status := s.Status
		if status == "" {
			status = events.StepPending
		}
		fmt.Fprintf(&b, "  %-*s  %-8s %s", width, s.Step, status, text.Clip(text.OneLine(title), 60))
		if len(deps) > 0 {
			fmt.Fprintf(&b, "  ← %s", strings.Join(deps, ", "))
		}
		var extra []string
		if s.Session != "" {
			extra = append(extra, "worker "+s.Session)
		}
		if u := s.Usage; u.PromptTokens+u.CompletionTokens > 0 {
			extra = append(extra, fmt.Sprintf("%d in (%d cached) / %d out tokens", u.PromptTokens, u.CacheHitTokens, u.CompletionTokens))
		}
		if u := s.Usage; u.Cost > 0 || u.Currency != "" {
			extra = append(extra, "cost "+agents.Money(u.Cost, u.Currency))
		}
		if s.Millis > 0 {
			extra = append(extra, (time.Duration(s.Millis) * time.Millisecond).Round(10*time.Millisecond).String())
		}
		if s.Branch != "" {
			extra = append(extra, "branch "+s.Branch)
		}
		if len(extra) > 0 {
			fmt.Fprintf(&b, "  [%s]", strings.Join(extra, ", "))
		}
		b.WriteString("\n")
	}
	inPlan := map[string]bool{}
	for _, st := range p.Steps {
		inPlan[st.ID] = true
		s, ok := byID[st.ID]
		if !ok {
			s = events.StepResult{Step: st.ID}
		}
		line(s, st.Title, st.DependsOn)
	}
	for _, s := range steps {
		if !inPlan[s.Step] {
			line(s, s.Title, nil)
		}
	}
	if v := strings.TrimSpace(p.Validation); v != "" {
		fmt.Fprintf(&b, "validation: %s\n", v)
	}
	return b.String()
}
