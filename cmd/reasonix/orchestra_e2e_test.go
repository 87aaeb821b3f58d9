package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/providers/scripted"
)

var farewellPlan = map[string]any{
	"goal": "add a farewell constant",
	"steps": []map[string]any{
		{"id": "s1", "title": "Add farewell to greet.go", "detail": "append a const", "files": []string{"greet.go"}, "acceptance": "const exists"},
		{"id": "s2", "title": "Check it", "depends_on": []string{"s1"}},
	},
	"risks":      []string{"none"},
	"validation": "grep farewell greet.go",
}

// toolNames lists the tool names offered in a request body.
func toolNames(t *testing.T, body []byte) []string {
	t.Helper()
	var req struct {
		Tools []struct {
			Function struct{ Name string } `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, tl := range req.Tools {
		out = append(out, tl.Function.Name)
	}
	return out
}

func systemOf(t *testing.T, body []byte) string {
	t.Helper()
	var req struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	if len(req.Messages) == 0 || req.Messages[0].Role != "system" {
		return ""
	}
	return req.Messages[0].Content
}

// bySession groups recorded requests by their system prompt and first user
// turn, which identify a session, and checks each group's prefix.
func assertEverySessionPrefixStable(t *testing.T, reqs [][]byte) int {
	t.Helper()
	groups := map[string][][]byte{}
	var order []string
	for _, r := range reqs {
		var req struct {
			Messages []json.RawMessage `json:"messages"`
		}
		json.Unmarshal(r, &req)
		key := ""
		for i := 0; i < len(req.Messages) && i < 2; i++ {
			key += string(req.Messages[i])
		}
		if _, ok := groups[key]; !ok {
			order = append(order, key)
		}
		groups[key] = append(groups[key], r)
	}
	for _, k := range order {
		assertPrefixStable(t, groups[k])
	}
	return len(groups)
}

func TestE2EPlanThenExecuteSaved(t *testing.T) {
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": "greet.go"})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("submit_plan", farewellPlan)}},
	)
	e.write("greet.go", "package main\n\nconst greeting = \"hello\"\n")
	r := e.run("", "plan", "add a farewell")
	if r.code != 0 {
		t.Fatalf("plan: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stdout, "Add farewell to greet.go") || !strings.Contains(r.stdout, "grep farewell greet.go") {
		t.Errorf("plan not printed as Markdown:\n%s", r.stdout)
	}
	plans, _ := filepath.Glob(filepath.Join(e.repo, ".reasonix", "plans", "*.json"))
	if len(plans) != 1 {
		t.Fatalf("saved plans = %v", plans)
	}
	id := strings.TrimSuffix(filepath.Base(plans[0]), ".json")
	if !strings.Contains(r.stderr, id) {
		t.Errorf("plan id not reported: %s", r.stderr)
	}
	for _, req := range e.srv.Requests() {
		for _, n := range toolNames(t, req) {
			switch n {
			case "write_file", "edit_file", "multi_edit", "patch", "move_file", "bash", "task":
				t.Errorf("planner was offered writer %s", n)
			}
		}
	}
	assertPrefixStable(t, e.srv.Requests())
	if e.read("greet.go") != "package main\n\nconst greeting = \"hello\"\n" {
		t.Fatal("planning changed a file")
	}

	// Execute the saved plan later, in a new process.
	e.srv = nil
	e2 := newE2E(t,
		scripted.Turn{Match: "assigned step s1 ", ToolCalls: []scripted.Call{call("edit_file", map[string]any{"path": "greet.go", "old_string": "\"hello\"\n", "new_string": "\"hello\"\n\nconst farewell = \"bye\"\n"})}},
		scripted.Turn{Match: "assigned step s1 ", Text: "Farewell added."},
		scripted.Turn{Match: "assigned step s2 ", Text: "Checked."},
	)
	e.srv = e2.srv
	e.env = append(e.env, "REASONIX_BASE_URL="+e2.srv.URL())
	r = e.run("", "run", "--plan", id)
	if r.code != 0 {
		t.Fatalf("run --plan: exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(e.read("greet.go"), `const farewell = "bye"`) {
		t.Errorf("plan not executed: %s", e.read("greet.go"))
	}
	reqs := e2.srv.Requests()
	first := string(messagesOf(t, reqs[0]))
	if !strings.Contains(first, "Add farewell to greet.go") || !strings.Contains(first, "assigned step s1 ") {
		t.Errorf("the worker's first turn lacks the plan or its step: %s", first)
	}
	// s2 runs after s1 and is told what s1 did.
	last := string(messagesOf(t, reqs[len(reqs)-1]))
	if !strings.Contains(last, "assigned step s2 ") || !strings.Contains(last, "s1 (done): Farewell added.") {
		t.Errorf("s2's brief lacks s1's result: %s", last)
	}
	if n := assertEverySessionPrefixStable(t, reqs); n != 2 {
		t.Errorf("sessions = %d, want one worker per step", n)
	}
}

func TestE2EPlanExecuteOneRunAndAutoPlan(t *testing.T) {
	turns := []scripted.Turn{
		{ToolCalls: []scripted.Call{call("submit_plan", farewellPlan)}},
		{ToolCalls: []scripted.Call{call("edit_file", map[string]any{"path": "greet.go", "old_string": "hello", "new_string": "hello, farewell"})}},
		{Text: "Executed."},
		{Text: "Checked."}, // s2, which depends on s1
	}
	e := newE2E(t, turns...)
	e.write("greet.go", "const greeting = \"hello\"\n")
	r := e.run("", "plan", "--execute", "add a farewell")
	if r.code != 0 || !strings.Contains(e.read("greet.go"), "hello, farewell") {
		t.Fatalf("plan --execute: exit %d %s; file %q", r.code, r.stderr, e.read("greet.go"))
	}
	if n := assertEverySessionPrefixStable(t, e.srv.Requests()); n != 3 {
		t.Errorf("sessions = %d, want the planner and a worker per step", n)
	}

	// A different planner_model makes every run plan first.
	e2 := newE2E(t, turns...)
	e2.write("greet.go", "const greeting = \"hello\"\n")
	e2.writeUserConfig(fmt.Sprintf(`default_model = "local/exec-model"
[agent]
planner_model = "local/plan-model"
[[providers]]
name = "local"
base_url = %q
models = ["exec-model", "plan-model"]
`, e2.srv.URL()))
	e2.env = withoutEnv(e2.env, "REASONIX_MODEL", "REASONIX_BASE_URL")
	r = e2.run("", "run", "add a farewell")
	if r.code != 0 || !strings.Contains(e2.read("greet.go"), "hello, farewell") {
		t.Fatalf("auto plan: exit %d %s", r.code, r.stderr)
	}
	reqs := e2.srv.Requests()
	var m0, m1 struct{ Model string }
	json.Unmarshal(reqs[0], &m0)
	json.Unmarshal(reqs[1], &m1)
	if m0.Model != "plan-model" || m1.Model != "exec-model" {
		t.Errorf("models = %q then %q, want plan-model then exec-model", m0.Model, m1.Model)
	}
}

func TestE2ESixParallelTasks(t *testing.T) {
	var calls []scripted.Call
	turns := []scripted.Turn{{}}
	for i := 1; i <= 6; i++ {
		calls = append(calls, call("task", map[string]any{"agent": "explore", "description": fmt.Sprintf("part %d", i), "prompt": fmt.Sprintf("look at AREA-%d", i)}))
		turns = append(turns, scripted.Turn{Match: fmt.Sprintf("look at AREA-%d", i), DelayMS: 300, Text: fmt.Sprintf("finding %d", i)})
	}
	turns[0].ToolCalls = calls
	turns = append(turns, scripted.Turn{Text: "All six areas reviewed."})
	e := newE2E(t, turns...)
	e.write("reasonix.toml", "[agent]\nmax_parallel = 6\n")
	r := e.run("", "run", "review everything")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	// Server-side clock: from the parent's request that asked for the six
	// tasks to the parent's next request, all six 300 ms children ran.
	// Run one after another that is 1.8 s; concurrently, about 300 ms.
	rec := e.srv.Received()
	if len(rec) != 8 {
		t.Fatalf("requests = %d, want 8", len(rec))
	}
	// The bound is loose on purpose (a loaded machine stretches every
	// request); speed itself is a make bench figure. One after another
	// could not finish under 1.8 s.
	if took := rec[7].At.Sub(rec[0].At); took > 1200*time.Millisecond {
		t.Errorf("six 300ms tasks took %v; want well under 1.8 s (they did not run at once)", took)
	}
	// Every child asked before the first could have finished.
	if spread := rec[6].At.Sub(rec[1].At); spread > 250*time.Millisecond {
		t.Errorf("children started %v apart; they did not run concurrently", spread)
	}
	reqs := e.srv.Requests()
	last := string(messagesOf(t, reqs[len(reqs)-1]))
	for i := 1; i <= 6; i++ {
		if !strings.Contains(last, fmt.Sprintf("finding %d", i)) {
			t.Errorf("result of task %d missing from parent's next request", i)
		}
	}
	if n := assertEverySessionPrefixStable(t, reqs); n != 7 {
		t.Errorf("sessions = %d, want 7", n)
	}
	// Children's transcripts are linked to the parent.
	files, _ := filepath.Glob(filepath.Join(e.repo, ".reasonix", "sessions", "*.jsonl"))
	linked := 0
	for _, f := range files {
		b, _ := os.ReadFile(f)
		if strings.Contains(strings.SplitN(string(b), "\n", 2)[0], `"parent":"`) {
			linked++
		}
	}
	if linked != 6 {
		t.Errorf("linked child transcripts = %d of %d files", linked, len(files))
	}
	if strings.Count(r.stderr, "[explore ") < 6 {
		t.Errorf("workers' progress not shown:\n%s", r.stderr)
	}
}

func TestE2EDeniedTaskAndSubagentSkill(t *testing.T) {
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("task", map[string]any{"agent": "general", "description": "x", "prompt": "do it"})}},
		scripted.Turn{Text: "could not delegate"},
	)
	e.write("reasonix.toml", "[permissions]\ndeny = [\"Task(general)\"]\n")
	r := e.run("", "run", "delegate")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 || !strings.Contains(string(messagesOf(t, reqs[1])), "Task(general)") {
		t.Errorf("denial not reported to the model (%d requests): %s", len(reqs), messagesOf(t, reqs[len(reqs)-1]))
	}

	s := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": "notes.md"})}},
		scripted.Turn{Text: "Summary: one note."},
	)
	s.write("notes.md", "remember the milk\n")
	s.write(".reasonix/skills/summarize/SKILL.md", "---\nname: summarize\ndescription: Summarize files.\nallowed-tools: Read Grep\nrunAs: subagent\n---\nSUMMARIZE-BODY: read the named files and summarize them in one line.\n")
	r = s.run("", "run", "/summarize notes.md")
	if r.code != 0 || !strings.Contains(r.stdout, "Summary: one note.") {
		t.Fatalf("skill: exit %d stdout %q stderr %q", r.code, r.stdout, r.stderr)
	}
	reqs = s.srv.Requests()
	if sys := systemOf(t, reqs[0]); !strings.Contains(sys, "SUMMARIZE-BODY") {
		t.Errorf("skill body is not the subagent's instructions: %q", sys)
	}
	if !strings.Contains(string(messagesOf(t, reqs[0])), "notes.md") {
		t.Errorf("skill args not passed")
	}
	names := strings.Join(toolNames(t, reqs[0]), ",")
	if strings.Contains(names, "bash") || strings.Contains(names, "write_file") || !strings.Contains(names, "read_file") {
		t.Errorf("allowed-tools not applied: %s", names)
	}
	assertPrefixStable(t, reqs)
}

func goalStatus(status, summary string) scripted.Turn {
	return scripted.Turn{ToolCalls: []scripted.Call{call("goal_status", map[string]any{"status": status, "summary": summary, "evidence": "checked"})}}
}

func TestE2EGoalStops(t *testing.T) {
	// Done on the second turn.
	e := newE2E(t, goalStatus("continue", "half way"), goalStatus("done", "tests pass"))
	r := e.run("", "run", "--goal", "make the tests pass")
	if r.code != 0 || !strings.Contains(r.stderr, "goal done after 2 turn") {
		t.Fatalf("done: exit %d %s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	if !strings.Contains(string(messagesOf(t, reqs[1])), "make the tests pass") {
		t.Errorf("goal not carried in the continuation turn")
	}
	if strings.Contains(systemOf(t, reqs[1]), "make the tests pass") {
		t.Errorf("goal leaked into the system prompt")
	}
	assertPrefixStable(t, reqs)
	if g := savedGoal(t, e); g == nil || g.Status != "done" || g.Turns != 2 {
		t.Errorf("goal state not saved in its session: %+v", g)
	}

	// Three identical blocked reports (after normalising) stop it.
	b := newE2E(t, goalStatus("blocked", "Need the API key."), goalStatus("blocked", "need the  API key"), goalStatus("blocked", "NEED THE API KEY!"), goalStatus("done", "never"))
	r = b.run("", "run", "--goal", "deploy")
	if r.code != 1 || !strings.Contains(r.stderr, "goal blocked after 3 turn") {
		t.Fatalf("blocked: exit %d %s", r.code, r.stderr)
	}
	if n := len(b.srv.Requests()); n != 3 {
		t.Errorf("blocked goal made %d requests, want 3", n)
	}

	// The turn cap stops it.
	c := newE2E(t, goalStatus("continue", "a"), goalStatus("continue", "b"), goalStatus("continue", "c"))
	c.write("reasonix.toml", "[agent]\ngoal_max_turns = 2\n")
	r = c.run("", "run", "--goal", "forever", "--output-format", "json")
	if r.code != 1 {
		t.Fatalf("cap: exit %d %s", r.code, r.stderr)
	}
	var out struct {
		Goal struct {
			Status string `json:"status"`
			Turns  int    `json:"turns"`
		} `json:"goal"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil || out.Goal.Turns != 2 {
		t.Errorf("cap: %v %s", err, r.stdout)
	}
	if n := len(c.srv.Requests()); n != 2 {
		t.Errorf("capped goal made %d requests, want 2", n)
	}
}

func withoutEnv(env []string, names ...string) []string {
	var out []string
outer:
	for _, kv := range env {
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				continue outer
			}
		}
		out = append(out, kv)
	}
	return out
}

func TestE2EAgentFilePermissionOverride(t *testing.T) {
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("task", map[string]any{"agent": "scribe", "description": "write notes", "prompt": "SCRIBE-JOB write the notes"})}},
		scripted.Turn{Match: "SCRIBE-JOB", ToolCalls: []scripted.Call{
			call("write_file", map[string]any{"path": "secret/keys.txt", "content": "x"}),
			call("write_file", map[string]any{"path": "notes.txt", "content": "notes"}),
		}},
		scripted.Turn{Match: "SCRIBE-JOB", Text: "wrote what I could"},
		scripted.Turn{Text: "done"},
	)
	e.write(".reasonix/agents/scribe.md", "---\nname: scribe\ndescription: Writes notes.\ndeny: [\"Edit(secret/**)\"]\n---\nYou write notes.\n")
	r := e.run("", "run", "delegate the notes")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.repo, "secret", "keys.txt")); err == nil {
		t.Errorf("the agent's deny rule did not stop the write")
	}
	if e.read("notes.txt") != "notes" {
		t.Errorf("allowed write did not happen")
	}
	found := false
	for _, req := range e.srv.Requests() {
		if strings.Contains(string(req), "SCRIBE-JOB") && strings.Contains(string(req), "Edit(secret/**)") {
			found = true
		}
	}
	if !found {
		t.Errorf("the refusal naming the rule never reached the agent")
	}
}
