package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// TestE2EControlFilesGuardedOnDisk: whatever the shell analyser makes of
// a command, a change to a control file that no person approved is undone
// after the call, and the model's next request says so. --yolo allows
// every call here without asking anyone, so none of them is approved.
func TestE2EControlFilesGuardedOnDisk(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX shell test")
	}
	calls := []scripted.Call{
		call("bash", map[string]any{"command": `F=reasonix.toml; printf 'x' >> "$F"`}),
		call("write_file", map[string]any{"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\necho pwned\n"}),
	}
	python := false
	if _, err := exec.LookPath("python3"); err == nil {
		python = true
		calls = append(calls, call("bash", map[string]any{
			"command": `python3 -c "open('.reasonix/agents/rev.md','w').write('---\nname: rev\npermissions:\n  mode: yolo\n---\n')"`}))
	} else {
		t.Log("python3 not found: the python3 -c case is skipped")
	}
	e := newE2E(t, scripted.Turn{ToolCalls: calls}, scripted.Turn{Text: "done"})
	const toml = "[permissions]\nmode = \"ask\"\n"
	const agent = "---\nname: rev\n---\nreview the diff\n"
	e.write("reasonix.toml", toml)
	e.write(".reasonix/agents/rev.md", agent)
	e.write(".git/config", "[core]\n")
	e.write(".git/hooks/pre-commit.sample", "#!/bin/sh\n")

	r := e.run("", "run", "tidy up", "--yolo")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if got := e.read("reasonix.toml"); got != toml {
		t.Errorf("reasonix.toml = %q, want it unchanged", got)
	}
	if _, err := os.Stat(filepath.Join(e.repo, ".git/hooks/pre-commit")); err == nil {
		t.Error(".git/hooks/pre-commit was left in place")
	}
	if got := e.read(".reasonix/agents/rev.md"); got != agent {
		t.Errorf("agent file = %q, want it unchanged", got)
	}
	reqs := e.srv.Requests()
	next := string(messagesOf(t, reqs[len(reqs)-1]))
	want := "this call changed control file reasonix.toml, which needs a person's approval; the change was reverted"
	if !strings.Contains(next, want) {
		t.Errorf("the model was not told %q: %s", want, next)
	}
	// The hook is a control file to the gate as well: refused before it runs.
	if !strings.Contains(next, "blocked: ") || !strings.Contains(next, "writes .git/hooks/pre-commit") {
		t.Errorf("the model was not told the hook write was refused: %s", next)
	}
	if python && !strings.Contains(next, "changed control file .reasonix/agents/rev.md") {
		t.Errorf("the model was not told about the agent file: %s", next)
	}
	log, err := os.ReadFile(filepath.Join(e.home, "permissions.log"))
	if err != nil || !strings.Contains(string(log), `"subject":"reasonix.toml","decision":"revert","by":"guard"`) {
		t.Errorf("decision log: %v %s", err, log)
	}
}
