package events

import "github.com/reasonix/reasonix/providers"

// Statuses of a plan step.
const (
	StepPending = "pending"
	StepRunning = "running"
	StepDone    = "done"
	StepFailed  = "failed"
	StepBlocked = "blocked"
)

// Kinds of work a plan run hands to a worker besides the plan's own steps.
const (
	// StepKindPlan is one of the plan's steps.
	StepKindPlan = "step"
	// StepKindResolve merges a step whose changes conflicted with what
	// was already merged.
	StepKindResolve = "resolve"
	// StepKindFixup repairs what the plan's validation command reported.
	StepKindFixup = "fixup"
)

// StepResult is what a plan worker hands back for one step, and the
// state a plan run saves and publishes (StepUpdate) for it.
type StepResult struct {
	Step   string `json:"step"`
	Title  string `json:"title,omitempty"`
	Kind   string `json:"kind,omitempty"`
	Status string `json:"status"`
	// Summary is the worker's final answer, or its report_step summary.
	Summary string `json:"summary,omitempty"`
	// Files are the paths the step changed, relative to the workspace.
	Files []string `json:"files,omitempty"`
	// Diff is the step's change as a unified diff (worktree isolation),
	// clipped to a size a brief can carry.
	Diff string `json:"diff,omitempty"`
	// Session is the worker's session id; Branch its temporary branch
	// when kept (a conflict nobody resolved).
	Session string          `json:"session,omitempty"`
	Branch  string          `json:"branch,omitempty"`
	Usage   providers.Usage `json:"usage"`
	// Millis is how long the worker ran.
	Millis int64 `json:"ms,omitempty"`
}

// Finished reports whether the step reached an outcome.
func (r StepResult) Finished() bool {
	return r.Status == StepDone || r.Status == StepFailed || r.Status == StepBlocked
}
