package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/providers/scripted"
)

// TestE2EBackgroundJobs starts two background jobs through the binary: one
// that prints and exits, whose output and exit code reach the model through
// job_output, and one that would run for a minute, which must be gone
// (its child too) once the run ends.
func TestE2EBackgroundJobs(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX shell test")
	}
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{
			"command": "printf 'bg-hello\\n'; exit 3", "run_in_background": true})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("job_output", map[string]any{"job_id": "job-1", "wait_seconds": 10})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("job_output", map[string]any{"job_id": "job-1", "wait_seconds": 10})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{
			"command": "sleep 60 & echo $! > long.pid; echo long-started; wait", "run_in_background": true})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("job_output", map[string]any{"job_id": "job-2", "wait_seconds": 10})}},
		scripted.Turn{Text: "The server is up."},
	)
	start := time.Now()
	r := e.run("", "run", "start the jobs", "--yolo")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("the run waited for its background job: %s", d)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 6 {
		t.Fatalf("requests = %d, want 6\nstderr: %s", len(reqs), r.stderr)
	}
	if m := string(messagesOf(t, reqs[1])); !strings.Contains(m, "started job-1 in the background") {
		t.Errorf("no job id sent back: %s", m)
	}
	if m := string(messagesOf(t, reqs[2])); !strings.Contains(m, "bg-hello") {
		t.Errorf("job output not sent back: %s", m)
	}
	if m := string(messagesOf(t, reqs[3])); !strings.Contains(m, "exit code: 3") {
		t.Errorf("job exit code not sent back: %s", m)
	}
	if m := string(messagesOf(t, reqs[5])); !strings.Contains(m, "long-started") {
		t.Errorf("second job's output not sent back: %s", m)
	}
	assertPrefixStable(t, reqs)
	b, err := os.ReadFile(filepath.Join(e.repo, "long.pid"))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid == 0 {
		t.Fatalf("no pid file: %v %q", err, b)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
		if err != nil || strings.HasPrefix(strings.TrimSpace(string(out)), "Z") {
			break
		}
		if time.Now().After(deadline) {
			_ = exec.Command("kill", "-9", strconv.Itoa(pid)).Run()
			t.Fatalf("the background job's child %d outlived the run", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
