package orchestrator

import (
	"context"
	"errors"
	"fmt"

	"github.com/reasonix/reasonix/agents"
	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/roles"
	"github.com/reasonix/reasonix/tools"
)

// ErrNoPlan is returned when the planner stops without submitting a plan,
// even after being reminded.
var ErrNoPlan = errors.New("the planner finished without calling submit_plan")

const planReminder = "You have not submitted a plan. Call submit_plan now with the complete plan; do not answer in prose."

func (c *Coordinator) plannerRole() roles.Role {
	r, ok := c.role(roles.Planner)
	if !ok {
		r = roles.Role{Name: roles.Planner, ReadOnlyOnly: true, PlanMode: true}
	}
	return r
}

// plannerTools is the planner's tool set: the role's read-only tools, the
// skill tool (loading instructions only; it never starts subagents from
// here) and submit_plan. Writers are dropped even if a customised role
// lists them, because plan mode promises the planner changes nothing.
func (c *Coordinator) plannerTools(r roles.Role) *tools.Registry {
	reg := r.FilterTools(c.toolPool(nil)).Filter(func(t tools.Tool) bool { return t.ReadOnly() })
	reg.Add(submitPlanTool{})
	return reg
}

// Plan runs the planner alone on prompt, saves the plan (when a state
// directory is configured) and publishes it as PlanReady. It returns the
// plan, its id ("" when not saved) and the planner's session result.
func (c *Coordinator) Plan(ctx context.Context, prompt string) (Plan, string, Result, error) {
	p, res, err := c.planSession(ctx, prompt)
	if err != nil {
		return p, "", res, err
	}
	id := ""
	if c.rt.StateDir != "" {
		if id, err = SavePlan(c.rt.Home, c.rt.StateDir, "", p); err != nil {
			return p, "", res, err
		}
	}
	res.PlanID, res.Plan = id, &p
	c.rt.Sink.Publish(events.Event{Type: events.PlanReady, Session: res.SessionID, Role: roles.Planner, Plan: &p, Text: id})
	return p, id, res, nil
}

// planSession runs a planner session on prompt and returns its plan,
// neither saved nor published.
func (c *Coordinator) planSession(ctx context.Context, prompt string) (Plan, Result, error) {
	r := c.plannerRole()
	modelRef := c.rt.Settings.PlannerModel
	if modelRef == "" {
		modelRef = r.Model
	}
	maxSteps := c.rt.Settings.PlannerMaxSteps
	if maxSteps <= 0 {
		maxSteps = r.MaxSteps
	}
	if maxSteps <= 0 {
		maxSteps = roles.DefaultPlannerMaxSteps
	}
	reg := c.plannerTools(r)
	w, err := c.open(sessionSpec{role: roles.Planner, modelRef: modelRef, system: r.System, perms: r.Permissions,
		tools: reg, maxSteps: maxSteps, planMode: true})
	if err != nil {
		return Plan{}, Result{}, fmt.Errorf("start planner: %w", err)
	}
	defer w.close()

	first := "Plan this task. Research with the read-only tools as needed, then call submit_plan.\n\nTask:\n" + prompt
	out, err := w.Send(ctx, first)
	total := out
	if err == nil && out.HaltTool != SubmitPlanTool {
		c.rt.Sink.Publish(events.Event{Type: events.Notice, Session: w.ID(), Role: roles.Planner,
			Text: "the planner answered without calling submit_plan; reminding it once"})
		out, err = w.FollowUp(ctx, planReminder)
		total = mergeOutcomes(total, out)
	}
	res := c.finish(w, total, err)
	if err != nil {
		return Plan{}, res, fmt.Errorf("planner: %w", err)
	}
	if out.HaltTool != SubmitPlanTool {
		return Plan{}, res, ErrNoPlan
	}
	p, err := ParsePlan([]byte(out.HaltResult))
	if err != nil {
		return Plan{}, res, fmt.Errorf("planner: %w", err)
	}
	return p, res, nil
}

// mergeOutcomes adds a follow-up Send's outcome to an earlier one.
func mergeOutcomes(a, b agents.Outcome) agents.Outcome {
	a.Text, a.Stop, a.HaltResult, a.HaltTool = b.Text, b.Stop, b.HaltResult, b.HaltTool
	a.Steps += b.Steps
	a.Usage.Add(b.Usage)
	a.Calls = append(a.Calls, b.Calls...)
	return a
}

// Execute runs plan, which is not saved, as a DAG of parallel workers
// (see ExecutePlan).
func (c *Coordinator) Execute(ctx context.Context, plan Plan) (Result, error) {
	return c.executePlan(ctx, plan, "", SavedRun{})
}

// ExecutePlan runs plan as a DAG: steps whose dependencies are done go
// to a pool of agent.max_parallel executor workers, each its own session
// with the same prefix, isolated as agent.plan_isolation says; then the
// plan's validation runs, with bounded fix-up steps when it fails. A
// failed or blocked step triggers one re-plan of the remaining steps.
// With id set, progress is saved after every step; o.Resume keeps the
// steps an earlier run of id finished.
func (c *Coordinator) ExecutePlan(ctx context.Context, plan Plan, id string, o SavedRun) (Result, error) {
	return c.executePlan(ctx, plan, id, o)
}

// SavedRun says how a saved plan is run.
type SavedRun struct {
	// Resume runs only the steps an earlier run did not finish.
	Resume bool
	// AcceptModified runs a plan (and resumes from progress) changed
	// outside Reasonix as it stands: the person has read it and takes
	// it as theirs. Without it such a file is a *store.ModifiedError.
	AcceptModified bool
}

func (o SavedRun) mode() store.LoadMode {
	if o.AcceptModified {
		return store.AcceptModified
	}
	return store.Refuse
}

// PlanThenExecute plans prompt, asks the PlanApprover (if any), then
// executes the approved plan. The Result is the executor's, with Total
// including the planner's usage; on rejection it returns events.ErrPlanRejected
// and the planner's result.
func (c *Coordinator) PlanThenExecute(ctx context.Context, prompt string) (Result, error) {
	return c.planThenExecute(ctx, prompt, nil)
}

// planThenExecute is PlanThenExecute; beforeRun, when set, is called
// once the plan is approved, before any step runs (a conversation
// checkpoints its workspace there, so rewind can undo the plan).
func (c *Coordinator) planThenExecute(ctx context.Context, prompt string, beforeRun func(context.Context)) (Result, error) {
	plan, id, pres, err := c.Plan(ctx, prompt)
	if err != nil {
		return pres, err
	}
	plan, err = c.approve(ctx, id, plan)
	if err != nil {
		return pres, err
	}
	if beforeRun != nil {
		beforeRun(ctx)
	}
	res, err := c.executePlan(ctx, plan, id, SavedRun{})
	res.PlanID = id
	res.Total.Add(pres.Total)
	return res, err
}

// approve asks the approver, if any, about a fresh plan.
func (c *Coordinator) approve(ctx context.Context, id string, plan Plan) (Plan, error) {
	if c.rt.PlanApprover == nil {
		return plan, nil
	}
	got, d, err := c.rt.PlanApprover.Approve(ctx, plan)
	if err != nil {
		return plan, fmt.Errorf("plan approval: %w", err)
	}
	switch d {
	case PlanApprove:
	case PlanEdit:
		if err := got.Validate(); err != nil {
			return plan, fmt.Errorf("edited plan: %w", err)
		}
		plan = got
		if id != "" {
			if _, err := SavePlan(c.rt.Home, c.rt.StateDir, id, plan); err != nil {
				return plan, err
			}
		}
		c.rt.Sink.Publish(events.Event{Type: events.PlanReady, Role: roles.Planner, Plan: &plan, Text: id})
	case PlanReject:
		return plan, events.ErrPlanRejected
	default:
		return plan, fmt.Errorf("plan approval: unknown decision %v", d)
	}
	if c.rt.OnPlanApproved != nil {
		c.rt.OnPlanApproved(plan)
	}
	return plan, nil
}

// ExecuteSaved loads a saved plan (id, id prefix or file) and executes
// it as o says. A saved plan or progress file that is not what Reasonix
// last wrote is a *store.ModifiedError (see LoadPlan) and runs nothing.
func (c *Coordinator) ExecuteSaved(ctx context.Context, idOrFile string, o SavedRun) (Result, error) {
	p, id, notice, err := LoadPlan(c.rt.Home, c.rt.StateDir, idOrFile, o.mode())
	if err != nil {
		return Result{}, err
	}
	if notice != "" {
		c.rt.Sink.Publish(events.Event{Type: events.Notice, Role: roles.Executor, Text: notice})
	}
	res, err := c.executePlan(ctx, p, id, o)
	res.PlanID = id
	return res, err
}
