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

// TestE2ERunRemovesAbandonedTempDirs: a run killed with SIGKILL leaves
// its private temp directory behind; the clean-up of the next run that
// makes its own (for a command) removes it and its own, and leaves a
// live run's alone.
func TestE2ERunRemovesAbandonedTempDirs(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "true"})}},
		scripted.Turn{Text: "done"})
	tmp := t.TempDir()
	for i, kv := range e.env {
		if strings.HasPrefix(kv, "TMPDIR=") {
			e.env[i] = "TMPDIR=" + tmp
		}
	}
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skipf("cannot run true to get a finished process id: %v", err)
	}
	old := time.Now().Add(-time.Hour)
	abandoned := filepath.Join(tmp, fmt.Sprintf("reasonix-run-%d-1", gone.Process.Pid))
	live := filepath.Join(tmp, fmt.Sprintf("reasonix-run-%d-2", os.Getpid()))
	for _, d := range []string{abandoned, live} {
		if err := os.MkdirAll(filepath.Join(d, "leftover"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(d, old, old); err != nil {
			t.Fatal(err)
		}
	}
	if r := e.run("", "run", "hi"); r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	if _, err := os.Stat(abandoned); !os.IsNotExist(err) {
		t.Errorf("abandoned run directory still there (err %v)", err)
	}
	if _, err := os.Stat(live); err != nil {
		t.Errorf("a live process's directory was removed: %v", err)
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "reasonix-run-*"))
	if len(left) != 1 {
		t.Errorf("temp dirs after the run: %v, want only the live one", left)
	}
}

// TestE2EBashWritesItsPrivateTempDir: the run's TMPDIR, made for its
// first command, exists when that command starts, which can write there
// (inside the sandbox where Landlock works), and is gone after the run;
// a run that starts no command makes none.
func TestE2EBashWritesItsPrivateTempDir(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{Text: "no command"},
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": `echo x > "$TMPDIR/f" && cat "$TMPDIR/f" && echo "dir=$TMPDIR"`})}},
		scripted.Turn{Text: "done"},
	)
	tmp := t.TempDir()
	for i, kv := range e.env {
		if strings.HasPrefix(kv, "TMPDIR=") {
			e.env[i] = "TMPDIR=" + tmp
		}
	}
	// A directory made and removed under tmp changes its time.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(tmp, old, old); err != nil {
		t.Fatal(err)
	}
	if r := e.run("", "run", "answer only"); r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	if fi, err := os.Stat(tmp); err != nil || !fi.ModTime().Equal(old) {
		t.Errorf("a run without a command changed %s (%v): it made a directory there", tmp, err)
	}
	if r := e.run("", "run", "write a temp file"); r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	result := string(messagesOf(t, reqs[len(reqs)-1]))
	if !strings.Contains(result, `x\ndir=`) || !strings.Contains(result, "exit code: 0") {
		t.Fatalf("the command could not write its TMPDIR: %s", result)
	}
	_, after, _ := strings.Cut(result, `x\ndir=`)
	dir, _, _ := strings.Cut(after, `\n`)
	if filepath.Dir(dir) != tmp || !strings.HasPrefix(filepath.Base(dir), "reasonix-run-") {
		t.Errorf("TMPDIR %q is not a run directory under %s", dir, tmp)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is still there after the run (err %v)", dir, err)
	}
}
