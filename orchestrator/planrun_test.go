package orchestrator

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reasonix/reasonix/agents"
	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/providers/scripted"
	"github.com/reasonix/reasonix/tools"
)

// stepTurns scripts a worker of step id that writes file (when set) and
// answers done, each response after delay ms.
func stepTurns(id, file string, delay int) []scripted.Turn {
	m := "assigned step " + id + " "
	var out []scripted.Turn
	if file != "" {
		out = append(out, scripted.Turn{Match: m, DelayMS: delay,
			ToolCalls: []scripted.Call{call("write_file", map[string]string{"path": file, "content": id + "\n"})}})
	}
	return append(out, scripted.Turn{Match: m, DelayMS: delay, Text: "did " + id, Usage: usage(10)})
}

func independentPlan(n int, files func(i int) []string) Plan {
	p := Plan{Goal: "independent steps"}
	for i := 1; i <= n; i++ {
		p.Steps = append(p.Steps, PlanStep{ID: fmt.Sprintf("s%d", i), Title: fmt.Sprintf("step %d", i), Files: files(i)})
	}
	return p
}

// stepOrder returns the order in which steps started and finished.
func stepLog(h *harness) []string {
	var out []string
	for _, e := range h.rec.Events() {
		if e.Type == events.StepUpdate && e.StepResult != nil {
			out = append(out, e.StepResult.Step+":"+e.StepResult.Status)
		}
	}
	return out
}

func TestPlanRunsIndependentStepsInParallel(t *testing.T) {
	var turns []scripted.Turn
	for i := 1; i <= 4; i++ {
		turns = append(turns, stepTurns(fmt.Sprintf("s%d", i), fmt.Sprintf("f%d.txt", i), 150)...)
	}
	h := newHarness(t, turns, func(rt *Runtime) { rt.Settings.MaxParallel = 4; rt.Settings.PlanIsolation = IsolationFiles })
	plan := independentPlan(4, func(i int) []string { return []string{fmt.Sprintf("f%d.txt", i)} })
	t0 := time.Now()
	res, err := h.coord.Execute(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	took := time.Since(t0)
	// Serial would be 4 steps x 2 requests x 150 ms = 1.2 s.
	if took > 900*time.Millisecond || h.peak.Load() < 3 {
		t.Errorf("took %v with at most %d requests in flight; want the steps to overlap", took, h.peak.Load())
	}
	for i := 1; i <= 4; i++ {
		if b, _ := os.ReadFile(filepath.Join(h.ws, fmt.Sprintf("f%d.txt", i))); string(b) != fmt.Sprintf("s%d\n", i) {
			t.Errorf("f%d.txt = %q", i, b)
		}
	}
	if len(res.StepResults) != 4 || len(res.Files) != 4 || res.Total.PromptTokens != 40 {
		t.Errorf("result %+v", res)
	}
	h.checkPrefixes()
}

func TestPlanFilesIsolationNeverOverlapsSharedFiles(t *testing.T) {
	turns := append(stepTurns("s1", "", 150), stepTurns("s2", "", 150)...)
	turns = append(turns, stepTurns("s3", "", 150)...)
	h := newHarness(t, turns, func(rt *Runtime) { rt.Settings.PlanIsolation = IsolationFiles })
	plan := independentPlan(3, func(i int) []string {
		if i == 3 {
			return []string{"other.txt"}
		}
		return []string{"pkg/shared.go"}
	})
	plan.Steps[1].Files = []string{"pkg"} // a directory covers its files
	if _, err := h.coord.Execute(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	log := strings.Join(stepLog(h), " ")
	// s2 starts only after s1 is done; s3 runs beside s1.
	if i, j := strings.Index(log, "s1:done"), strings.Index(log, "s2:running"); i < 0 || j < i {
		t.Errorf("s1 and s2 share files but overlapped: %s", log)
	}
	if i, j := strings.Index(log, "s3:running"), strings.Index(log, "s1:done"); i > j {
		t.Errorf("s3 waited for s1 though it shares nothing: %s", log)
	}
}

func TestPlanDependencyChainRunsInOrder(t *testing.T) {
	turns := append(stepTurns("s3", "", 0), stepTurns("s2", "", 0)...)
	turns = append(turns, stepTurns("s1", "", 0)...)
	h := newHarness(t, turns)
	plan := Plan{Goal: "chain", Steps: []PlanStep{
		{ID: "s1", Title: "one"}, {ID: "s2", Title: "two", DependsOn: []string{"s1"}}, {ID: "s3", Title: "three", DependsOn: []string{"s2"}},
	}}
	if _, err := h.coord.Execute(context.Background(), plan); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(stepLog(h), " ")
	if want := "s1:running s1:done s2:running s2:done s3:running s3:done"; got != want {
		t.Errorf("step order %q, want %q", got, want)
	}
}

func TestPlanFailedStepIsReplannedOnce(t *testing.T) {
	replan := Plan{Goal: "x", Steps: []PlanStep{{ID: "s1", Title: "one (the planner may not change it)"}, {ID: "s2b", Title: "another way", DependsOn: []string{"s1"}}}}
	turns := append(stepTurns("s1", "", 0),
		scripted.Turn{Match: "assigned step s2 ", ToolCalls: []scripted.Call{call(ReportStepTool, map[string]string{"status": "failed", "summary": "the API does not exist"})}},
		scripted.Turn{Match: "did not succeed", ToolCalls: []scripted.Call{{Name: SubmitPlanTool, Arguments: planArgs(replan)}}},
	)
	turns = append(turns, stepTurns("s2b", "", 0)...)
	h := newHarness(t, turns)
	plan := Plan{Goal: "x", Steps: []PlanStep{{ID: "s1", Title: "one"}, {ID: "s2", Title: "two", DependsOn: []string{"s1"}}}}
	id, err := SavePlan("", h.state, "", plan)
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.coord.ExecuteSaved(context.Background(), id, SavedRun{})
	if err != nil {
		t.Fatal(err)
	}
	planner := h.session("did not succeed")
	if !strings.Contains(planner.firstUser(), "s2 (failed): the API does not exist") || !strings.Contains(planner.firstUser(), "- s1: did s1") {
		t.Errorf("planner not told the failure: %s", planner.firstUser())
	}
	saved, _, _, _ := LoadPlan("", h.state, id, store.Refuse)
	if len(saved.Steps) != 2 || saved.Steps[0].Title != "one" || saved.Steps[1].ID != "s2b" {
		t.Errorf("re-plan not saved: %+v", saved.Steps)
	}
	if !strings.Contains(res.Text, "s2b done") || strings.Contains(res.Text, "s2 failed") {
		t.Errorf("result %s", res.Text)
	}
}

func TestPlanBlockedStepStopsTheRun(t *testing.T) {
	turns := []scripted.Turn{
		{Match: "assigned step s1 ", ToolCalls: []scripted.Call{call(ReportStepTool, map[string]string{"status": "blocked", "summary": "needs the production password"})}},
	}
	h := newHarness(t, turns, func(rt *Runtime) { rt.Settings.NoReplan = true })
	plan := Plan{Goal: "x", Steps: []PlanStep{{ID: "s1", Title: "one"}, {ID: "s2", Title: "two", DependsOn: []string{"s1"}}}}
	res, err := h.coord.Execute(context.Background(), plan)
	if err == nil || !strings.Contains(err.Error(), "step s1 blocked: needs the production password") {
		t.Fatalf("err %v", err)
	}
	if len(res.StepResults) != 1 || res.StepResults[0].Status != StepBlocked {
		t.Errorf("steps %+v", res.StepResults)
	}
}

// checkTool stands in for bash in validation: it fails until fixed.txt
// exists.
type checkTool struct{ runs int }

func (*checkTool) Name() string            { return "bash" }
func (*checkTool) Description() string     { return "run a command" }
func (*checkTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (*checkTool) ReadOnly() bool          { return false }
func (*checkTool) Access(json.RawMessage) (tools.Access, error) {
	return tools.Access{Kind: tools.KindExecute, Command: "check"}, nil
}
func (c *checkTool) Execute(_ context.Context, env *tools.Env, _ json.RawMessage) (tools.Result, error) {
	c.runs++
	if _, err := os.Stat(filepath.Join(env.Root, "fixed.txt")); err != nil {
		return tools.Result{Content: "FAIL: fixed.txt missing\nexit code: 1", IsError: true}, nil
	}
	return tools.Result{Content: "ok\nexit code: 0"}, nil
}

func TestPlanValidationFailureGetsAFixupStep(t *testing.T) {
	check := &checkTool{}
	turns := append(stepTurns("s1", "", 0), stepTurns("fixup-1", "fixed.txt", 0)...)
	h := newHarness(t, turns, func(rt *Runtime) { rt.Tools.Add(check) })
	plan := Plan{Goal: "x", Steps: []PlanStep{{ID: "s1", Title: "one"}}, Validation: "make check"}
	res, err := h.coord.Execute(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if check.runs != 2 {
		t.Errorf("validation ran %d times, want 2", check.runs)
	}
	fix := h.session("assigned step fixup-1 ")
	if !strings.Contains(fix.firstUser(), "FAIL: fixed.txt missing") || !strings.Contains(fix.firstUser(), "make check") {
		t.Errorf("fix-up brief lacks the failure: %s", fix.firstUser())
	}
	if !strings.Contains(res.Text, "fixup-1 done") || !strings.Contains(res.Text, "Validation passed") {
		t.Errorf("result %s", res.Text)
	}
	var runs []events.ValidationRun
	for _, e := range h.rec.Events() {
		if e.Type == events.Validation {
			runs = append(runs, *e.Validation)
		}
	}
	if len(runs) != 2 || runs[0].Passed || runs[0].ExitCode != 1 || runs[0].Source != "plan" || !runs[1].Passed || runs[1].Attempt != 2 {
		t.Errorf("validation events %+v", runs)
	}
}

func TestPlanValidationFixupsAreBounded(t *testing.T) {
	check := &checkTool{}
	turns := stepTurns("s1", "", 0)
	for i := 1; i <= MaxFixups; i++ {
		turns = append(turns, stepTurns(fmt.Sprintf("fixup-%d", i), "", 0)...)
	}
	h := newHarness(t, turns, func(rt *Runtime) { rt.Tools.Add(check) })
	plan := Plan{Goal: "x", Steps: []PlanStep{{ID: "s1", Title: "one"}}, Validation: "make check"}
	_, err := h.coord.Execute(context.Background(), plan)
	if err == nil || !strings.Contains(err.Error(), "still fails after 2 fix-up step(s)") {
		t.Fatalf("err %v", err)
	}
	if check.runs != MaxFixups+1 {
		t.Errorf("validation ran %d times", check.runs)
	}
}

// cancelOn cancels when a step reaches a status.
type cancelOn struct {
	inner        events.Sink
	step, status string
	cancel       context.CancelFunc
}

func (c cancelOn) Publish(e events.Event) {
	c.inner.Publish(e)
	if e.Type == events.StepUpdate && e.StepResult.Step == c.step && e.StepResult.Status == c.status {
		// Once the worker's request is on its way.
		time.AfterFunc(200*time.Millisecond, c.cancel)
	}
}

func TestPlanResumeRunsOnlyWhatIsNotDone(t *testing.T) {
	turns := append(stepTurns("s1", "one.txt", 0),
		// s2's first run is interrupted while it waits for the model.
		scripted.Turn{Match: "assigned step s2 ", DelayMS: 5000, Text: "never"})
	turns = append(turns, stepTurns("s2", "two.txt", 0)...)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h := newHarness(t, turns)
	h.coord.rt.Sink = cancelOn{inner: h.rec, step: "s2", status: StepRunning, cancel: cancel}
	plan := Plan{Goal: "x", Steps: []PlanStep{{ID: "s1", Title: "one"}, {ID: "s2", Title: "two", DependsOn: []string{"s1"}}}}
	id, _ := SavePlan("", h.state, "", plan)
	if _, err := h.coord.ExecuteSaved(ctx, id, SavedRun{}); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("err %v", err)
	}
	steps, _, _ := LoadProgress("", h.state, id, store.Refuse)
	if len(steps) != 2 || steps[0].Status != StepDone || steps[1].Status != StepPending {
		t.Fatalf("progress after interrupt %+v", steps)
	}
	h.coord.rt.Sink = h.rec
	if _, err := h.coord.ExecuteSaved(context.Background(), id, SavedRun{Resume: true}); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range h.used() {
		if strings.Contains(p.firstUser(), "assigned step s1 ") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("s1 ran %d times; resume must skip it", n)
	}
	if b, _ := os.ReadFile(filepath.Join(h.ws, "two.txt")); string(b) != "s2\n" {
		t.Errorf("two.txt = %q", b)
	}
	if _, err := h.coord.ExecuteSaved(context.Background(), "nope", SavedRun{Resume: true}); err == nil {
		t.Error("resumed a plan that does not exist")
	}
}

// gitRepo makes dir a repository with files committed.
func gitRepo(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed; worktree isolation needs it")
	}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "init"}} {
		if _, err := runGit(context.Background(), dir, nil, args...); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPlanWorktreesMergeBothEditsOfOneFile(t *testing.T) {
	turns := []scripted.Turn{
		{Match: "assigned step s1 ", ToolCalls: []scripted.Call{call("write_file", map[string]string{"path": "f.txt", "content": "A\nb\nc\n"})}},
		{Match: "assigned step s1 ", Text: "did s1", DelayMS: 100},
		{Match: "assigned step s2 ", ToolCalls: []scripted.Call{call("write_file", map[string]string{"path": "f.txt", "content": "a\nb\nC\n"})}},
		{Match: "assigned step s2 ", Text: "did s2", DelayMS: 100},
	}
	home := t.TempDir()
	var roots sync.Map
	h := newHarness(t, turns, func(rt *Runtime) {
		rt.Home = home
		rt.WorkspaceFor = func(root string) (*tools.Env, agents.ChangeGuard, error) {
			roots.Store(root, true)
			return tools.NewEnv(root), nil, nil
		}
	})
	gitRepo(t, h.ws, map[string]string{"f.txt": "a\nb\nc\n", ".gitignore": ".reasonix/\n"})
	plan := Plan{Goal: "x", Steps: []PlanStep{{ID: "s1", Title: "first line", Files: []string{"f.txt"}}, {ID: "s2", Title: "last line", Files: []string{"f.txt"}}}}
	res, err := h.coord.Execute(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(h.ws, "f.txt")); string(b) != "A\nb\nC\n" {
		t.Errorf("f.txt = %q; both edits must land", b)
	}
	n := 0
	roots.Range(func(k, _ any) bool {
		n++
		if !strings.HasPrefix(k.(string), filepath.Join(home, "worktrees")) {
			t.Errorf("worker root %s is not under the home", k)
		}
		return true
	})
	if n != 2 {
		t.Errorf("%d worker roots, want 2", n)
	}
	for _, s := range res.StepResults {
		if s.Status != StepDone || !strings.Contains(s.Diff, "f.txt") || len(s.Files) != 1 {
			t.Errorf("step %+v", s)
		}
	}
	// Worktrees and temporary branches are gone.
	if entries, _ := os.ReadDir(filepath.Join(home, "worktrees")); len(entries) != 0 {
		t.Errorf("worktrees left: %v", entries)
	}
	if out, _ := runGit(context.Background(), h.ws, nil, "branch", "--list", "reasonix/*"); strings.TrimSpace(out) != "" {
		t.Errorf("branches left: %s", out)
	}
	// The changes are in the working tree, not committed for the user.
	if out, _ := runGit(context.Background(), h.ws, nil, "log", "--oneline"); strings.Count(out, "\n") != 1 {
		t.Errorf("commits on the user's branch: %s", out)
	}
}

func TestPlanWorktreeConflictGetsAResolutionStep(t *testing.T) {
	turns := []scripted.Turn{
		{Match: "assigned step s1 ", ToolCalls: []scripted.Call{call("write_file", map[string]string{"path": "f.txt", "content": "a\nX\nc\n"})}},
		{Match: "assigned step s1 ", Text: "did s1"},
		{Match: "assigned step s2 ", ToolCalls: []scripted.Call{call("write_file", map[string]string{"path": "f.txt", "content": "a\nY\nc\n"})}},
		{Match: "assigned step s2 ", Text: "did s2"},
		{Match: "conflict markers", ToolCalls: []scripted.Call{call("write_file", map[string]string{"path": "f.txt", "content": "a\nXY\nc\n"})}},
		{Match: "conflict markers", Text: "kept both"},
	}
	h := newHarness(t, turns, func(rt *Runtime) { rt.Home = t.TempDir() })
	gitRepo(t, h.ws, map[string]string{"f.txt": "a\nb\nc\n", ".gitignore": ".reasonix/\n"})
	plan := Plan{Goal: "x", Steps: []PlanStep{{ID: "s1", Title: "one"}, {ID: "s2", Title: "two"}}}
	res, err := h.coord.Execute(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(h.ws, "f.txt")); string(b) != "a\nXY\nc\n" {
		t.Errorf("f.txt = %q", b)
	}
	var resolver *recProvider
	for _, p := range h.used() {
		if strings.Contains(p.firstUser(), "conflict markers") {
			resolver = p
		}
	}
	if resolver == nil || !strings.Contains(resolver.firstUser(), "-resolve ") {
		t.Fatal("no resolution worker")
	}
	for _, s := range res.StepResults {
		if s.Status != StepDone {
			t.Errorf("step %+v", s)
		}
	}
}

func TestPlanUnresolvedConflictKeepsBranches(t *testing.T) {
	turns := []scripted.Turn{
		{Match: "assigned step s1 ", ToolCalls: []scripted.Call{call("write_file", map[string]string{"path": "f.txt", "content": "a\nX\nc\n"})}},
		{Match: "assigned step s1 ", Text: "did s1"},
		{Match: "assigned step s2 ", ToolCalls: []scripted.Call{call("write_file", map[string]string{"path": "f.txt", "content": "a\nY\nc\n"})}},
		{Match: "assigned step s2 ", Text: "did s2"},
		{Match: "conflict markers", Text: "I looked but changed nothing"},
	}
	h := newHarness(t, turns, func(rt *Runtime) { rt.Home = t.TempDir(); rt.Settings.NoReplan = true })
	gitRepo(t, h.ws, map[string]string{"f.txt": "a\nb\nc\n", ".gitignore": ".reasonix/\n"})
	plan := Plan{Goal: "x", Steps: []PlanStep{{ID: "s1", Title: "one"}, {ID: "s2", Title: "two"}}}
	_, err := h.coord.Execute(context.Background(), plan)
	if err == nil || !strings.Contains(err.Error(), "branches kept") {
		t.Fatalf("err %v", err)
	}
	out, _ := runGit(context.Background(), h.ws, nil, "branch", "--list", "reasonix/*")
	for _, b := range strings.Fields(strings.ReplaceAll(out, "*", "")) {
		if !strings.Contains(err.Error(), b) {
			t.Errorf("kept branch %s not named in %v", b, err)
		}
	}
	if strings.Count(out, "reasonix/") != 2 {
		t.Errorf("kept branches: %q", out)
	}
}

// TestPlanWorktreesSeeUntrackedFiles: a worker's worktree starts from the
// workspace as the person sees it, new files not yet added to git
// included; its edit of such a file lands in the workspace, and the
// person's index and stash are left alone.
func TestPlanWorktreesSeeUntrackedFiles(t *testing.T) {
	turns := []scripted.Turn{
		{Match: "assigned step s1 ", ToolCalls: []scripted.Call{call("read_file", map[string]string{"path": "notes.txt"})}},
		{Match: "draft notes", ToolCalls: []scripted.Call{call("write_file", map[string]string{"path": "notes.txt", "content": "draft notes\nreviewed\n"})}},
		{Match: "assigned step s1 ", Text: "did s1"},
	}
	h := newHarness(t, turns, func(rt *Runtime) {
		rt.Home = t.TempDir()
		rt.WorkspaceFor = func(root string) (*tools.Env, agents.ChangeGuard, error) {
			return tools.NewEnv(root), nil, nil
		}
	})
	gitRepo(t, h.ws, map[string]string{"f.txt": "a\n", ".gitignore": ".reasonix/\n"})
	if err := os.WriteFile(filepath.Join(h.ws, "notes.txt"), []byte("draft notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	plan := Plan{Goal: "x", Steps: []PlanStep{{ID: "s1", Title: "review the notes", Files: []string{"notes.txt"}}}}
	res, err := h.coord.Execute(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.StepResults) != 1 || res.StepResults[0].Status != StepDone {
		t.Fatalf("steps: %+v", res.StepResults)
	}
	if b, _ := os.ReadFile(filepath.Join(h.ws, "notes.txt")); string(b) != "draft notes\nreviewed\n" {
		t.Errorf("notes.txt = %q; the worker's edit of the untracked file must land", b)
	}
	status, _ := runGit(context.Background(), h.ws, nil, "status", "--porcelain")
	if strings.TrimSpace(status) != "?? notes.txt" {
		t.Errorf("git status after the plan:\n%s\nwant notes.txt still untracked and nothing staged", status)
	}
	if out, _ := runGit(context.Background(), h.ws, nil, "stash", "list"); strings.TrimSpace(out) != "" {
		t.Errorf("stash list: %s", out)
	}
}

// TestPlanResumeRunsBlockedStepsAgain: a step that ended blocked runs
// again on --resume (the person dealt with its cause); done steps do not.
func TestPlanResumeRunsBlockedStepsAgain(t *testing.T) {
	turns := append(stepTurns("s1", "one.txt", 0),
		scripted.Turn{Match: "assigned step s2 ", ToolCalls: []scripted.Call{call(ReportStepTool, map[string]string{"status": "blocked", "summary": "needs the key"})}})
	turns = append(turns, stepTurns("s2", "two.txt", 0)...)
	h := newHarness(t, turns, func(rt *Runtime) { rt.Settings.NoReplan = true })
	plan := Plan{Goal: "x", Steps: []PlanStep{{ID: "s1", Title: "one"}, {ID: "s2", Title: "two", DependsOn: []string{"s1"}}}}
	id, _ := SavePlan("", h.state, "", plan)
	if _, err := h.coord.ExecuteSaved(context.Background(), id, SavedRun{}); err == nil || !strings.Contains(err.Error(), "s2 blocked") {
		t.Fatalf("err %v", err)
	}
	if _, err := h.coord.ExecuteSaved(context.Background(), id, SavedRun{Resume: true}); err != nil {
		t.Fatal(err)
	}
	steps, _, _ := LoadProgress("", h.state, id, store.Refuse)
	if len(steps) != 2 || steps[0].Status != StepDone || steps[1].Status != StepDone {
		t.Errorf("progress after resume %+v", steps)
	}
	n := 0
	for _, p := range h.used() {
		if strings.Contains(p.firstUser(), "assigned step s1 ") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("s1 ran %d times; resume must skip it", n)
	}
	if b, _ := os.ReadFile(filepath.Join(h.ws, "two.txt")); string(b) != "s2\n" {
		t.Errorf("two.txt = %q", b)
	}
}

// TestPlanWorktreeGitProcessesPerStep counts the git processes a plan
// step costs the coordinator with worktree isolation (create, commit,
// merge, apply, remove): a `git` first on PATH logs each one. Each
// process is several milliseconds of the step's overhead
// (TestPlanParallelEfficiency prints it), so the count must not creep
// back up; the guarantees hold at that count: the person's index and
// stash untouched, nothing committed on their branch, nothing left.
func TestPlanWorktreeGitProcessesPerStep(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the counting git is a shell script")
	}
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed; worktree isolation needs it")
	}
	bin := t.TempDir()
	log := filepath.Join(t.TempDir(), "git.log")
	shim := "#!/bin/sh\necho \"$*\" >> '" + log + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(shim), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	count := func(n int) int {
		plan, turns := planSteps(n, 0)
		for i := 1; i < n; i++ { // a chain: each step starts where the last one landed
			plan.Steps[i].DependsOn = []string{plan.Steps[i-1].ID}
		}
		home := t.TempDir()
		h := newHarness(t, turns, func(rt *Runtime) {
			rt.Settings.PlanIsolation = IsolationWorktree
			rt.Home = home
			rt.WorkspaceFor = func(root string) (*tools.Env, agents.ChangeGuard, error) {
				return tools.NewEnv(root), nil, nil
			}
		})
		gitRepo(t, h.ws, map[string]string{"f.txt": "a\n", ".gitignore": ".reasonix/\n"})
		// A staged change and a stash of the person's, which the run
		// must leave as they are.
		if err := os.WriteFile(filepath.Join(h.ws, "f.txt"), []byte("stashed\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := runGit(context.Background(), h.ws, nil, "stash", "-q"); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(h.ws, "f.txt"), []byte("staged\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := runGit(context.Background(), h.ws, nil, "add", "f.txt"); err != nil {
			t.Fatal(err)
		}
		_ = os.Remove(log)
		res, err := h.coord.Execute(context.Background(), plan)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(log)
		for _, s := range res.StepResults {
			if s.Status != StepDone || len(s.Files) != 1 || s.Files[0] != s.Step+".txt" || !strings.Contains(s.Diff, "+"+s.Step) {
				t.Errorf("step %+v", s)
			}
			if got, _ := os.ReadFile(filepath.Join(h.ws, s.Step+".txt")); string(got) != s.Step {
				t.Errorf("%s.txt = %q, want the step's content in the workspace", s.Step, got)
			}
		}
		status, _ := runGit(context.Background(), h.ws, nil, "status", "--porcelain")
		if !strings.Contains(status, "M  f.txt") {
			t.Errorf("the person's staged change is gone:\n%s", status)
		}
		if out, _ := runGit(context.Background(), h.ws, nil, "stash", "list"); strings.Count(out, "\n") != 1 {
			t.Errorf("stash list: %q", out)
		}
		if out, _ := runGit(context.Background(), h.ws, nil, "log", "--oneline"); strings.Count(out, "\n") != 1 {
			t.Errorf("commits on the person's branch: %s", out)
		}
		if out, _ := runGit(context.Background(), h.ws, nil, "branch", "--list", "reasonix/*"); strings.TrimSpace(out) != "" {
			t.Errorf("branches left: %s", out)
		}
		if out, _ := runGit(context.Background(), h.ws, nil, "worktree", "list"); strings.Count(out, "\n") != 1 {
			t.Errorf("worktrees left:\n%s", out)
		}
		if entries, _ := os.ReadDir(filepath.Join(home, "worktrees")); len(entries) != 0 {
			t.Errorf("worktree folders left: %v", entries)
		}
		t.Logf("%d steps: %d git processes:\n%s", n, bytes.Count(b, []byte("\n")), b)
		return bytes.Count(b, []byte("\n"))
	}
	one, four := count(1), count(4)
	if per := (four - one) / 3; per > 6 {
		t.Errorf("%d git processes per step (%d for one step, %d for four), want at most 6", per, one, four)
	}
	if one > 16 {
		t.Errorf("a one-step plan ran %d git processes, want at most 16", one)
	}
}

// runGit runs git in dir with the whole environment, for tests that
// look at a repository.
func runGit(ctx context.Context, dir string, stdin []byte, args ...string) (string, error) {
	return (&gitTree{bin: "git", environ: os.Environ()}).git(ctx, dir, stdin, args...)
}
