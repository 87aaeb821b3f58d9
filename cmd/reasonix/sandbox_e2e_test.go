package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/providers/scripted"
)

// TestE2EBashSandbox runs a real bash call through the binary under
// [sandbox] bash = "enforce": a write inside the workspace lands, one next
// to it does not. Temp dirs are writable by design, so the workspace is
// made inside this package's folder.
func TestE2EBashSandbox(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Landlock is Linux-only")
	}
	wd, _ := os.Getwd()
	base, err := os.MkdirTemp(wd, "sandbox-e2e-")
	if err != nil {
		t.Skipf("cannot make a directory beside the package: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	ws, outside := filepath.Join(base, "ws"), filepath.Join(base, "outside")
	os.MkdirAll(ws, 0o755)
	os.MkdirAll(outside, 0o755)
	// A run's commands get a private TMPDIR (internal/runtmp), so /tmp
	// itself is not writable to them: a clone under /tmp still shows
	// confinement.
	opts := permission.SandboxOptions{Workspace: ws, Home: filepath.Join(base, "home"), TempDir: filepath.Join(os.TempDir(), "reasonix-run-check")}
	enforced, _, detail := permission.SandboxStatus(opts)
	if !enforced {
		t.Skipf("Landlock not enforced here: %s", detail)
	}
	for _, w := range permission.WritablePaths(opts) {
		if w != ws && strings.HasPrefix(outside+"/", strings.TrimSuffix(w, "/")+"/") {
			t.Skipf("the package folder lies under writable %s (a clone in a temp dir?); cannot show confinement", w)
		}
	}
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "echo in > inside.txt; echo out > ../outside/o.txt; echo status=$?"})}},
		scripted.Turn{Text: "ok"},
	)
	e.repo = ws
	r := e.run("", "run", "write files")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "inside.txt")); err != nil || string(b) != "in\n" {
		t.Errorf("write inside the workspace failed: %v %q", err, b)
	}
	if _, err := os.Stat(filepath.Join(outside, "o.txt")); err == nil {
		t.Errorf("bash wrote outside the workspace")
	}
	reqs := e.srv.Requests()
	if last := string(messagesOf(t, reqs[len(reqs)-1])); !strings.Contains(last, "status=1") || !strings.Contains(last, "ermission denied") {
		t.Errorf("the model did not see the refused write: %s", last)
	}
}
