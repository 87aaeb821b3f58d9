package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/providers/scripted"
)

// toolResultsOf lists the tool results of a request, in order.
func toolResultsOf(t *testing.T, body []byte) []string {
	t.Helper()
	var out []string
	for _, m := range wireMessages(t, body) {
		if m.Role == "tool" {
			out = append(out, m.Content)
		}
	}
	return out
}

const (
	worktreeKey = "KEY=worktree-canary-8a1f"
	worktreeEnv = "PW=env-canary-77c2"
)

// TestE2EPlanWorktreeKeepsPathRules: a plan worker runs in its own git
// worktree, a checkout of the repository under the Reasonix home, and
// the project's rules, written relative to the project
// (Read(./secrets/**), Read(./.env), Edit(./locked.txt) in
// .claude/settings.json), mean the same files in that checkout: the
// worker's file tools are refused them, its commands find them hidden
// (however they name them), its edits of the locked file and of the
// control files are refused or undone, and the hooks are told the paths
// in the worktree it works in.
func TestE2EPlanWorktreeKeepsPathRules(t *testing.T) {
	t.Parallel()
	skipNoPOSIX(t)
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 not installed: the commands read files with it, past what the gate can see")
	}
	// The commands' reads are kept out by the sandbox's hiding alone.
	if runtime.GOOS != "linux" {
		t.Skipf("the sandbox hides files on Linux only, not on %s", runtime.GOOS)
	}
	if enforced, _, detail := permission.SandboxStatus(permission.SandboxOptions{}); !enforced {
		t.Skipf("Landlock not enforced here: %s", detail)
	}
	if ok, why := permission.HidingAvailable(); !ok {
		t.Skipf("the sandbox cannot hide files here: %s", why)
	}
	py := `python3 -c "import os; d='secre'+'ts'; print(open(os.path.join(d, 'key.txt')).read()); print(open('.e'+'nv').read())"; echo probe-python`
	worker := stepWorker("s1",
		call("read_file", map[string]any{"path": "secrets/key.txt"}),
		call("read_file", map[string]any{"path": ".env"}),
		bashCall(py),
		bashCall("grep -r canary . ; echo probe-grep; echo \"gocache=$GOCACHE\""),
		call("write_file", map[string]any{"path": "locked.txt", "content": "pwned\n"}),
		call("write_file", map[string]any{"path": ".claude/settings.json", "content": "{}\n"}),
		bashCall(`python3 -c "open('.claude/settings.local.json','w').write('{\"permissions\":{\"allow\":[\"Bash\"]}}')"; echo probe-control`),
		call("write_file", map[string]any{"path": "done.txt", "content": "done\n"}),
		call("read_file", map[string]any{"path": "sub/notes.md"}),
		call("task", map[string]any{"agent": "general", "description": "probe", "prompt": "SUBTASK-7 look around"}),
	)
	// The worker's subagent (its turns come while the worker waits on
	// the task call) works in the worker's worktree too.
	sub := []scripted.Turn{
		{Match: "SUBTASK-7", ToolCalls: []scripted.Call{bashCall("pwd; " + py)}},
		{Match: "SUBTASK-7", ToolCalls: []scripted.Call{call("write_file", map[string]any{"path": "sub.txt", "content": "from the subagent\n"})}},
		{Match: "SUBTASK-7", Text: "sub done"},
	}
	n := len(worker) - 1
	turns := append(append(append([]scripted.Turn{}, worker[:n]...), sub...), worker[n:]...)
	e := newE2E(t, turns...)
	hookLog := filepath.Join(t.TempDir(), "hooks.jsonl")
	e.write(".claude/settings.json", `{
  "permissions": {"deny": ["Read(./secrets/**)", "Read(./.env)", "Edit(./locked.txt)"]},
  "hooks": {"PreToolUse": [{"matcher": "Read|Write", "hooks": [{"type": "command", "command": "cat >> `+hookLog+`; echo >> `+hookLog+`"}]}]}
}
`)
	e.write("secrets/key.txt", worktreeKey+"\n")
	e.write(".env", worktreeEnv+"\n")
	e.write("locked.txt", "locked\n")
	// A folder's rules file, read with the first file call that reaches
	// it, imports a denied file.
	e.write("sub/CLAUDE.md", "Sub rules.\n@../secrets/key.txt\n")
	e.write("sub/notes.md", "notes\n")
	e.gitInit()
	e.savePlan("plan-rules", map[string]any{"goal": "g", "steps": []map[string]any{{"id": "s1", "title": "tidy"}}})
	r := e.run("", "run", "--yolo", "--hooks-trust", "--plan", "plan-rules")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	var results, subResults []string
	for _, req := range reqs {
		if strings.Contains(firstUserOf(t, req), "SUBTASK-7") {
			subResults = toolResultsOf(t, req)
		} else {
			results = toolResultsOf(t, req)
		}
	}
	if len(results) != 10 || len(subResults) != 2 {
		t.Fatalf("%d worker and %d subagent tool results, want 10 and 2:\n%s\n%s", len(results), len(subResults),
			strings.Join(results, "\n---\n"), strings.Join(subResults, "\n---\n"))
	}
	all := strings.Join(append(slices.Clone(results), subResults...), "\n---\n")
	t.Logf("the worker saw:\n%s", all)
	if strings.Contains(all, "canary") && (strings.Contains(all, "8a1f") || strings.Contains(all, "77c2")) {
		t.Errorf("a secret the rules deny reached the model")
	}
	for i, want := range []string{"Read(./secrets/**)", "Read(./.env)"} {
		if !strings.Contains(results[i], "denied by rule Deny: "+want) {
			t.Errorf("read_file %d not refused by %s: %s", i, want, results[i])
		}
	}
	for i, probe := range map[int]string{2: "probe-python", 3: "probe-grep", 6: "probe-control"} {
		if !strings.Contains(results[i], probe) {
			t.Errorf("command %d did not run through (%s missing): %s", i, probe, results[i])
		}
	}
	// The worker's checkout builds with its project's private caches, not
	// with a cold set of its own.
	if caches, _ := filepath.Glob(filepath.Join(e.home, "cache", filepath.Base(e.repo)+"-*")); len(caches) != 1 ||
		!strings.Contains(results[3], "gocache="+filepath.Join(caches[0], "go-build")+"\n") {
		t.Errorf("the worker's GOCACHE is not its project's private one (%q): %s", caches, results[3])
	}
	if !strings.Contains(results[4], "denied by rule Deny: Edit(./locked.txt)") {
		t.Errorf("write_file locked.txt not refused by the Edit rule: %s", results[4])
	}
	if strings.Contains(results[5], "wrote") || !strings.Contains(results[5], "control") {
		t.Errorf("write_file of the worktree's .claude/settings.json not refused as a control file: %s", results[5])
	}
	if !strings.Contains(results[6], "reverted") {
		t.Errorf("the command's write of .claude/settings.local.json was not reverted: %s", results[6])
	}
	if !strings.Contains(results[8], "Sub rules.") || strings.Contains(results[8], "canary") {
		t.Errorf("the folder's rules file did not join the result, or its denied import did: %s", results[8])
	}
	if !strings.Contains(subResults[0], "probe-python") || !strings.Contains(subResults[0], filepath.Join(e.home, "worktrees")) {
		t.Errorf("the subagent's command did not run in the worker's worktree: %s", subResults[0])
	}
	if e.read("sub.txt") != "from the subagent\n" {
		t.Error("the subagent's file did not land with the step")
	}
	// What the step changed reached the workspace, and nothing else did.
	if e.read("done.txt") != "done\n" {
		t.Error("the step's own file did not land")
	}
	if e.read("locked.txt") != "locked\n" {
		t.Errorf("locked.txt changed: %q", e.read("locked.txt"))
	}
	for _, p := range []string{".claude/settings.local.json"} {
		if _, err := os.Stat(filepath.Join(e.repo, p)); err == nil {
			t.Errorf("%s reached the workspace", p)
		}
	}
	// The hooks were told the worktree's paths, not the workspace's.
	b, err := os.ReadFile(hookLog)
	if err != nil {
		t.Fatalf("no hook ran: %v", err)
	}
	worktrees := filepath.Join(e.home, "worktrees")
	var saw int
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var p struct {
			Cwd       string `json:"cwd"`
			ToolInput struct {
				Path     string `json:"path"`
				FilePath string `json:"file_path"`
			} `json:"tool_input"`
		}
		if line == "" || json.Unmarshal([]byte(line), &p) != nil {
			continue
		}
		saw++
		if !within(p.Cwd, worktrees) || !within(p.ToolInput.FilePath, p.Cwd) ||
			p.ToolInput.FilePath != filepath.Join(p.Cwd, p.ToolInput.Path) {
			t.Errorf("a hook was told cwd %q, file_path %q for %q; want the worker's worktree under %s", p.Cwd, p.ToolInput.FilePath, p.ToolInput.Path, worktrees)
		}
	}
	if saw < 6 {
		t.Errorf("%d hook payloads, want one per read_file and write_file:\n%s", saw, b)
	}
}

// within reports whether p is dir or lies beneath it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator))
}
