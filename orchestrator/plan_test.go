package orchestrator

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/providers/scripted"
)

var helloPlan = Plan{
	Goal: "Create hello.txt",
	Steps: []PlanStep{
		{ID: "s1", Title: "Write hello.txt", Detail: "Write the greeting.", Files: []string{"hello.txt"}, Acceptance: "hello.txt says hello"},
		{ID: "s2", Title: "Check it", DependsOn: []string{"s1"}},
	},
	Risks:      []string{"none"},
	Validation: "cat hello.txt",
}

func TestPlanValidate(t *testing.T) {
	if err := helloPlan.Validate(); err != nil {
		t.Fatalf("valid plan rejected: %v", err)
	}
	cases := map[string]struct {
		p    Plan
		want []string
	}{
		"empty":       {Plan{}, []string{"goal is empty", "steps is empty"}},
		"dup id":      {Plan{Goal: "g", Steps: []PlanStep{{ID: "a", Title: "x"}, {ID: "a", Title: "y"}}}, []string{"ids must be unique"}},
		"forward":     {Plan{Goal: "g", Steps: []PlanStep{{ID: "a", Title: "x", DependsOn: []string{"b"}}, {ID: "b", Title: "y"}}}, []string{`depends_on "b"`}},
		"no title":    {Plan{Goal: "g", Steps: []PlanStep{{ID: "a"}}}, []string{"title is empty"}},
		"no id":       {Plan{Goal: "g", Steps: []PlanStep{{Title: "t"}}}, []string{"id is empty"}},
		"self depend": {Plan{Goal: "g", Steps: []PlanStep{{ID: "a", Title: "x", DependsOn: []string{"a"}}}}, []string{`depends_on "a"`}},
	}
	for name, c := range cases {
		err := c.p.Validate()
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q lacks %q", name, err, w)
			}
		}
	}
}

func TestPlanMarkdownAndJSON(t *testing.T) {
	md := helloPlan.Markdown()
	for _, want := range []string{"# Plan: Create hello.txt", "1. **Write hello.txt** `s1`", "   Write the greeting.", "Files: `hello.txt`",
		"2. **Check it** `s2`", "Depends on: `s1`", "## Risks\n\n- none", "```sh\ncat hello.txt\n```"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	back, err := ParsePlan(helloPlan.JSON())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Steps[1].DependsOn, []string{"s1"}) || back.Goal != helloPlan.Goal {
		t.Errorf("round trip lost data: %+v", back)
	}
	if _, err := ParsePlan([]byte(`{"goal":"g","steps":[{"id":"a","title":"t"}],"extra":1}`)); err == nil {
		t.Error("unknown field accepted")
	}
}

func TestSaveLoadPlan(t *testing.T) {
	dir := t.TempDir()
	id, err := SavePlan("", dir, "", helloPlan)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(id, "plan-") {
		t.Errorf("id %q", id)
	}
	for _, ref := range []string{id, id[:len(id)-3], filepath.Join(PlansDir(dir), id+".json")} {
		p, got, _, err := LoadPlan("", dir, ref, store.Refuse)
		if err != nil {
			t.Fatalf("load %q: %v", ref, err)
		}
		if got != id || p.Goal != helloPlan.Goal {
			t.Errorf("load %q: id %q goal %q", ref, got, p.Goal)
		}
	}
	if _, err := SavePlan("", dir, "plan-x1", helloPlan); err != nil {
		t.Fatal(err)
	}
	if _, err := SavePlan("", dir, "plan-x2", helloPlan); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := LoadPlan("", dir, "plan-x", store.Refuse); err == nil || !strings.Contains(err.Error(), "matches 2") {
		t.Errorf("ambiguous prefix: %v", err)
	}
	if _, _, _, err := LoadPlan("", dir, "nope", store.Refuse); err == nil {
		t.Error("missing plan loaded")
	}
	if _, err := SavePlan("", dir, "", Plan{}); err == nil {
		t.Error("invalid plan saved")
	}
}

func planArgs(p Plan) string { return string(p.JSON()) }

// TestPlanThenExecute plans with a different model (so Run plans first),
// executes with a real file change, and checks the planner's isolation.
func TestPlanThenExecute(t *testing.T) {
	bad := helloPlan
	bad.Steps = []PlanStep{{ID: "s1", Title: "x", DependsOn: []string{"s9"}}}
	turns := []scripted.Turn{
		{Match: "Plan this task", ToolCalls: []scripted.Call{call("read_file", map[string]string{"path": "README"})}, Usage: usage(10)},
		// An invalid plan comes back as an error the planner can fix.
		{Match: "Plan this task", ToolCalls: []scripted.Call{{Name: SubmitPlanTool, Arguments: planArgs(bad)}}, Usage: usage(10)},
		{Match: "Plan this task", ToolCalls: []scripted.Call{{Name: SubmitPlanTool, Arguments: planArgs(helloPlan)}}, Usage: usage(10)},
		{Match: "assigned step s1 ", ToolCalls: []scripted.Call{call("write_file", map[string]string{"path": "hello.txt", "content": "hello\n"})}, Usage: usage(100)},
		{Match: "assigned step s1 ", Text: "Wrote hello.txt.", Usage: usage(100)},
		{Match: "assigned step s2 ", Text: "Checked it.", Usage: usage(100)},
	}
	h := newHarness(t, turns, func(rt *Runtime) { rt.Settings.PlannerModel = "planner-model" })
	if err := os.WriteFile(filepath.Join(h.ws, "README"), []byte("project"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := h.coord.Run(context.Background(), "add a greeting file")
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(h.ws, "hello.txt")); err != nil || string(b) != "hello\n" {
		t.Fatalf("hello.txt = %q, %v", b, err)
	}
	if !strings.Contains(res.Text, "s1 done: Wrote hello.txt.") || !strings.Contains(res.Text, "s2 done: Checked it.") ||
		res.PlanID == "" || res.Plan == nil || res.Plan.Goal != helloPlan.Goal || len(res.StepResults) != 2 {
		t.Errorf("result: %+v", res)
	}
	if !slices.Equal(res.Files, []string{"hello.txt"}) {
		t.Errorf("files %v", res.Files)
	}
	if res.Total.PromptTokens != 330 || res.Usage.PromptTokens != 300 {
		t.Errorf("usage %+v total %+v", res.Usage, res.Total)
	}
	if _, _, _, err := LoadPlan("", h.state, res.PlanID, store.Refuse); err != nil {
		t.Errorf("saved plan: %v", err)
	}

	planner, exec, exec2 := h.session("Plan this task"), h.session("assigned step s1 "), h.session("assigned step s2 ")
	if planner == exec || exec == exec2 {
		t.Fatal("planner and workers share a session")
	}
	pt := planner.toolNames()
	if slices.Contains(pt, "write_file") || !slices.Contains(pt, SubmitPlanTool) || !slices.Contains(pt, "read_file") {
		t.Errorf("planner tools %v", pt)
	}
	if pr := planner.requests(); pr[0].Model != "planner-model" || exec.requests()[0].Model != "exec-model" {
		t.Errorf("models: planner %q executor %q", pr[0].Model, exec.requests()[0].Model)
	}
	if et := exec.toolNames(); slices.Contains(et, SubmitPlanTool) || !slices.Contains(et, "write_file") || !slices.Contains(et, TaskTool) || !slices.Contains(et, ReportStepTool) {
		t.Errorf("worker tools %v", et)
	}
	if !strings.Contains(planner.lastToolResults()[1], `depends_on \"s9\"`) && !strings.Contains(planner.lastToolResults()[1], `depends_on "s9"`) {
		t.Errorf("invalid plan error not returned: %q", planner.lastToolResults()[1])
	}
	// Both workers share one prefix: same system prompt, same tools.
	a, b := exec.requests()[0], exec2.requests()[0]
	if a.Messages[0].Content != b.Messages[0].Content || !bytes.Equal(a.EncodedTools, b.EncodedTools) {
		t.Error("workers' prefixes differ")
	}
	if !strings.Contains(exec.firstUser(), `"id": "s2"`) {
		t.Errorf("plan not in the first user turn: %s", exec.firstUser())
	}
	// s2 is told what s1 did.
	if !strings.Contains(exec2.firstUser(), "s1 (done): Wrote hello.txt.") || !strings.Contains(exec2.firstUser(), "files: hello.txt") {
		t.Errorf("dependency results not in s2's brief: %s", exec2.firstUser())
	}
	pr := h.events(events.PlanReady)
	if len(pr) != 1 || pr[0].Text != res.PlanID {
		t.Fatalf("plan events %+v", pr)
	}
	if pr[0].Plan == nil || pr[0].Plan.Validate() != nil {
		t.Errorf("PlanReady carries no valid plan: %+v", pr[0].Plan)
	}
	h.checkPrefixes()
}

type fakeApprover struct {
	decision PlanDecision
	edit     func(Plan) Plan
	asked    int
}

func (a *fakeApprover) Approve(_ context.Context, p Plan) (Plan, PlanDecision, error) {
	a.asked++
	if a.edit != nil {
		p = a.edit(p)
	}
	return p, a.decision, nil
}

func TestPlanApproval(t *testing.T) {
	submit := scripted.Turn{Match: "Plan this task", ToolCalls: []scripted.Call{{Name: SubmitPlanTool, Arguments: planArgs(helloPlan)}}}

	t.Run("reject", func(t *testing.T) {
		ap := &fakeApprover{decision: PlanReject}
		called := false
		h := newHarness(t, []scripted.Turn{submit}, func(rt *Runtime) {
			rt.PlanApprover = ap
			rt.OnPlanApproved = func(Plan) { called = true }
		})
		_, err := h.coord.PlanThenExecute(context.Background(), "x")
		if !errors.Is(err, events.ErrPlanRejected) || called || ap.asked != 1 {
			t.Fatalf("err %v called %v asked %d", err, called, ap.asked)
		}
		if len(h.used()) != 1 {
			t.Errorf("an executor ran after rejection")
		}
	})

	t.Run("edit", func(t *testing.T) {
		ap := &fakeApprover{decision: PlanEdit, edit: func(p Plan) Plan {
			p.Steps = append(p.Steps, PlanStep{ID: "s3", Title: "Added by the user"})
			return p
		}}
		var approved []Plan
		h := newHarness(t, []scripted.Turn{submit, {Match: "assigned step s3 ", Text: "ok"}}, func(rt *Runtime) {
			rt.PlanApprover = ap
			rt.OnPlanApproved = func(p Plan) { approved = append(approved, p) }
		})
		res, err := h.coord.PlanThenExecute(context.Background(), "x")
		if err != nil {
			t.Fatal(err)
		}
		if len(approved) != 1 || len(approved[0].Steps) != 3 || !strings.Contains(res.Text, "s3 done: ok") {
			t.Fatalf("approved %+v res %+v", approved, res)
		}
		saved, _, _, err := LoadPlan("", h.state, res.PlanID, store.Refuse)
		if err != nil || len(saved.Steps) != 3 {
			t.Errorf("edited plan not saved: %+v %v", saved, err)
		}
	})
}

func TestPlannerReminder(t *testing.T) {
	t.Run("submits after reminder", func(t *testing.T) {
		h := newHarness(t, []scripted.Turn{
			{Text: "Here is my plan in prose."},
			{Match: "Call submit_plan now", ToolCalls: []scripted.Call{{Name: SubmitPlanTool, Arguments: planArgs(helloPlan)}}},
		})
		p, id, _, err := h.coord.Plan(context.Background(), "x")
		if err != nil || p.Goal != helloPlan.Goal || id == "" {
			t.Fatalf("plan %+v id %q err %v", p, id, err)
		}
		h.checkPrefixes()
	})
	t.Run("gives up", func(t *testing.T) {
		h := newHarness(t, []scripted.Turn{{Text: "prose"}, {Text: "still prose"}})
		_, _, _, err := h.coord.Plan(context.Background(), "x")
		if !errors.Is(err, ErrNoPlan) {
			t.Fatalf("err %v", err)
		}
		if h.script.Queue().Remaining() != 0 {
			t.Errorf("reminder not sent")
		}
	})
}

func TestExecuteSavedPlan(t *testing.T) {
	h := newHarness(t, []scripted.Turn{
		{Match: "assigned step s1 ", ToolCalls: []scripted.Call{call("write_file", map[string]string{"path": "hello.txt", "content": "later\n"})}},
		{Match: "assigned step s1 ", Text: "done"},
		{Match: "assigned step s2 ", Text: "checked"},
	})
	id, err := SavePlan("", h.state, "", helloPlan)
	if err != nil {
		t.Fatal(err)
	}
	// A new coordinator, as after a restart.
	res, err := h.coord.ExecuteSaved(context.Background(), id[:len(id)-4], SavedRun{})
	if err != nil {
		t.Fatal(err)
	}
	if res.PlanID != id {
		t.Errorf("plan id %q", res.PlanID)
	}
	if b, _ := os.ReadFile(filepath.Join(h.ws, "hello.txt")); string(b) != "later\n" {
		t.Errorf("hello.txt = %q", b)
	}
	steps, _, err := LoadProgress("", h.state, id, store.Refuse)
	if err != nil || len(steps) != 2 || steps[0].Status != StepDone || steps[1].Status != StepDone || steps[0].Session == "" {
		t.Errorf("saved progress %+v %v", steps, err)
	}
	// Every event of a worker carries its step.
	for _, e := range h.rec.Events() {
		if e.Type == events.ToolStart && e.Step != "s1" {
			t.Errorf("tool event without its step: %+v", e)
		}
	}
	h.checkPrefixes()
}

func TestAutoPlanSameModel(t *testing.T) {
	h := newHarness(t, []scripted.Turn{{Text: "direct"}}, func(rt *Runtime) { rt.Settings.PlannerModel = "exec-model" })
	res, err := h.coord.Run(context.Background(), "x")
	if err != nil || res.Text != "direct" || res.PlanID != "" {
		t.Fatalf("res %+v err %v", res, err)
	}
}
