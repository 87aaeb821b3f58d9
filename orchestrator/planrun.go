package orchestrator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/reasonix/reasonix/agents"
	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/roles"
	"github.com/reasonix/reasonix/tools"
)

// StepResult is a plan worker's typed answer for one step; it lives in
// events so front ends render it without importing the coordinator.
type StepResult = events.StepResult

// Step statuses.
const (
	StepPending = events.StepPending
	StepRunning = events.StepRunning
	StepDone    = events.StepDone
	StepFailed  = events.StepFailed
	StepBlocked = events.StepBlocked
)

// MaxFixups bounds the fix-up steps a failing validation gets.
const MaxFixups = 2

// ErrNoProgress is returned when --resume finds nothing saved for a plan.
var ErrNoProgress = errors.New("no saved progress for this plan")

// stepJob is one unit of work for a plan worker.
type stepJob struct {
	id, kind, title string
	step            PlanStep
	// brief is the worker's first user turn.
	brief string
	// root is the worker's workspace; wt and start its worktree and the
	// commit it started from (worktree isolation).
	root, wt, start string
	// of is the step a resolution job merges; conflict its files.
	of       string
	conflict []string
	// output is what the failing validation printed (fix-up jobs).
	output string
}

// stepDone is a worker's answer for a job.
type stepDone struct {
	job *stepJob
	res StepResult
	err error
}

// planProgress is what a plan run saves after every step, so a resumed
// run does only what is not done.
type planProgress struct {
	Plan      string       `json:"plan"`
	Isolation string       `json:"isolation,omitempty"`
	Steps     []StepResult `json:"steps"`
	Replanned bool         `json:"replanned,omitempty"`
	Fixups    int          `json:"fixups,omitempty"`
	// Validation is passed or failed once the plan's validation ran.
	Validation string    `json:"validation,omitempty"`
	Updated    time.Time `json:"updated"`
}

// progressPath is where a saved plan's progress lives; a directory of
// its own, so plan id prefixes never match it.
func progressPath(stateDir, id string) string {
	return filepath.Join(PlansDir(stateDir), "runs", id+".json")
}

// progressSeals are the seals of a state directory's plan progress
// files (see store.FileSeals): a forged one would make --resume skip
// steps or run them again.
func progressSeals(home, stateDir string) *store.FileSeals {
	return store.NewFileSeals(home, filepath.Dir(progressPath(stateDir, "x")), "plan progress")
}

// LoadProgress reads the saved progress of plan id: one entry per step
// that has an outcome or is running, plus resolution and fix-up steps;
// and a notice, when there is one. With home set the file is checked
// against its seal as [LoadPlan] checks a plan.
func LoadProgress(home, stateDir, id string, mode store.LoadMode) ([]StepResult, string, error) {
	p, notice, err := loadProgress(home, stateDir, id, mode)
	if err != nil {
		return nil, "", err
	}
	return p.Steps, notice, nil
}

func loadProgress(home, stateDir, id string, mode store.LoadMode) (*planProgress, string, error) {
	path := progressPath(stateDir, id)
	b, notice, err := progressSeals(home, stateDir).Read(path, mode)
	if err != nil {
		var mod *store.ModifiedError
		switch {
		case errors.Is(err, os.ErrNotExist):
			return nil, "", fmt.Errorf("%w %s", ErrNoProgress, id)
		case errors.As(err, &mod):
			return nil, "", err
		}
		return nil, "", fmt.Errorf("load plan progress: %w", err)
	}
	var p planProgress
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, "", fmt.Errorf("load plan progress %s: %w", path, err)
	}
	return &p, notice, nil
}

// planRun is one execution of a plan as a DAG of parallel workers. Only
// the scheduler goroutine (the caller of execute) touches its fields;
// workers get a job and send back a stepDone.
type planRun struct {
	c    *Coordinator
	plan Plan
	id   string // saved plan id; "" when not saved
	mode string
	git  *gitTree
	prog *planProgress
	// queue holds resolution and fix-up jobs, run before plan steps.
	queue []*stepJob
	// stop is set when a step failed or could not land: nothing new
	// starts; fatal, when set, ends the run without a re-plan.
	stop  bool
	fatal error
	total providers.Usage
}

// result returns the saved entry of step id, creating a pending one.
func (r *planRun) result(id string) *StepResult {
	for i := range r.prog.Steps {
		if r.prog.Steps[i].Step == id {
			return &r.prog.Steps[i]
		}
	}
	r.prog.Steps = append(r.prog.Steps, StepResult{Step: id, Status: StepPending})
	return &r.prog.Steps[len(r.prog.Steps)-1]
}

func (r *planRun) status(id string) string {
	for _, s := range r.prog.Steps {
		if s.Step == id {
			return s.Status
		}
	}
	return StepPending
}

// set records a step's new state, saves the progress and publishes it.
func (r *planRun) set(res StepResult) {
	*r.result(res.Step) = res
	r.save()
	r.publish(res)
}

// publish reports a step's state without saving it: a resolution step's,
// whose outcome is saved as the merged step's.
func (r *planRun) publish(res StepResult) {
	cp := res
	r.c.rt.Sink.Publish(events.Event{Type: events.StepUpdate, Step: res.Step, Session: res.Session,
		Role: roles.Executor, StepResult: &cp, Text: r.id})
}

func (r *planRun) save() {
	if r.id == "" || r.c.rt.StateDir == "" {
		return
	}
	r.prog.Updated = time.Now().UTC()
	b, _ := json.MarshalIndent(r.prog, "", "  ")
	if err := progressSeals(r.c.rt.Home, r.c.rt.StateDir).Write(progressPath(r.c.rt.StateDir, r.id), append(b, '\n'), 0o644); err != nil {
		r.c.rt.Sink.Publish(events.Event{Type: events.Notice, Text: "plan progress not saved: " + err.Error()})
	}
}

func (r *planRun) notice(msg string) {
	r.c.rt.Sink.Publish(events.Event{Type: events.Notice, Role: roles.Executor, Text: msg})
}

// executePlan runs plan as a DAG of workers; resume keeps the outcome
// of steps a saved earlier run finished.
func (c *Coordinator) executePlan(ctx context.Context, plan Plan, id string, o SavedRun) (Result, error) {
	if err := plan.Validate(); err != nil {
		return Result{}, err
	}
	r := &planRun{c: c, plan: plan, id: id, prog: &planProgress{Plan: id}}
	if o.Resume {
		p, notice, err := loadProgress(c.rt.Home, c.rt.StateDir, id, o.mode())
		if err != nil {
			return Result{}, err
		}
		if notice != "" {
			r.notice(notice)
		}
		r.prog = p
		// What was running when the earlier run died runs again, and so
		// does a plan step that failed or was blocked: resuming is the
		// person's word that its cause is dealt with (a key supplied, a
		// conflict looked at), and it starts from the merged work.
		for i := range p.Steps {
			s := &p.Steps[i]
			if !s.Finished() || (s.Status != StepDone && (s.Kind == events.StepKindPlan || s.Kind == "")) {
				s.Status, s.Branch = StepPending, ""
			}
		}
	}
	runID := id
	if runID == "" {
		runID = store.NewID("run-")
	}
	r.mode = c.rt.Settings.PlanIsolation
	if r.mode == "" {
		r.mode = IsolationWorktree
	}
	if r.mode == IsolationWorktree {
		home := c.rt.Home
		if home == "" {
			home = c.rt.StateDir
		}
		var secrets *tools.Secrets
		if c.rt.Env != nil {
			secrets = c.rt.Env.Secrets
		}
		g, why, err := openGitTree(ctx, c.rt.Workspace, home, runID, secrets)
		if err != nil {
			return Result{}, fmt.Errorf("plan worktrees: %w", err)
		}
		if g == nil {
			r.notice("plan isolation: no worktrees (" + why + "); steps whose files overlap run one at a time")
			r.mode = IsolationFiles
		} else {
			r.git = g
			defer g.close(ctx)
		}
	}
	r.prog.Isolation = r.mode
	r.save()
	err := r.execute(ctx)
	return r.finalResult(err), err
}

// execute runs phases until the plan is done, failed or interrupted: the
// steps, a re-plan after a failure (once), the validation and its
// fix-ups.
func (r *planRun) execute(ctx context.Context) error {
	for {
		r.schedule(ctx)
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("plan interrupted (resume with --resume): %w", err)
		}
		if r.fatal != nil {
			return r.fatal
		}
		if bad := r.unsuccessful(); len(bad) > 0 {
			if !r.prog.Replanned && !r.c.rt.Settings.NoReplan {
				if err := r.replan(ctx, bad); err != nil {
					return err
				}
				continue
			}
			return r.failure(bad)
		}
		ok, out, err := r.validate(ctx)
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if r.prog.Fixups >= MaxFixups {
			return fmt.Errorf("plan validation %q still fails after %d fix-up step(s): %s", r.validation(), r.prog.Fixups, text.Clip(text.OneLine(out), 300))
		}
		r.prog.Fixups++
		fid := fmt.Sprintf("fixup-%d", r.prog.Fixups)
		r.queue = append(r.queue, &stepJob{id: fid, kind: events.StepKindFixup, title: "fix what validation reported", output: out})
	}
}

// unsuccessful lists the failed and blocked entries.
func (r *planRun) unsuccessful() []StepResult {
	var out []StepResult
	for _, s := range r.prog.Steps {
		if s.Status == StepFailed || s.Status == StepBlocked {
			out = append(out, s)
		}
	}
	return out
}

func (r *planRun) failure(bad []StepResult) error {
	var parts []string
	for _, s := range bad {
		parts = append(parts, fmt.Sprintf("step %s %s: %s", s.Step, s.Status, text.Clip(text.OneLine(s.Summary), 200)))
	}
	return fmt.Errorf("plan did not complete: %s", strings.Join(parts, "; "))
}

// schedule runs every job that can run, up to max_parallel at once, and
// returns when none is running and none can start. Jobs go to the pool
// over one channel and answers come back over another; the pool's
// goroutines end before schedule returns.
func (r *planRun) schedule(ctx context.Context) {
	n := r.c.maxParallel
	jobs := make(chan *stepJob)
	results := make(chan stepDone, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range jobs {
				results <- r.work(ctx, j)
			}
		}()
	}
	defer func() {
		close(jobs)
		wg.Wait()
	}()
	running := map[string]*stepJob{}
	for {
		for !r.stop && ctx.Err() == nil && len(running) < n {
			j := r.next(ctx, running)
			if j == nil {
				break
			}
			running[j.id] = j
			started := StepResult{Step: j.id, Title: j.title, Kind: j.kind, Status: StepRunning}
			if j.kind == events.StepKindResolve {
				r.publish(started)
			} else {
				r.set(started)
			}
			// Never blocks: fewer than n jobs are out, so a worker waits.
			jobs <- j
		}
		if len(running) == 0 {
			return
		}
		d := <-results
		delete(running, d.job.id)
		r.total.Add(d.res.Usage)
		r.finish(ctx, d)
	}
}

// next picks the next job that may start: a queued resolution or fix-up,
// else the first pending step whose dependencies are done and, under
// files isolation, whose files no running step shares. It prepares the
// job's worktree.
func (r *planRun) next(ctx context.Context, running map[string]*stepJob) *stepJob {
	var j *stepJob
	if len(r.queue) > 0 {
		if len(running) > 0 && r.queue[0].kind == events.StepKindFixup {
			return nil
		}
		j, r.queue = r.queue[0], r.queue[1:]
	} else {
		for _, s := range r.plan.Steps {
			if r.status(s.ID) != StepPending || running[s.ID] != nil || !r.depsDone(s) {
				continue
			}
			if r.mode == IsolationFiles && r.overlapsRunning(s, running) {
				continue
			}
			j = &stepJob{id: s.ID, kind: events.StepKindPlan, title: s.Title, step: s}
			break
		}
	}
	if j == nil {
		return nil
	}
	j.root = r.c.rt.Workspace
	if r.git != nil {
		var err error
		if j.kind == events.StepKindResolve {
			j.wt, j.start, err = r.git.startResolve(ctx, j.of, j.id)
		} else {
			j.wt, j.start, err = r.git.add(ctx, j.id)
		}
		if err != nil {
			r.set(StepResult{Step: j.id, Title: j.title, Kind: j.kind, Status: StepFailed, Summary: "worktree: " + err.Error()})
			r.stop = true
			if r.fatal == nil {
				r.fatal = fmt.Errorf("plan step %s: %w", j.id, err)
			}
			return nil
		}
		j.root = r.git.root(j.wt)
	}
	switch j.kind {
	case events.StepKindPlan:
		j.brief = r.stepBrief(j)
	case events.StepKindResolve:
		j.brief = r.resolveBrief(j)
	case events.StepKindFixup:
		j.brief = r.fixupBrief(j)
	}
	return j
}

func (r *planRun) depsDone(s PlanStep) bool {
	for _, d := range s.DependsOn {
		if r.status(d) != StepDone {
			return false
		}
	}
	return true
}

// overlapsRunning reports whether s names a file (or a directory of
// one) a running step names.
func (r *planRun) overlapsRunning(s PlanStep, running map[string]*stepJob) bool {
	for _, j := range running {
		for _, a := range j.step.Files {
			for _, b := range s.Files {
				if pathsOverlap(a, b) {
					return true
				}
			}
		}
	}
	return false
}

func pathsOverlap(a, b string) bool {
	a = filepath.ToSlash(filepath.Clean(a))
	b = filepath.ToSlash(filepath.Clean(b))
	return a == b || strings.HasPrefix(a, b+"/") || strings.HasPrefix(b, a+"/")
}

// work runs one job in its own executor session (a pool goroutine).
func (r *planRun) work(ctx context.Context, j *stepJob) stepDone {
	t0 := time.Now()
	res := StepResult{Step: j.id, Title: j.title, Kind: j.kind}
	w, err := r.c.openWorker(j)
	if err != nil {
		res.Status, res.Summary = StepFailed, "start worker: "+err.Error()
		return stepDone{job: j, res: res, err: err}
	}
	defer w.close()
	acc := w.fam.beginRun()
	out, err := w.Send(ctx, j.brief)
	sr := r.c.finish(w, out, err)
	sr.Total.Add(acc.get())
	res.Session, res.Usage, res.Files = sr.SessionID, sr.Total, sr.Files
	res.Millis = time.Since(t0).Milliseconds()
	switch {
	case err != nil:
		res.Status, res.Summary = StepFailed, err.Error()
	case out.HaltTool == ReportStepTool:
		var rep stepReport
		_ = json.Unmarshal([]byte(out.HaltResult), &rep)
		res.Status, res.Summary = rep.Status, rep.Summary
	case out.Stop == agents.StopMaxSteps:
		res.Status, res.Summary = StepFailed, fmt.Sprintf("stopped at the step limit (%d) before finishing", out.Steps)
	default:
		res.Status, res.Summary = StepDone, strings.TrimSpace(out.Text)
	}
	return stepDone{job: j, res: res, err: err}
}

// finish takes a worker's answer on the scheduler goroutine: commits and
// merges its worktree, queues a resolution on a conflict, saves the
// step's outcome.
func (r *planRun) finish(ctx context.Context, d stepDone) {
	j, res := d.job, d.res
	if ctx.Err() != nil {
		// Interrupted: the step runs again on --resume.
		if r.git != nil {
			r.git.drop(j.id)
		}
		if j.kind != events.StepKindResolve {
			res.Status = StepPending
			r.set(res)
		}
		return
	}
	if res.Status != StepDone {
		r.stop = true
		if r.git != nil {
			r.git.drop(j.id)
		}
		if j.kind == events.StepKindResolve {
			r.unresolvable(ctx, j, res, res.Summary)
			return
		}
		r.set(res)
		return
	}
	if r.git == nil {
		r.set(res)
		return
	}
	if j.kind == events.StepKindResolve {
		r.finishResolve(ctx, j, res)
		return
	}
	if err := r.git.commit(ctx, j.wt, j.id+": "+j.title); err != nil {
		r.stop = true
		res.Status, res.Summary = StepFailed, "commit the step's worktree: "+err.Error()
		r.set(res)
		return
	}
	ch, err := r.git.land(ctx, j.id, j.title, j.start)
	if _, conflict := isConflict(err); err == nil || conflict || ch.files != nil {
		res.Files, res.Diff = ch.files, ch.diff // git's account of the step
	}
	if err != nil {
		conflict, ok := isConflict(err)
		if !ok {
			r.stop = true
			br, kerr := r.git.keepStep(ctx, j.id)
			res.Status, res.Summary, res.Branch = StepFailed, err.Error(), br
			r.set(res)
			r.fatal = fmt.Errorf("plan step %s: %w (branch %s kept)", j.id, err, res.Branch)
			if kerr != nil {
				r.fatal = fmt.Errorf("plan step %s: %w (its branch %s could not be kept: %v)", j.id, err, br, kerr)
			}
			return
		}
		// The step stays running until a worker merges it.
		res.Status = StepRunning
		res.Summary = "merge conflict in " + strings.Join(conflict, ", ") + "; a worker resolves it"
		r.set(res)
		rid := j.id + "-resolve"
		r.queue = append(r.queue, &stepJob{id: rid, kind: events.StepKindResolve, title: "resolve the merge of " + j.id,
			of: j.id, conflict: conflict, step: j.step})
		r.notice(fmt.Sprintf("step %s conflicts with merged work (%s); starting %s", j.id, strings.Join(conflict, ", "), rid))
		return
	}
	r.git.drop(j.id)
	r.set(res)
}

// finishResolve lands a resolution: no conflict markers may remain.
func (r *planRun) finishResolve(ctx context.Context, j *stepJob, res StepResult) {
	if left := unresolved(j.wt, j.conflict); len(left) > 0 {
		r.unresolvable(ctx, j, res, "conflict markers remain in "+strings.Join(left, ", "))
		return
	}
	if err := r.git.commit(ctx, j.wt, "resolve "+j.of); err != nil {
		r.unresolvable(ctx, j, res, err.Error())
		return
	}
	if _, err := r.git.land(ctx, j.id, "resolve "+j.of, ""); err != nil {
		r.unresolvable(ctx, j, res, err.Error())
		return
	}
	r.git.drop(j.id)
	r.git.drop(j.of)
	r.publish(res)
	orig := *r.result(j.of)
	orig.Status = StepDone
	orig.Summary = strings.TrimSpace(orig.Summary + "\nMerged by " + j.id + ": " + res.Summary)
	orig.Usage.Add(res.Usage)
	r.set(orig)
}

// unresolvable stops the run with the conflicting branches kept; res is
// the resolution worker's outcome.
func (r *planRun) unresolvable(ctx context.Context, j *stepJob, res StepResult, why string) {
	res.Status, res.Summary = StepFailed, why
	r.publish(res)
	r.stop = true
	br, err := r.git.keepStep(context.WithoutCancel(ctx), j.of)
	if err != nil {
		why += "; its branch could not be kept: " + err.Error()
	}
	r.git.keepMerged()
	orig := *r.result(j.of)
	orig.Status, orig.Branch = StepFailed, br
	orig.Summary = "unresolved merge conflict (" + why + ")"
	r.set(orig)
	r.fatal = fmt.Errorf("plan step %s could not be merged: %s; branches kept: %s (merged work so far) and %s (the step); look at them with git; --resume runs the step again on the merged work (and removes them)",
		j.of, why, r.git.run+"/merged", br)
}

// replan asks the planner once to plan the remaining work again, with
// the failure as input; the new steps replace every step not done.
func (r *planRun) replan(ctx context.Context, bad []StepResult) error {
	r.prog.Replanned = true
	var b strings.Builder
	b.WriteString("An approved plan is being carried out by parallel workers, and a step did not succeed. ")
	b.WriteString("Plan the remaining work again and submit the whole plan: first the done steps, unchanged and with their ids, ")
	b.WriteString("then new steps for the work still to do (new steps may depend on done ones; give them ids not used before).\n\nThe plan (JSON):\n")
	b.Write(r.plan.JSON())
	b.WriteString("\nDone steps:\n")
	done := map[string]bool{}
	var kept []PlanStep
	for _, s := range r.plan.Steps {
		if r.status(s.ID) == StepDone {
			done[s.ID] = true
			kept = append(kept, s)
			fmt.Fprintf(&b, "- %s: %s\n", s.ID, text.Clip(text.OneLine(r.result(s.ID).Summary), 300))
		}
	}
	b.WriteString("\nWhat went wrong:\n")
	for _, s := range bad {
		fmt.Fprintf(&b, "- %s (%s): %s\n", s.Step, s.Status, s.Summary)
	}
	r.notice("a step did not succeed; asking the planner to re-plan the remaining steps")
	p, pres, err := r.c.planSession(ctx, b.String())
	r.total.Add(pres.Total)
	if err != nil {
		return fmt.Errorf("re-plan after %s: %w", bad[0].Step, err)
	}
	merged := Plan{Goal: r.plan.Goal, Risks: p.Risks, Validation: p.Validation}
	if merged.Validation == "" {
		merged.Validation = r.plan.Validation
	}
	// Done steps stay as they ran, whatever the planner wrote for them.
	merged.Steps = kept
	for _, s := range p.Steps {
		if !done[s.ID] {
			merged.Steps = append(merged.Steps, s)
		}
	}
	if err := merged.Validate(); err != nil {
		return fmt.Errorf("re-plan after %s: %w", bad[0].Step, err)
	}
	r.c.rt.Sink.Publish(events.Event{Type: events.PlanReady, Role: roles.Planner, Plan: &merged, Text: r.id})
	merged, err = r.c.approve(ctx, r.id, merged)
	if err != nil {
		return fmt.Errorf("re-plan: %w", err)
	}
	if r.id != "" && r.c.rt.StateDir != "" {
		if _, err := SavePlan(r.c.rt.Home, r.c.rt.StateDir, r.id, merged); err != nil {
			return err
		}
	}
	r.plan = merged
	var steps []StepResult
	for _, s := range r.prog.Steps {
		if done[s.Step] || (s.Kind != events.StepKindPlan && s.Kind != "") {
			steps = append(steps, s)
		}
	}
	r.prog.Steps = steps
	r.stop = false
	r.save()
	return nil
}

// validate runs the plan's validation command in the workspace as a bash
// call through the gate (the planner wrote it: it is model output).
func (r *planRun) validate(ctx context.Context) (bool, string, error) {
	cmd := r.validation()
	if cmd == "" {
		return true, "", nil
	}
	if strings.TrimSpace(r.plan.Validation) == "" && strings.TrimSpace(r.c.rt.Settings.Validation.Command) == "" {
		r.notice("the plan names no validation; running the detected " + cmd)
	}
	bash, ok := r.c.rt.Tools.Get("bash")
	if !ok {
		r.notice("validation skipped: the bash tool is disabled")
		return true, "", nil
	}
	args, _ := json.Marshal(map[string]string{"command": cmd})
	env := r.c.rt.Env.Fork()
	gate := r.c.rt.Gate
	if rg, ok := gate.(RoleGate); ok {
		if v, err := rg.RoleView(roles.Executor, false, "", nil, nil, nil); err == nil {
			gate = v
		}
	}
	res := StepResult{Step: "validate", Title: cmd, Kind: "validate", Status: StepRunning}
	r.c.rt.Sink.Publish(events.Event{Type: events.StepUpdate, Step: res.Step, StepResult: &res, Text: r.id})
	if gate != nil {
		v := gate.Authorize(ctx, tools.Invocation{Role: roles.Executor, Step: "validate", Tool: bash, Args: args, Env: env,
			Reason: "the plan's validation command"})
		if !v.Allow {
			res.Status, res.Summary = StepBlocked, v.Message
			r.c.rt.Sink.Publish(events.Event{Type: events.StepUpdate, Step: res.Step, StepResult: &res, Text: r.id})
			r.notice("validation not run: " + v.Message)
			return true, "", nil
		}
	}
	t0 := time.Now()
	out, err := bash.Execute(ctx, env, args)
	if err != nil {
		out = tools.Result{IsError: true, Content: err.Error()}
	}
	source := "plan"
	switch {
	case strings.TrimSpace(r.c.rt.Settings.Validation.Command) != "":
		source = "config"
	case strings.TrimSpace(r.plan.Validation) == "":
		source = "detected"
	}
	run := events.ValidationRun{Command: cmd, Source: source, Attempt: r.prog.Fixups + 1, Passed: !out.IsError,
		ExitCode: exitCodeOf(out.Content, out.IsError), Output: text.Clip(out.Content, 2000), Millis: time.Since(t0).Milliseconds()}
	r.c.rt.Sink.Publish(events.Event{Type: events.Validation, Role: roles.Executor, Step: "validate", Validation: &run})
	if ctx.Err() != nil {
		return false, "", fmt.Errorf("plan interrupted during validation: %w", ctx.Err())
	}
	res.Status, res.Summary = StepDone, text.Clip(out.Content, 2000)
	r.prog.Validation = "passed"
	if out.IsError {
		res.Status, r.prog.Validation = StepFailed, "failed"
	}
	r.save()
	r.c.rt.Sink.Publish(events.Event{Type: events.StepUpdate, Step: res.Step, StepResult: &res, Text: r.id})
	return !out.IsError, out.Content, nil
}

// validation is [validation] command, else the plan's validation
// command, else the one detected from the project's files.
func (r *planRun) validation() string {
	if v := strings.TrimSpace(r.c.rt.Settings.Validation.Command); v != "" {
		return v // [validation] command wins over the planner's
	}
	if v := strings.TrimSpace(r.plan.Validation); v != "" {
		return v
	}
	return DetectValidation(r.c.rt.Workspace)
}

// finalResult sums the run up for the caller.
func (r *planRun) finalResult(err error) Result {
	plan := r.plan
	res := Result{Role: roles.Executor, PlanID: r.id, Plan: &plan, Total: r.total, Usage: r.total, Stop: agents.StopDone}
	seen := map[string]bool{}
	var lines []string
	for _, s := range r.prog.Steps {
		res.StepResults = append(res.StepResults, s)
		for _, f := range s.Files {
			if !seen[f] {
				seen[f] = true
				res.Files = append(res.Files, f)
			}
		}
		lines = append(lines, fmt.Sprintf("- %s %s: %s", s.Step, s.Status, text.Clip(text.OneLine(s.Summary), 200)))
	}
	res.Steps = len(r.prog.Steps)
	if err != nil {
		res.Stop = "failed"
	}
	res.Text = "Plan " + text.OneLine(r.plan.Goal) + ":\n" + strings.Join(lines, "\n")
	if r.prog.Validation != "" {
		res.Text += "\nValidation " + r.prog.Validation + "."
	}
	return res
}

// openWorker opens a plan worker: an executor session with the
// executor's prompt and tools plus report_step, so every worker's prefix
// is byte-identical, working in the job's root.
func (c *Coordinator) openWorker(j *stepJob) (*worker, error) {
	r := c.executorRole()
	id := newSessionID(roles.Executor)
	var env *tools.Env
	var guard agents.ChangeGuard
	if j.root == "" || j.root == c.rt.Workspace {
		env = c.rt.Env.Fork()
	} else if c.rt.WorkspaceFor != nil {
		var err error
		if env, guard, err = c.rt.WorkspaceFor(j.root); err != nil {
			return nil, err
		}
	} else {
		env = c.rt.Env.Fork()
		env.Root, env.Guard = j.root, nil
	}
	if j.root != c.rt.Workspace {
		// An editor's buffers show the workspace, not this worktree.
		env.Editor = nil
	}
	fam := &family{}
	if j.root != c.rt.Workspace {
		// Its subagents work in the worktree too (runSubagent).
		fam.ws = &familyWorkspace{root: j.root, env: env, guard: guard}
	}
	reg := c.toolsFor(r, 0, id, r.Model, fam)
	reg.Add(reportStepTool{})
	spec := sessionSpec{id: id, role: roles.Executor, modelRef: r.Model, system: r.System, fam: fam, perms: r.Permissions,
		tools: reg, maxSteps: r.MaxSteps, planMode: r.PlanMode, env: env, step: j.id, guard: guard,
		title: "plan step " + j.id + ": " + text.OneLine(j.title)}
	if j.root != c.rt.Workspace {
		spec.root = j.root
	}
	return c.open(spec)
}

const workerRules = "When the step is done and its acceptance criterion holds, answer with a short summary of what you changed: that answer marks the step done. " +
	"If it cannot be done as described, or needs something only a person can give, call report_step with status failed or blocked and say exactly why.\n"

// stepBrief is a plan worker's first user turn: the plan, its step and
// what the steps it depends on did.
func (r *planRun) stepBrief(j *stepJob) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are one of several workers carrying out an approved plan in parallel. Do only your step, the assigned step %s ; other workers do the others.\n", j.id)
	r.whereabouts(&b, j)
	b.WriteString(workerRules)
	b.WriteString("\nThe plan (JSON):\n")
	b.Write(r.plan.JSON())
	sj, _ := json.Marshal(j.step)
	fmt.Fprintf(&b, "\nYour step (JSON):\n%s\n", sj)
	if len(j.step.DependsOn) > 0 {
		b.WriteString("\nResults of the steps it depends on:\n")
		for _, d := range j.step.DependsOn {
			s := r.result(d)
			fmt.Fprintf(&b, "- %s (%s): %s\n", d, s.Status, text.Clip(s.Summary, 1000))
			if len(s.Files) > 0 {
				fmt.Fprintf(&b, "  files: %s\n", strings.Join(s.Files, ", "))
			}
			if s.Diff != "" {
				fmt.Fprintf(&b, "  diff:\n%s\n", text.Clip(s.Diff, 4000))
			}
		}
	}
	return b.String()
}

func (r *planRun) whereabouts(b *strings.Builder, j *stepJob) {
	if j.root != r.c.rt.Workspace {
		fmt.Fprintf(b, "You work in your own copy of the project at %s (a git worktree); use paths relative to it. The coordinator commits and merges your changes; do not stage, commit, stash, merge or switch branches yourself (read-only git, such as status, diff and log, works; the sandbox may refuse git writes here).\n", j.root)
	}
}

// resolveBrief asks a worker to finish a merge git could not do.
func (r *planRun) resolveBrief(j *stepJob) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are one of several workers carrying out an approved plan in parallel: the assigned step %s . Step %s changed the same lines as work already merged, and git stopped with conflict markers.\n", j.id, j.of)
	r.whereabouts(&b, j)
	fmt.Fprintf(&b, "Resolve the conflicts in %s so that both sides' intent is kept: the merged work (between <<<<<<< and =======) and step %s (between ======= and >>>>>>>). Remove every marker. Do not commit.\n", strings.Join(j.conflict, ", "), j.of)
	b.WriteString(workerRules)
	sj, _ := json.Marshal(j.step)
	fmt.Fprintf(&b, "\nStep %s (JSON):\n%s\n", j.of, sj)
	if s := r.result(j.of); s.Diff != "" {
		fmt.Fprintf(&b, "\nIts diff:\n%s\n", text.Clip(s.Diff, 6000))
	}
	return b.String()
}

// fixupBrief asks a worker to repair what validation reported.
func (r *planRun) fixupBrief(j *stepJob) string {
	var b strings.Builder
	fmt.Fprintf(&b, "You are a worker finishing an approved plan: the assigned step %s . Every step is done, but the plan's validation command fails. Fix the cause, then run the command again to check.\n", j.id)
	r.whereabouts(&b, j)
	b.WriteString(workerRules)
	fmt.Fprintf(&b, "\nValidation command:\n%s\n\nIts output:\n%s\n\nThe plan (JSON):\n", r.validation(), text.Clip(j.output, 8000))
	b.Write(r.plan.JSON())
	return b.String()
}
