package main

import (
	"encoding/json"
	"fmt"
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
// job, and one that would run for a minute, which must be gone
// (its child too) once the run ends.
func TestE2EBackgroundJobs(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX shell test")
	}
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{
			"command": "printf 'bg-hello\\n'; exit 3", "run_in_background": true})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("job", map[string]any{"job_id": "job-1", "wait_seconds": 10})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("job", map[string]any{"job_id": "job-1", "wait_seconds": 10})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{
			"command": "sleep 60 & echo $! > long.pid; echo long-started; wait", "run_in_background": true})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("job", map[string]any{"job_id": "job-2", "wait_seconds": 10})}},
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
	if !strings.Contains(r.stderr, "background job-1 exited with code 3: printf") {
		t.Errorf("the text output does not report the job's end:\n%s", r.stderr)
	}
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

// TestE2EJobEventsStreamJSON: background jobs are reported over
// --output-format stream-json as job events: started, output (a byte
// count), exited with the command's code, and killed for job kill.
func TestE2EJobEventsStreamJSON(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX shell test")
	}
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{
			"command": "printf 'twelve bytes'; sleep 2.5; exit 3", "run_in_background": true})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{
			"command": "sleep 60", "run_in_background": true})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("job", map[string]any{"job_id": "job-1", "wait_seconds": 10})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("job", map[string]any{"job_id": "job-1", "wait_seconds": 10})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("job", map[string]any{"job_id": "job-2", "kill": true})}},
		scripted.Turn{Text: "Done with the jobs."},
	)
	r := e.run("", "run", "--output-format", "stream-json", "--yolo", "run the jobs")
	if r.code != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	type jobEvent struct {
		Type    string `json:"type"`
		Session string `json:"session"`
		Job     *struct {
			ID      string `json:"id"`
			Command string `json:"command"`
			State   string `json:"state"`
			Bytes   int64  `json:"bytes"`
			Code    *int   `json:"exit_code"`
		} `json:"job"`
	}
	var got []string
	var job1Session string
	for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var ev jobEvent
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("stdout line is not JSON: %q: %v", l, err)
		}
		if ev.Type != "job" {
			continue
		}
		j := ev.Job
		if j == nil || j.Code == nil {
			t.Fatalf("job event without job or exit_code: %s", l)
		}
		if ev.Session == "" {
			t.Errorf("job event names no session: %s", l)
		}
		if j.ID == "job-1" {
			job1Session = ev.Session
		}
		s := j.ID + " " + j.State
		switch j.State {
		case "exited":
			s += fmt.Sprintf(" %d %d", *j.Code, j.Bytes)
		case "output":
			if j.Bytes != 12 {
				t.Errorf("output event counts %d bytes, want 12: %s", j.Bytes, l)
			}
			continue // timing decides how many; at least one is checked below
		}
		got = append(got, s)
	}
	want := []string{"job-1 started", "job-2 started", "job-1 exited 3 12", "job-2 killed"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("job events = %q, want %q\nstdout: %s", got, want, r.stdout)
	}
	if !strings.Contains(r.stdout, `"state":"output","bytes":12`) {
		t.Errorf("no output event while job-1 slept:\n%s", r.stdout)
	}
	if job1Session == "" {
		t.Error("no session on job-1's events")
	}
}
