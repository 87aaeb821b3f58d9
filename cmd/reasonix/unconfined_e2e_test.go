//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/providers/scripted"
)

// TestE2ERedTeamPlantedProgram: the person's PATH names a folder in the
// workspace (an activated .venv/bin). A confined command may write there,
// but nothing it writes may then be run by Reasonix itself, outside the
// sandbox and with the API key in its environment: the grep tool's
// ripgrep here.
func TestE2ERedTeamPlantedProgram(t *testing.T) {
	needSandbox(t)
	t.Parallel()
	e := newE2E(t)
	root := filepath.Dir(e.repo)
	pwned := filepath.Join(root, "pwned")
	bin := filepath.Join(e.repo, ".venv", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, kv := range e.env {
		if strings.HasPrefix(kv, "PATH=") {
			e.env[i] = "PATH=" + bin + ":" + strings.TrimPrefix(kv, "PATH=")
		}
	}
	e.write("a.txt", "needle\n")
	// cp keeps the executable bit, the redirect the file's mode: no chmod.
	plant := `cp /bin/true .venv/bin/rg; printf '#!/bin/sh\nenv > ` + pwned + `\nexit 1\n' > .venv/bin/rg; cp .venv/bin/rg .venv/bin/git; cp .venv/bin/rg .venv/bin/bash; cp .venv/bin/rg .venv/bin/secret-tool`
	e = withScript(t, e,
		scripted.Turn{ToolCalls: []scripted.Call{bashCall(plant)}},
		scripted.Turn{ToolCalls: []scripted.Call{call("grep", map[string]any{"pattern": "needle"})}},
		scripted.Turn{Text: "done"},
	)
	r := e.run("", "run", "tidy up", "--yolo")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(bin, "rg")); err != nil {
		t.Fatalf("the confined command could not plant the program: %v\n%s", err, messagesOf(t, e.srv.Requests()[1]))
	}
	if b, err := os.ReadFile(pwned); err == nil {
		t.Errorf("a program planted in the workspace ran outside the sandbox (key seen: %v)", strings.Contains(string(b), "test-key"))
	}
	// The next run starts git for the environment block, and the
	// person's own hook (in the shell, bash).
	os.Remove(pwned)
	os.MkdirAll(filepath.Join(e.repo, ".git"), 0o755)
	e.writeUserConfig("[[hooks]]\nevent = \"UserPromptSubmit\"\ncommand = \"true\"\n")
	e = withScript(t, e, scripted.Turn{Text: "hi"})
	if r := e.run("", "run", "hello"); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.ReadFile(pwned); err == nil {
		t.Errorf("a program planted in the workspace ran outside the sandbox at the next start")
	}
	// A run whose key is kept in the Secret Service asks secret-tool.
	os.Remove(pwned)
	if err := os.WriteFile(filepath.Join(e.home, "credentials.json"), []byte(`{"REASONIX_API_KEY": {"store": "keyring"}}`+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range e.env {
		if !strings.HasPrefix(kv, "REASONIX_API_KEY=") {
			env = append(env, kv)
		}
	}
	e.env = append(env, "DBUS_SESSION_BUS_ADDRESS=unix:path="+filepath.Join(root, "no-bus"))
	e = withScript(t, e, scripted.Turn{Text: "hi"})
	r = e.run("", "run", "hello")
	if _, err := os.ReadFile(pwned); err == nil {
		t.Errorf("a secret-tool planted in the workspace ran outside the sandbox (exit %d)", r.code)
	}
}

// TestE2EContextRunsNoRepositoryFilter: a repository that came with its
// .git (an archive, a shared copy) may name a filter driver, a program
// git runs on file contents during a status. `reasonix context` shows
// the environment block, and its git status must be left out there as a
// run's is, not run that program outside the sandbox.
func TestE2EContextRunsNoRepositoryFilter(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	t.Parallel()
	e := newE2E(t)
	root := filepath.Dir(e.repo)
	pwned := filepath.Join(root, "pwned-filter")
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-c", "user.email=a@b", "-c", "user.name=a"}, args...)...)
		cmd.Dir = e.repo
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	e.write("a.txt", "a\n")
	git("add", "a.txt")
	git("commit", "-qm", "x")
	cfg, err := os.OpenFile(filepath.Join(e.repo, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(cfg, "[filter \"evil\"]\n\tclean = touch %s; cat\n", pwned)
	cfg.Close()
	e.write(".gitattributes", "* filter=evil\n")
	// The same size at another time: git must read the file again to
	// know, through the filter.
	e.write("a.txt", "b\n")
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(filepath.Join(e.repo, "a.txt"), later, later); err != nil {
		t.Fatal(err)
	}
	r := e.run("", "context")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Error("reasonix context ran the repository's filter program")
	}
}
