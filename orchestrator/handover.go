package orchestrator

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/tools"
)

// Names of the tools the coordinator adds to sessions.
const (
	SubmitPlanTool = "submit_plan"
	GoalStatusTool = "goal_status"
	TaskTool       = "task"
)

// submitPlanTool is how the planner hands over its plan. It halts the
// planner session so the plan, not more chat, is the planner's last word.
type submitPlanTool struct{}

func (submitPlanTool) Name() string { return SubmitPlanTool }

func (submitPlanTool) Description() string {
	return "Submit the finished implementation plan. Call it exactly once, when your research is done; " +
		"it ends planning. Steps are ordered; depends_on may only name earlier step ids. " +
		"If the plan is rejected as invalid, fix what the error names and call it again."
}

// Schema is planSchema (schemas_gen.go), generated from Plan, the struct
// ParsePlan decodes; see schema_test.go.
func (submitPlanTool) Schema() json.RawMessage { return json.RawMessage(planSchema) }

// ReadOnly is true: submitting changes nothing, and plan-mode gates must
// let it through.
func (submitPlanTool) ReadOnly() bool { return true }

// Access: handing over a plan changes nothing outside the session.
func (submitPlanTool) Access(json.RawMessage) (tools.Access, error) {
	return tools.Access{Kind: tools.KindOther, SessionOnly: true, Detail: "plan"}, nil
}

func (submitPlanTool) Execute(_ context.Context, _ *tools.Env, args json.RawMessage) (tools.Result, error) {
	p, err := ParsePlan(args)
	if err != nil {
		return tools.Result{}, fmt.Errorf("%w; fix the plan and call submit_plan again", err)
	}
	return tools.Result{Content: string(p.JSON()), Summary: fmt.Sprintf("plan submitted: %d steps", len(p.Steps)), Halt: true}, nil
}

// Goal statuses reported through goal_status.
const (
	GoalDone     = events.GoalDone
	GoalBlocked  = events.GoalBlocked
	GoalContinue = events.GoalContinue
)

// GoalReport is one goal_status call.
type GoalReport = events.GoalReport

// goalStatusTool ends a goal turn with a structured report.
type goalStatusTool struct{}

func (goalStatusTool) Name() string { return GoalStatusTool }

func (goalStatusTool) Description() string {
	return "Report progress on the current goal and end this turn: done when the goal is met (with evidence), " +
		"blocked when you cannot go on without the user (say exactly what blocks you), continue when there is more to do."
}

// Schema is goalStatusSchema (schemas_gen.go), generated from GoalReport;
// see schema_test.go.
func (goalStatusTool) Schema() json.RawMessage { return json.RawMessage(goalStatusSchema) }

// ReadOnly is true: a report changes nothing.
func (goalStatusTool) ReadOnly() bool { return true }

// Access: a goal report changes nothing outside the session.
func (goalStatusTool) Access(json.RawMessage) (tools.Access, error) {
	return tools.Access{Kind: tools.KindOther, SessionOnly: true, Detail: "goal report"}, nil
}

func (goalStatusTool) Execute(_ context.Context, _ *tools.Env, args json.RawMessage) (tools.Result, error) {
	var r GoalReport
	if err := tools.DecodeArgs(args, &r); err != nil {
		return tools.Result{}, err
	}
	r.Status = strings.ToLower(strings.TrimSpace(r.Status))
	switch r.Status {
	case GoalDone, GoalBlocked, GoalContinue:
	default:
		return tools.Result{}, fmt.Errorf("status %q is not one of done, blocked, continue", r.Status)
	}
	if strings.TrimSpace(r.Summary) == "" {
		return tools.Result{}, fmt.Errorf("summary is empty; say what was achieved or what blocks you")
	}
	b, _ := json.Marshal(r)
	return tools.Result{Content: string(b), Summary: "goal " + r.Status, Halt: true}, nil
}

// ReportStepTool is the tool a plan worker ends its step with when it
// cannot finish it; a plain final answer marks the step done.
const ReportStepTool = "report_step"

// stepReport is one report_step call.
type stepReport struct {
	Status  string `json:"status" jsonschema:"failed: the step cannot be done as described; blocked: it needs something only a person can give; done: finished (a plain final answer says the same)"`
	Summary string `json:"summary" jsonschema:"What was done, and exactly why the step failed or what blocks it"`
}

// reportStepTool lets a plan worker end its step as failed or blocked.
type reportStepTool struct{}

func (reportStepTool) Name() string { return ReportStepTool }

func (reportStepTool) Description() string {
	return "End your plan step with a status. Use it when the step failed (it cannot be done as described) or is blocked " +
		"(it needs something only a person can give), and say exactly why; the coordinator may re-plan the rest. " +
		"When the step is done, just answer with a short summary instead."
}

// Schema is stepReportSchema (schemas_gen.go), generated from stepReport.
func (reportStepTool) Schema() json.RawMessage { return json.RawMessage(stepReportSchema) }

// ReadOnly is true: a report changes nothing.
func (reportStepTool) ReadOnly() bool { return true }

// Access: a step report changes nothing outside the session.
func (reportStepTool) Access(json.RawMessage) (tools.Access, error) {
	return tools.Access{Kind: tools.KindOther, SessionOnly: true, Detail: "step report"}, nil
}

func (reportStepTool) Execute(_ context.Context, _ *tools.Env, args json.RawMessage) (tools.Result, error) {
	var r stepReport
	if err := tools.DecodeStrict(args, &r); err != nil {
		return tools.Result{}, err
	}
	r.Status = strings.ToLower(strings.TrimSpace(r.Status))
	switch r.Status {
	case events.StepDone, events.StepFailed, events.StepBlocked:
	default:
		return tools.Result{}, fmt.Errorf("status %q is not one of failed, blocked, done", r.Status)
	}
	if strings.TrimSpace(r.Summary) == "" {
		return tools.Result{}, fmt.Errorf("summary is empty; say what was done and why the step %s", r.Status)
	}
	b, _ := json.Marshal(r)
	return tools.Result{Content: string(b), Summary: "step " + r.Status, Halt: true}, nil
}
