package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/internal/llmtest"
	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/providers/scripted"
)

// savePlan writes a plan where `reasonix run --plan ID` finds it.
func (e *e2e) savePlan(id string, plan map[string]any) {
	e.t.Helper()
	b, _ := json.MarshalIndent(plan, "", "  ")
	e.write(filepath.Join(".reasonix", "plans", id+".json"), string(b))
}

// git runs git in the test repository.
func (e *e2e) git(args ...string) string {
	e.t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
	cmd.Dir = e.repo
	out, err := cmd.CombinedOutput()
	if err != nil {
		e.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// gitInit makes the test repository a git repository with everything in
// it committed.
func (e *e2e) gitInit() {
	e.t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		e.t.Skip("git is not installed; worktree isolation needs it")
	}
	e.write(".gitignore", ".reasonix/\n")
	e.git("init", "-q")
	e.git("add", "-A")
	e.git("commit", "-q", "-m", "init")
}

// stepWorker scripts the worker of plan step id: optional tool calls,
// then a final answer.
func stepWorker(id string, calls ...scripted.Call) []scripted.Turn {
	m := "assigned step " + id + " "
	var out []scripted.Turn
	for _, c := range calls {
		out = append(out, scripted.Turn{Match: m, ToolCalls: []scripted.Call{c}})
	}
	return append(out, scripted.Turn{Match: m, Text: "did " + id, Usage: &providers.Usage{PromptTokens: 100, CompletionTokens: 5}})
}

// firstUserOf returns a request's first user message.
func firstUserOf(t *testing.T, body []byte) string {
	var req struct {
		Messages []struct{ Role, Content string } `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	for _, m := range req.Messages {
		if m.Role == "user" {
			return m.Content
		}
	}
	return ""
}

// prefixBeforeUser is a request's bytes before its first user message:
// the model, the system prompt and the tool schemas.
func prefixBeforeUser(t *testing.T, body []byte) []byte {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	var msgs []json.RawMessage
	json.Unmarshal(m["messages"], &msgs)
	return bytes.Join([][]byte{m["model"], msgs[0], m["tools"]}, []byte("\n"))
}

func sixSteps() map[string]any {
	var steps []map[string]any
	for i := 1; i <= 6; i++ {
		steps = append(steps, map[string]any{"id": fmt.Sprintf("s%d", i), "title": fmt.Sprintf("write file %d", i),
			"files": []string{fmt.Sprintf("f%d.txt", i)}})
	}
	return map[string]any{"goal": "six independent files", "steps": steps}
}

// TestE2EPlanParallelWorkers runs six independent steps against a server
// that answers every request after 300 ms, with max_parallel 1 and 4.
func TestE2EPlanParallelWorkers(t *testing.T) {
	t.Parallel()
	const delay = 300 * time.Millisecond
	run := func(parallel int) (time.Duration, *llmtest.Server) {
		var turns []scripted.Turn
		for i := 1; i <= 6; i++ {
			id := fmt.Sprintf("s%d", i)
			turns = append(turns, stepWorker(id, call("write_file", map[string]any{"path": fmt.Sprintf("f%d.txt", i), "content": id + "\n"}))...)
		}
		e := newE2E(t, turns...)
		e.srv.SetDelay(delay)
		e.write("reasonix.toml", fmt.Sprintf("[agent]\nmax_parallel = %d\n", parallel))
		e.savePlan("plan-six", sixSteps())
		r := e.run("", "run", "--yolo", "--plan", "plan-six")
		if r.code != 0 {
			t.Fatalf("max_parallel %d: exit %d\n%s", parallel, r.code, r.stderr)
		}
		for i := 1; i <= 6; i++ {
			if got := e.read(fmt.Sprintf("f%d.txt", i)); got != fmt.Sprintf("s%d\n", i) {
				t.Errorf("f%d.txt = %q", i, got)
			}
		}
		if !strings.Contains(r.stdout, "s6 done: did s6") {
			t.Errorf("summary not printed:\n%s", r.stdout)
		}
		// The plan's span on the server: first request in to last answer out.
		recv := e.srv.Received()
		return recv[len(recv)-1].At.Sub(recv[0].At) + delay, e.srv
	}
	// The 40% target is the issue's; the serial run it is measured
	// against ran on this machine just before. A machine busy with other
	// work can stall one parallel run, so it gets three tries: a run
	// that is not parallel never gets under the bound, however often
	// it is tried.
	serial, _ := run(1)
	var (
		best time.Duration
		srv  *llmtest.Server
	)
	for try := 1; try <= 3; try++ {
		parallel, s := run(4)
		t.Logf("six steps: max_parallel 1 %v, max_parallel 4 %v (%.0f%%, try %d)", serial, parallel, 100*float64(parallel)/float64(serial), try)
		if srv == nil || parallel < best {
			best, srv = parallel, s
		}
		if float64(best) < 0.4*float64(serial) {
			break
		}
	}
	if float64(best) >= 0.4*float64(serial) {
		t.Errorf("max_parallel 4 took %v at best of 3, not under 40%% of max_parallel 1's %v", best, serial)
	}
	// Requests from distinct sessions overlapped, and every session's
	// prefix up to its first user message is the same bytes.
	recv := srv.Received()
	overlap := false
	for i := range recv {
		for j := i + 1; j < len(recv); j++ {
			if recv[j].At.Sub(recv[i].At) < delay/2 && firstUserOf(t, recv[i].Body) != firstUserOf(t, recv[j].Body) {
				overlap = true
			}
		}
	}
	if !overlap {
		t.Error("no two sessions' requests overlapped")
	}
	sessions := map[string]bool{}
	want := prefixBeforeUser(t, recv[0].Body)
	for _, r := range recv {
		sessions[firstUserOf(t, r.Body)] = true
		if got := prefixBeforeUser(t, r.Body); !bytes.Equal(got, want) {
			t.Errorf("a worker's prefix differs:\n%.300s\nvs\n%.300s", got, want)
		}
	}
	if len(sessions) != 6 {
		t.Errorf("%d distinct worker sessions, want 6", len(sessions))
	}
	assertEverySessionPrefixStable(t, srv.Requests())
}

// TestE2EPlanGitMergeChainAndShow: in a git repository, two steps edit
// the same file in their worktrees and both edits land; a third step
// that depends on both starts after them and sees their results; plan
// show prints the DAG with statuses and workers.
func TestE2EPlanGitMergeChainAndShow(t *testing.T) {
	t.Parallel()
	turns := append(stepWorker("s1", call("edit_file", map[string]any{"path": "list.txt", "old_string": "one\n", "new_string": "ONE\n"})),
		stepWorker("s2", call("edit_file", map[string]any{"path": "list.txt", "old_string": "three\n", "new_string": "THREE\n"}))...)
	turns = append(turns, stepWorker("s3", call("read_file", map[string]any{"path": "list.txt"}))...)
	e := newE2E(t, turns...)
	e.write("list.txt", "one\ntwo\nthree\n")
	pricedConfig(e, "")
	e.gitInit()
	e.savePlan("plan-git", map[string]any{"goal": "capitalise", "steps": []map[string]any{
		{"id": "s1", "title": "first line", "files": []string{"list.txt"}},
		{"id": "s2", "title": "last line", "files": []string{"list.txt"}},
		{"id": "s3", "title": "check", "depends_on": []string{"s1", "s2"}},
	}})
	r := e.run("", "run", "--yolo", "--plan", "plan-git")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if got := e.read("list.txt"); got != "ONE\ntwo\nTHREE\n" {
		t.Errorf("list.txt = %q; both edits must land", got)
	}
	recv := e.srv.Received()
	var lastDep, firstS3 time.Time
	for _, q := range recv {
		u := firstUserOf(t, q.Body)
		switch {
		case strings.Contains(u, "assigned step s3 "):
			if firstS3.IsZero() {
				firstS3 = q.At
			}
			if !strings.Contains(u, "s1 (done): did s1") || !strings.Contains(u, "s2 (done): did s2") || !strings.Contains(u, "+ONE") {
				t.Errorf("s3's brief lacks its dependencies' results:\n%s", u)
			}
			if !strings.Contains(u, filepath.Join(e.home, "worktrees")) {
				t.Errorf("s3 not told its worktree:\n%.400s", u)
			}
		default:
			lastDep = q.At
		}
	}
	if firstS3.Before(lastDep) {
		t.Error("s3 started before the steps it depends on finished")
	}
	// Nothing left behind: no worktrees, no temporary branches, no commits.
	if out := e.git("branch", "--list", "reasonix/*"); strings.TrimSpace(out) != "" {
		t.Errorf("temporary branches left: %s", out)
	}
	if out := e.git("worktree", "list"); strings.Count(out, "\n") != 1 {
		t.Errorf("worktrees left:\n%s", out)
	}
	if out := e.git("log", "--oneline"); strings.Count(out, "\n") != 1 {
		t.Errorf("commits made on the user's branch:\n%s", out)
	}
	show := e.run("", "plan", "show", "plan-git")
	if show.code != 0 {
		t.Fatalf("plan show: exit %d\n%s", show.code, show.stderr)
	}
	for _, want := range []string{"plan plan-git: capitalise", "s1  done", "s3  done     check  ← s1, s2", "worker e-", "tokens", "cost 0.000"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("plan show lacks %q:\n%s", want, show.stdout)
		}
	}
	t.Logf("plan show:\n%s", show.stdout)
}

// TestE2EPlanConflictGetsResolutionStep: two steps change the same line;
// the second to finish conflicts, and a resolution worker that sees the
// conflict markers merges both.
func TestE2EPlanConflictGetsResolutionStep(t *testing.T) {
	t.Parallel()
	turns := append(stepWorker("s1", call("edit_file", map[string]any{"path": "v.txt", "old_string": "version = 1", "new_string": "version = 2"})),
		stepWorker("s2", call("edit_file", map[string]any{"path": "v.txt", "old_string": "version = 1", "new_string": "version = 3"}))...)
	turns = append(turns,
		scripted.Turn{Match: "conflict markers", ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": "v.txt"})}},
		scripted.Turn{Match: "conflict markers", ToolCalls: []scripted.Call{call("write_file", map[string]any{"path": "v.txt", "content": "version = 3 # both bumped\n"})}},
		scripted.Turn{Match: "conflict markers", Text: "kept the higher version"},
	)
	e := newE2E(t, turns...)
	e.write("v.txt", "version = 1\n")
	e.gitInit()
	e.savePlan("plan-c", map[string]any{"goal": "bump", "steps": []map[string]any{
		{"id": "s1", "title": "bump to 2"}, {"id": "s2", "title": "bump to 3"}}})
	r := e.run("", "run", "--yolo", "--plan", "plan-c")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if got := e.read("v.txt"); got != "version = 3 # both bumped\n" {
		t.Errorf("v.txt = %q", got)
	}
	var saw bool
	for _, q := range e.srv.Requests() {
		if u := firstUserOf(t, q); strings.Contains(u, "conflict markers") {
			saw = true
		}
	}
	// The resolution step is reported like any step: running, then done.
	resolved := strings.Contains(r.stderr, "[step s1-resolve] done: kept the higher version") ||
		strings.Contains(r.stderr, "[step s2-resolve] done: kept the higher version")
	if !saw || !resolved {
		t.Errorf("no resolution step:\n%s", r.stderr)
	}
	// The resolver read the file with both sides in it.
	found := false
	for _, q := range e.srv.Requests() {
		found = found || bytes.Contains(q, []byte("<<<<<<<"))
	}
	if !found {
		t.Error("the resolution worker never saw the conflict markers")
	}
}

// TestE2EPlanValidationFixup: the plan's validation fails after the last
// step, and a fix-up worker repairs it.
func TestE2EPlanValidationFixup(t *testing.T) {
	t.Parallel()
	turns := append(stepWorker("s1", call("write_file", map[string]any{"path": "out.txt", "content": "draft\n"})),
		stepWorker("fixup-1", call("edit_file", map[string]any{"path": "out.txt", "old_string": "draft", "new_string": "final"}))...)
	e := newE2E(t, turns...)
	e.savePlan("plan-v", map[string]any{"goal": "write out", "validation": "grep -q final out.txt",
		"steps": []map[string]any{{"id": "s1", "title": "write it"}}})
	r := e.run("", "run", "--yolo", "--plan", "plan-v")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if e.read("out.txt") != "final\n" {
		t.Errorf("out.txt = %q", e.read("out.txt"))
	}
	var brief string
	for _, q := range e.srv.Requests() {
		if u := firstUserOf(t, q); strings.Contains(u, "assigned step fixup-1 ") {
			brief = u
		}
	}
	if !strings.Contains(brief, "grep -q final out.txt") || !strings.Contains(brief, "exit code: 1") {
		t.Errorf("fix-up brief lacks the failing validation:\n%s", brief)
	}
	if !strings.Contains(r.stdout, "Validation passed") || !strings.Contains(r.stderr, "[step validate] failed") {
		t.Errorf("validation not reported:\n%s\n%s", r.stdout, r.stderr)
	}
}

// TestE2EPlanKillAndResume kills a plan run while its second step waits
// for the model; --resume runs only that step.
func TestE2EPlanKillAndResume(t *testing.T) {
	t.Parallel()
	e := newE2E(t, append(stepWorker("s1", call("write_file", map[string]any{"path": "a.txt", "content": "a\n"})),
		scripted.Turn{Match: "assigned step s2 ", DelayMS: 60000, Text: "never"})...)
	e.savePlan("plan-k", map[string]any{"goal": "two files", "steps": []map[string]any{
		{"id": "s1", "title": "a"}, {"id": "s2", "title": "b", "depends_on": []string{"s1"}}}})
	cmd := exec.Command(binPath, "run", "--yolo", "--plan", "plan-k")
	cmd.Dir, cmd.Env = e.repo, e.env
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	progress := filepath.Join(e.repo, ".reasonix", "plans", "runs", "plan-k.json")
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, _ := os.ReadFile(progress)
		if bytes.Contains(b, []byte(`"status": "running"`)) && bytes.Contains(b, []byte(`"step": "s2"`)) {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("s2 never started:\n%s", errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// A crash, not a clean exit: nothing gets to tidy up.
	cmd.Process.Kill()
	cmd.Wait()

	e2 := newE2E(t, stepWorker("s2", call("write_file", map[string]any{"path": "b.txt", "content": "b\n"}))...)
	e.env = append(e.env, "REASONIX_BASE_URL="+e2.srv.URL())
	r := e.run("", "run", "--yolo", "--plan", "plan-k", "--resume")
	if r.code != 0 {
		t.Fatalf("resume: exit %d\n%s", r.code, r.stderr)
	}
	if e.read("a.txt") != "a\n" || e.read("b.txt") != "b\n" {
		t.Errorf("files a=%q b=%q", e.read("a.txt"), e.read("b.txt"))
	}
	for _, q := range e2.srv.Requests() {
		if u := firstUserOf(t, q); !strings.Contains(u, "assigned step s2 ") {
			t.Errorf("resume ran more than the remaining step: %.200s", u)
		}
	}
	if len(e2.srv.Requests()) != 2 {
		t.Errorf("resume sent %d requests, want s2's 2", len(e2.srv.Requests()))
	}
	if r := e.run("", "run", "--plan", "plan-nope", "--resume"); r.code == 0 {
		t.Error("resuming an unknown plan succeeded")
	}
}

// TestE2EPlanWorktreeGitIsReadOnly: under the bash sandbox a worker in
// its worktree can read the repository with git, but cannot write the
// repository's .git (where a hook would run on the person's next
// commit), which lies outside the worktree it is confined to; its brief
// says committing is the coordinator's.
func TestE2EPlanWorktreeGitIsReadOnly(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("Landlock is Linux-only")
	}
	if enforced, _, detail := permission.SandboxStatus(permission.SandboxOptions{Workspace: t.TempDir()}); !enforced {
		t.Skipf("Landlock not enforced here: %s", detail)
	}
	e := newE2E(t, stepWorker("s1",
		call("write_file", map[string]any{"path": "a.txt", "content": "a\n"}),
		call("bash", map[string]any{"command": `git status --short; echo status=$?; cd "$(git rev-parse --git-common-dir)/hooks" && touch post-checkout; echo hook=$?; cd -; git add -A; echo add=$?`}))...)
	e.write("list.txt", "one\n")
	e.gitInit()
	e.savePlan("plan-ro", map[string]any{"goal": "g", "steps": []map[string]any{{"id": "s1", "title": "add a"}}})
	r := e.run("", "run", "--yolo", "--plan", "plan-ro")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	if !strings.Contains(firstUserOf(t, reqs[0]), "do not stage, commit, stash") {
		t.Errorf("the brief does not say committing is the coordinator's:\n%.600s", firstUserOf(t, reqs[0]))
	}
	msgs := wireMessages(t, reqs[len(reqs)-1])
	out := msgs[len(msgs)-1].Content
	if !strings.Contains(out, "?? a.txt") || !strings.Contains(out, "status=0") || strings.Contains(out, "hook=0") || strings.Contains(out, "add=0") || !strings.Contains(out, "Permission denied") {
		t.Errorf("git in the worktree: want reads to work and writes to fail:\n%s", out)
	}
	t.Logf("worker saw:\n%s", out)
	if _, err := os.Stat(filepath.Join(e.repo, ".git", "hooks", "post-checkout")); err == nil {
		t.Error("a worker wrote a hook into the repository's .git")
	}
	if e.read("a.txt") != "a\n" {
		t.Error("the step's file did not land")
	}
}

// TestE2EPlanReportStepReplans: a worker reports its step failed with
// report_step; the planner re-plans the remaining work once, given the
// failure, and the new step runs; a second failure ends the run (exit 1).
func TestE2EPlanReportStepReplans(t *testing.T) {
	t.Parallel()
	report := func(status, why string) scripted.Call {
		return call("report_step", map[string]any{"status": status, "summary": why})
	}
	replan := map[string]any{"goal": "greet", "steps": []map[string]any{
		{"id": "s1", "title": "write hello"},
		{"id": "s2b", "title": "write bye by hand", "depends_on": []string{"s1"}},
	}}
	turns := stepWorker("s1", call("write_file", map[string]any{"path": "hello.txt", "content": "hello\n"}))
	turns = append(turns,
		scripted.Turn{Match: "assigned step s2 ", ToolCalls: []scripted.Call{report("failed", "the bye generator does not exist")}},
		scripted.Turn{Match: "did not succeed", ToolCalls: []scripted.Call{call("submit_plan", replan)}})
	turns = append(turns, stepWorker("s2b", call("write_file", map[string]any{"path": "bye.txt", "content": "bye\n"}))...)
	e := newE2E(t, turns...)
	e.savePlan("plan-r", map[string]any{"goal": "greet", "steps": []map[string]any{
		{"id": "s1", "title": "write hello"},
		{"id": "s2", "title": "generate bye", "depends_on": []string{"s1"}},
	}})
	r := e.run("", "run", "--yolo", "--plan", "plan-r")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if e.read("hello.txt") != "hello\n" || e.read("bye.txt") != "bye\n" {
		t.Errorf("files hello=%q bye=%q", e.read("hello.txt"), e.read("bye.txt"))
	}
	if !strings.Contains(r.stderr, "[step s2] failed: the bye generator does not exist") {
		t.Errorf("the reported failure is not shown:\n%s", r.stderr)
	}
	var planner string
	for _, q := range e.srv.Requests() {
		if u := firstUserOf(t, q); strings.Contains(u, "did not succeed") {
			planner = u
		}
	}
	if !strings.Contains(planner, "s2 (failed): the bye generator does not exist") || !strings.Contains(planner, "- s1: did s1") {
		t.Errorf("the planner was not given the failure and the done step:\n%s", planner)
	}
	show := e.run("", "plan", "show", "plan-r")
	if !strings.Contains(show.stdout, "s2b  done") || strings.Contains(show.stdout, "generate bye") {
		t.Errorf("plan show after the re-plan:\n%s", show.stdout)
	}

	// Both the step and its replacement fail: the run ends with exit 1.
	f := newE2E(t,
		scripted.Turn{Match: "assigned step s1 ", ToolCalls: []scripted.Call{report("blocked", "needs the signing key")}},
		scripted.Turn{Match: "did not succeed", ToolCalls: []scripted.Call{call("submit_plan", map[string]any{"goal": "sign", "steps": []map[string]any{{"id": "s1b", "title": "sign another way"}}})}},
		scripted.Turn{Match: "assigned step s1b ", ToolCalls: []scripted.Call{report("blocked", "still needs the key")}},
	)
	f.savePlan("plan-f", map[string]any{"goal": "sign", "steps": []map[string]any{{"id": "s1", "title": "sign"}}})
	r = f.run("", "run", "--yolo", "--plan", "plan-f")
	if r.code != 1 || !strings.Contains(r.stderr, "step s1b blocked: still needs the key") {
		t.Errorf("a second failure: exit %d\n%s", r.code, r.stderr)
	}
}

// TestE2EPlanUnresolvedConflictKeepsBranches: a resolution worker that
// leaves the conflict markers stops the run (exit 1) with both branches
// kept and named, and the workspace holds only what merged cleanly.
func TestE2EPlanUnresolvedConflictKeepsBranches(t *testing.T) {
	t.Parallel()
	turns := append(stepWorker("s1", call("edit_file", map[string]any{"path": "f.txt", "old_string": "b", "new_string": "X"})),
		stepWorker("s2", call("edit_file", map[string]any{"path": "f.txt", "old_string": "b", "new_string": "Y"}))...)
	turns = append(turns, scripted.Turn{Match: "conflict markers", Text: "I looked but changed nothing"})
	e := newE2E(t, turns...)
	e.write("f.txt", "a\nb\nc\n")
	e.gitInit()
	e.savePlan("plan-u", map[string]any{"goal": "x", "steps": []map[string]any{{"id": "s1", "title": "one"}, {"id": "s2", "title": "two"}}})
	r := e.run("", "run", "--yolo", "--plan", "plan-u")
	if r.code != 1 || !strings.Contains(r.stderr, "branches kept") || !strings.Contains(r.stderr, "-resolve] failed: conflict markers remain in f.txt") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	t.Logf("stderr:\n%s", r.stderr)
	branches := strings.Fields(strings.ReplaceAll(e.git("branch", "--list", "reasonix/*"), "*", ""))
	if len(branches) != 2 {
		t.Fatalf("kept branches %v", branches)
	}
	for _, b := range branches {
		if !strings.Contains(r.stderr, b) {
			t.Errorf("kept branch %s not named:\n%s", b, r.stderr)
		}
	}
	// Only the step merged first reached the workspace.
	merged := e.read("f.txt")
	if merged != "a\nX\nc\n" && merged != "a\nY\nc\n" {
		t.Errorf("f.txt = %q; want one step's clean merge only", merged)
	}
	// The kept branches hold the merged work and the step's own edit.
	other := map[string]string{"a\nX\nc\n": "a\nY\nc\n", "a\nY\nc\n": "a\nX\nc\n"}[merged]
	for _, b := range branches {
		want := other
		if strings.HasSuffix(b, "/merged") {
			want = merged
		}
		if got := e.git("show", b+":f.txt"); got != want {
			t.Errorf("kept branch %s has f.txt = %q, want %q", b, got, want)
		}
	}

	// --resume runs the step that could not be merged again, on the
	// merged work, and removes the kept branches.
	failed, done := "s2", "s1"
	if strings.Contains(r.stderr, "plan step s1 could not be merged") {
		failed, done = "s1", "s2"
	}
	e2 := newE2E(t, stepWorker(failed, call("edit_file", map[string]any{"path": "f.txt", "old_string": merged[2:3], "new_string": "X+Y"}))...)
	e.env = append(e.env, "REASONIX_BASE_URL="+e2.srv.URL())
	r = e.run("", "run", "--yolo", "--plan", "plan-u", "--resume")
	if r.code != 0 {
		t.Fatalf("resume: exit %d\n%s", r.code, r.stderr)
	}
	if got := e.read("f.txt"); got != "a\nX+Y\nc\n" {
		t.Errorf("after resume f.txt = %q\n%s", got, r.stderr)
	}
	for _, q := range e2.srv.Requests() {
		u := firstUserOf(t, q)
		if !strings.Contains(u, "assigned step "+failed+" ") || strings.Contains(u, "assigned step "+done+" ") {
			t.Errorf("resume ran more than the failed step: %.200s", u)
		}
	}
	if out := e.git("branch", "--list", "reasonix/*"); strings.TrimSpace(out) != "" {
		t.Errorf("branches left after the resumed run: %s", out)
	}
}

// TestE2EPlanFilesIsolationOutsideGit: outside a git repository two steps
// naming the same file never run at once, while a third with its own
// file runs beside them.
func TestE2EPlanFilesIsolationOutsideGit(t *testing.T) {
	t.Parallel()
	const delay = 200 * time.Millisecond
	turns := append(stepWorker("s1", call("write_file", map[string]any{"path": "a.txt", "content": "a\n"})),
		stepWorker("s2", call("read_file", map[string]any{"path": "shared.txt"}))...)
	turns = append(turns, stepWorker("s3", call("read_file", map[string]any{"path": "shared.txt"}))...)
	e := newE2E(t, turns...)
	e.srv.SetDelay(delay)
	e.write("shared.txt", "x\n")
	e.write("reasonix.toml", "[agent]\nmax_parallel = 3\n")
	e.savePlan("plan-files", map[string]any{"goal": "g", "steps": []map[string]any{
		{"id": "s1", "title": "own file", "files": []string{"a.txt"}},
		{"id": "s2", "title": "shared one", "files": []string{"shared.txt"}},
		{"id": "s3", "title": "shared two", "files": []string{"./shared.txt"}},
	}})
	r := e.run("", "run", "--yolo", "--plan", "plan-files")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "steps whose files overlap run one at a time") {
		t.Errorf("no notice of the fallback:\n%s", r.stderr)
	}
	span := map[string][2]time.Time{}
	for _, q := range e.srv.Received() {
		u := firstUserOf(t, q.Body)
		for _, id := range []string{"s1", "s2", "s3"} {
			if strings.Contains(u, "assigned step "+id+" ") {
				s := span[id]
				if s[0].IsZero() {
					s[0] = q.At
				}
				s[1] = q.At
				span[id] = s
			}
		}
	}
	first, second := span["s2"], span["s3"]
	if second[0].Before(first[0]) {
		first, second = second, first
	}
	if second[0].Before(first[1]) {
		t.Errorf("the two steps sharing shared.txt overlapped: %v and %v", first, second)
	}
	if s1 := span["s1"]; !s1[0].Before(first[1]) {
		t.Errorf("the step with its own file did not run beside them: s1 %v, shared %v", s1, first)
	}
}

// TestE2EPlannerAnswersInProse: a planner that answers in prose twice
// (before and after the reminder to call submit_plan) fails the plan
// with exit 1; its two answers are not run together on one line, the
// reminder is said, and the answer is not called partial: it was whole.
func TestE2EPlannerAnswersInProse(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "Let me think about the plan."}, scripted.Turn{Text: "Here it is in prose."})
	r := e.run("", "plan", "add a flag")
	if r.code != 1 || !strings.Contains(r.stderr, "without calling submit_plan") {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stderr, "plan.Here") || !strings.Contains(r.stderr, "submit_plan") {
		t.Errorf("the planner's two answers ran together, or the reminder was not said:\n%s", r.stderr)
	}
	if strings.Contains(r.stderr, "partial") {
		t.Errorf("a whole answer was called partial:\n%s", r.stderr)
	}
}

// TestE2EPlanWorktreeGitHasNoKeys: the repository's configuration names
// a clean filter, a program git runs on file contents when the plan
// records the workspace and a step's changes; it runs without the
// provider keys in its environment.
func TestE2EPlanWorktreeGitHasNoKeys(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("POSIX shell filter")
	}
	const planKey = "sk-e2e-plan-provider-key-0004"
	e := newE2E(t, stepWorker("s1", call("write_file", map[string]any{"path": "a.txt", "content": "a\n"}))...)
	e.env = append(e.env, "RX_E2E_PLAN_KEY="+planKey, "RX_E2E_PLAIN=kept")
	e.writeUserConfig(`[[providers]]
name = "main"
base_url = "` + e.srv.URL() + `"
api_key_env = "RX_E2E_PLAN_KEY"
model = "test-model"
`)
	e.write("list.txt", "one\n")
	e.gitInit()
	dump := filepath.Join(t.TempDir(), "env.txt")
	script := filepath.Join(t.TempDir(), "filter.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\nenv >> '"+dump+"'\necho --- >> '"+dump+"'\ncat\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.git("config", "filter.dump.clean", script)
	e.write(".gitattributes", "*.txt filter=dump\n")
	e.write("list.txt", "one\ntwo\n") // an uncommitted change the plan's start records
	e.savePlan("plan-env", map[string]any{"goal": "g", "steps": []map[string]any{{"id": "s1", "title": "add a", "files": []string{"a.txt"}}}})
	r := e.run("", "run", "--yolo", "--plan", "plan-env")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if e.read("a.txt") != "a\n" {
		t.Error("the step's file did not land")
	}
	b, err := os.ReadFile(dump)
	if err != nil {
		t.Fatalf("git never ran the filter: %v", err)
	}
	got := string(b)
	if !strings.Contains(got, "RX_E2E_PLAIN=kept") || !strings.Contains(got, "PATH=") {
		t.Errorf("the filter's environment lacks ordinary variables:\n%s", got)
	}
	for _, leak := range []string{"RX_E2E_PLAN_KEY", planKey, "REASONIX_API_KEY", "test-key"} {
		if strings.Contains(got, leak) {
			t.Errorf("git's filter saw %q:\n%s", leak, got)
		}
	}
}
