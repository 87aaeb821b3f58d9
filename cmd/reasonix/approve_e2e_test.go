package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/orchestrator"
	"github.com/reasonix/reasonix/providers/scripted"
)

const greetSource = "const greeting = \"hello\"\n"

// planApprovalE2E is a repository whose planner proposes farewellPlan and
// whose executor, if it ever runs, edits greet.go.
func planApprovalE2E(t *testing.T) *e2e {
	t.Helper()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("submit_plan", farewellPlan)}},
		scripted.Turn{ToolCalls: []scripted.Call{call("edit_file", map[string]any{"path": "greet.go", "old_string": "hello", "new_string": "hello, farewell"})}},
		scripted.Turn{Text: "Executed."},
		scripted.Turn{Text: "Checked."}, // s2, which depends on s1
	)
	e.write("greet.go", greetSource)
	e.env = append(e.env, planApprovalEnv+"=prompt")
	return e
}

// editorScript writes an EDITOR that runs body with the plan file as $1.
func editorScript(t *testing.T, body string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the editor runs through sh")
	}
	p := filepath.Join(t.TempDir(), "editor.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func savedPlan(t *testing.T, e *e2e) string {
	t.Helper()
	plans, _ := filepath.Glob(filepath.Join(e.repo, ".reasonix", "plans", "*.json"))
	if len(plans) != 1 {
		t.Fatalf("saved plans = %v", plans)
	}
	b, err := os.ReadFile(plans[0])
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestE2EPlanApprovalReject(t *testing.T) {
	e := planApprovalE2E(t)
	r := e.run("r\n", "plan", "--execute", "add a farewell")
	if r.code != 0 {
		t.Fatalf("reject: exit %d, want 0\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"# Plan: add a farewell constant", "Add farewell to greet.go", planQuestion, "plan rejected; nothing was changed"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
		}
	}
	if strings.Contains(r.stdout, planQuestion) {
		t.Error("the question went to stdout")
	}
	if n := strings.Count(r.stderr, "# Plan: "); n != 1 {
		t.Errorf("plan shown %d times, want once:\n%s", n, r.stderr)
	}
	if got := e.read("greet.go"); got != greetSource {
		t.Errorf("a rejected plan changed greet.go: %q", got)
	}
	if n := len(e.srv.Requests()); n != 1 {
		t.Errorf("requests = %d, want only the planner's", n)
	}

	// With JSON on stdout no renderer shows the plan, so the approver
	// does, on stderr; stdout stays one JSON object.
	e = planApprovalE2E(t)
	r = e.run("r\n", "plan", "--execute", "--output-format", "json", "add a farewell")
	if r.code != 0 || strings.Count(r.stderr, "# Plan: ") != 1 || !strings.Contains(r.stderr, planQuestion) {
		t.Errorf("json: exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if !json.Valid([]byte(r.stdout)) {
		t.Errorf("json: stdout is not one JSON value: %s", r.stdout)
	}
}

func TestE2EPlanApprovalApprove(t *testing.T) {
	e := planApprovalE2E(t)
	r := e.run("a\n", "plan", "--execute", "add a farewell")
	if r.code != 0 {
		t.Fatalf("approve: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, planQuestion) {
		t.Errorf("not asked:\n%s", r.stderr)
	}
	if got := e.read("greet.go"); !strings.Contains(got, "hello, farewell") {
		t.Errorf("approved plan not executed: %q", got)
	}
	if n := len(e.srv.Requests()); n != 4 {
		t.Errorf("requests = %d, want the planner's, s1's 2 and s2's", n)
	}
}

func TestE2EPlanApprovalEdit(t *testing.T) {
	e := planApprovalE2E(t)
	ed := editorScript(t, `sed 's/Add farewell to greet.go/Add a WARM farewell to greet.go/' "$1" > "$1.new" && mv "$1.new" "$1"`)
	e.env = append(e.env, "EDITOR="+ed)
	r := e.run("e\n", "plan", "--execute", "add a farewell")
	if r.code != 0 {
		t.Fatalf("edit: exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) < 2 {
		t.Fatalf("executor never ran: %d requests\n%s", len(reqs), r.stderr)
	}
	first := string(messagesOf(t, reqs[1]))
	if !strings.Contains(first, "Add a WARM farewell to greet.go") {
		t.Errorf("executor's first request lacks the edited title: %s", first)
	}
	if strings.Contains(first, "Add farewell to greet.go") {
		t.Errorf("executor's first request still has the old title")
	}
	if !strings.Contains(savedPlan(t, e), "Add a WARM farewell") {
		t.Error("the edited plan was not saved over the proposed one")
	}
	if !strings.Contains(e.read("greet.go"), "hello, farewell") {
		t.Error("edited plan not executed")
	}
}

func TestE2EPlanApprovalInvalidEditAsksAgain(t *testing.T) {
	e := planApprovalE2E(t)
	// VISUAL wins over EDITOR; the edit breaks the plan.
	e.env = append(e.env, "VISUAL="+editorScript(t, `printf '{"goal": "", "steps": []}' > "$1"`), "EDITOR=false")
	r := e.run("e\nwhat\na\n", "plan", "--execute", "add a farewell")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "edited plan: invalid plan: goal is empty") {
		t.Errorf("validation error not shown:\n%s", r.stderr)
	}
	if strings.Count(r.stderr, planQuestion) != 3 || !strings.Contains(r.stderr, "Please answer a, e or r.") {
		t.Errorf("not asked again after the bad edit and the bad answer:\n%s", r.stderr)
	}
	// "a" approved the proposed plan, untouched by the failed edit.
	first := string(messagesOf(t, e.srv.Requests()[1]))
	if !strings.Contains(first, "Add farewell to greet.go") {
		t.Errorf("executor did not get the proposed plan: %s", first)
	}
}

func TestE2EPlanApprovalNeedsATerminal(t *testing.T) {
	// Without the override a piped stdin is not a person: the plan runs
	// without a question, and the "r" on stdin is never read.
	e := planApprovalE2E(t)
	e.env = withoutEnv(e.env, planApprovalEnv)
	r := e.run("r\n", "plan", "--execute", "add a farewell")
	if r.code != 0 || strings.Contains(r.stderr, planQuestion) {
		t.Fatalf("exit %d, asked %v\n%s", r.code, strings.Contains(r.stderr, planQuestion), r.stderr)
	}
	if !strings.Contains(e.read("greet.go"), "hello, farewell") {
		t.Error("auto-approved plan not executed")
	}

	e = planApprovalE2E(t)
	e.env = append(withoutEnv(e.env, planApprovalEnv), planApprovalEnv+"=sometimes")
	if r := e.run("", "plan", "--execute", "x"); r.code != 2 || !strings.Contains(r.stderr, planApprovalEnv) {
		t.Errorf("bad %s: exit %d %s", planApprovalEnv, r.code, r.stderr)
	}
}

func TestE2EPlanApprovalStdinClosed(t *testing.T) {
	e := planApprovalE2E(t)
	r := e.run("", "plan", "--execute", "add a farewell")
	if r.code != 1 || !strings.Contains(r.stderr, "stdin closed") {
		t.Fatalf("exit %d, want 1 with a message\n%s", r.code, r.stderr)
	}
	if got := e.read("greet.go"); got != greetSource {
		t.Errorf("greet.go changed: %q", got)
	}
	if n := len(e.srv.Requests()); n != 1 {
		t.Errorf("requests = %d, want only the planner's", n)
	}
}

func TestPlanApproverInProcess(t *testing.T) {
	p, err := orchestrator.ParsePlan([]byte(`{"goal":"g","steps":[{"id":"s1","title":"t","files":["a.go","b/"]},{"id":"s2","title":"u","files":["a.go"]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(planFiles(p), ","); got != "a.go,b/" {
		t.Errorf("planFiles = %q", got)
	}
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == planApprovalEnv {
				return v
			}
			return ""
		}
	}
	// A reader that is not a terminal means automatic approval.
	if ap, err := newPlanApprover(strings.NewReader("a\n"), &bytes.Buffer{}, env(""), false); ap != nil || err != nil {
		t.Errorf("non-terminal: %v %v", ap, err)
	}
	if ap, err := newPlanApprover(strings.NewReader("a\n"), &bytes.Buffer{}, env("auto"), false); ap != nil || err != nil {
		t.Errorf("auto: %v %v", ap, err)
	}
	var out bytes.Buffer
	ap, err := newPlanApprover(strings.NewReader("  Yes \n"), &out, env("prompt"), false)
	if err != nil || ap == nil {
		t.Fatalf("prompt: %v %v", ap, err)
	}
	if _, d, err := ap.Approve(context.Background(), p); err != nil || d != orchestrator.PlanApprove {
		t.Errorf("yes: %v %v", d, err)
	}
	if !strings.Contains(out.String(), "# Plan: g") {
		t.Errorf("plan not shown when no renderer shows it: %q", out.String())
	}
	out.Reset()
	ap, _ = newPlanApprover(strings.NewReader("x\nno"), &out, env("prompt"), true)
	if _, d, err := ap.Approve(context.Background(), p); err != nil || d != orchestrator.PlanReject {
		t.Errorf("no without a newline: %v %v", d, err)
	}
	if strings.Contains(out.String(), "# Plan:") || strings.Count(out.String(), planQuestion) != 2 {
		t.Errorf("renderer-shown plan: %q", out.String())
	}
	// A canceled context ends the wait for an answer.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	pr, pw, _ := os.Pipe()
	defer pr.Close()
	defer pw.Close()
	ap, _ = newPlanApprover(pr, &out, env("prompt"), false)
	if _, _, err := ap.Approve(ctx, p); err != context.Canceled {
		t.Errorf("canceled: %v", err)
	}
}
