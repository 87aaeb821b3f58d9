package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// powerShellE2E is a repository whose reasonix.toml prefers pwsh, with a
// fake pwsh first on PATH: it notes each run in pwsh-ran (inside the
// workspace, which the sandbox lets it write) and prints its arguments
// and the API key variable it should never see.
func powerShellE2E(t *testing.T, turns ...scripted.Turn) *e2e {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("the fake pwsh is a POSIX shell script")
	}
	e := newE2E(t, turns...)
	bin := filepath.Join(t.TempDir(), "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	script := "#!/bin/sh\necho run >> pwsh-ran\nfor a in \"$@\"; do printf 'arg:%s\\n' \"$a\"; done\nprintf 'key:%s\\n' \"$REASONIX_API_KEY\"\n"
	if err := os.WriteFile(filepath.Join(bin, "pwsh"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for i, kv := range e.env {
		if strings.HasPrefix(kv, "PATH=") {
			e.env[i] = "PATH=" + bin + string(os.PathListSeparator) + strings.TrimPrefix(kv, "PATH=")
		}
	}
	e.write("reasonix.toml", "[tools.shell]\nprefer = \"pwsh\"\n")
	return e
}

func TestE2EPowerShellAsksThenRunsInPwsh(t *testing.T) {
	t.Parallel()
	e := powerShellE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "Get-ChildItem -Name"})}},
		scripted.Turn{Text: "Skipped it."},
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": `Write-Output "hi there"`})}},
		scripted.Turn{Text: "Ran it."},
	)
	c := startStream(t, e)
	c.send(userLine("list files"))
	req := c.await("the first approval request", typed("approval_request"))
	if req["tool"] != "bash" || req["command"] != "Get-ChildItem -Name" {
		t.Fatalf("approval request %v", req)
	}
	if !strings.Contains(fmt.Sprint(req["impact"]), "PowerShell") {
		t.Errorf("the request does not say it is PowerShell: %v", req)
	}
	c.send(map[string]any{"type": "approval", "id": req["id"], "decision": "deny"})
	c.await("the first turn's end", turnDone)
	if _, err := os.Stat(filepath.Join(e.repo, "pwsh-ran")); err == nil {
		t.Fatal("a denied PowerShell command ran")
	}

	c.send(userLine("say hi"))
	req = c.await("the second approval request", typed("approval_request"))
	c.send(map[string]any{"type": "approval", "id": req["id"], "decision": "allow"})
	c.await("the second turn's end", turnDone)
	c.finish()
	if got := e.read("pwsh-ran"); got != "run\n" {
		t.Errorf("pwsh ran %q, want once", got)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("requests = %d, want 4", len(reqs))
	}
	if !strings.Contains(string(reqs[0]), "Run a PowerShell command") {
		t.Errorf("the bash tool's description does not say PowerShell")
	}
	if !strings.Contains(string(reqs[1]), "denied by the user") {
		t.Errorf("request 2 lacks the refusal")
	}
	got := string(reqs[3])
	for _, want := range []string{`arg:-NoProfile\narg:-NonInteractive\narg:-Command\narg:Write-Output \"hi there\"`, `key:\n`} {
		if !strings.Contains(got, want) {
			t.Errorf("the result lacks %s:\n%s", want, got)
		}
	}
	if strings.Contains(got, "test-key") {
		t.Error("the API key reached PowerShell")
	}
	assertPrefixStable(t, reqs)
}

func TestE2EPowerShellHeadlessRefuses(t *testing.T) {
	t.Parallel()
	e := powerShellE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "Get-ChildItem"})}},
		scripted.Turn{Text: "Could not."},
	)
	r := e.run("", "run", "list files")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(e.repo, "pwsh-ran")); err == nil {
		t.Fatal("a headless run ran a PowerShell command no one approved")
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 || !strings.Contains(string(reqs[1]), "needs a person's approval") {
		t.Fatalf("the model was not told why:\n%s", reqs[len(reqs)-1])
	}

	// With yolo, an opaque line that looks harmless runs; one that
	// deletes still needs a person.
	e = powerShellE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "Get-ChildItem"})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "Remove-Item -Recurse src"})}},
		scripted.Turn{Text: "Done."},
	)
	r = e.run("", "run", "--yolo", "list files")
	if r.code != 0 {
		t.Fatalf("yolo: exit %d\n%s", r.code, r.stderr)
	}
	if got := e.read("pwsh-ran"); got != "run\n" {
		t.Errorf("yolo: pwsh ran %q, want once (the listing, not the deletion)", got)
	}
	if reqs := e.srv.Requests(); !strings.Contains(string(reqs[2]), "Remove-Item deletes files") {
		t.Errorf("yolo: the deletion was not refused as dangerous:\n%s", reqs[2])
	}
}

func TestE2EPowerShellMissingIsAnError(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("PATH layout differs")
	}
	e := newE2E(t, scripted.Turn{Text: "never"})
	for i, kv := range e.env {
		if strings.HasPrefix(kv, "PATH=") {
			e.env[i] = "PATH=" + t.TempDir()
		}
	}
	e.write("reasonix.toml", "[tools.shell]\nprefer = \"powershell\"\n")
	r := e.run("", "run", "hi")
	if r.code != 2 || !strings.Contains(r.stderr, `[tools.shell] prefer = "powershell"`) || !strings.Contains(r.stderr, "no pwsh found on PATH") {
		t.Fatalf("exit %d, stderr:\n%s", r.code, r.stderr)
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Errorf("requests = %d, want none", n)
	}
	if r := e.run("", "doctor"); !strings.Contains(r.stdout, `shell:      error: [tools.shell] prefer = "powershell"`) {
		t.Errorf("doctor does not report the missing PowerShell:\n%s", r.stdout)
	}
}

// A person's own ! line runs in PowerShell too, without a model call:
// they typed it, so the opaque line needs no further approval.
func TestE2EPowerShellBangLine(t *testing.T) {
	t.Parallel()
	e := powerShellE2E(t, scripted.Turn{Text: "never"})
	r := e.run("", "run", "!Get-ChildItem -Name")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if got := e.read("pwsh-ran"); got != "run\n" {
		t.Errorf("pwsh ran %q, want once", got)
	}
	if !strings.Contains(r.stdout+r.stderr, "arg:Get-ChildItem -Name") {
		t.Errorf("the output is not shown:\n%s\n%s", r.stdout, r.stderr)
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Errorf("requests = %d, want none", n)
	}
	if r := e.run("", "doctor"); !strings.Contains(r.stdout, "shell:      PowerShell ") || !strings.Contains(r.stdout, "pwsh ([tools.shell] prefer = \"pwsh\")") {
		t.Errorf("doctor does not name the PowerShell:\n%s", r.stdout)
	}
}
