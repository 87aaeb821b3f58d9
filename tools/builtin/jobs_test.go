package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/tools"
)

// startBackground starts command as a background job and returns its id.
func startBackground(t *testing.T, env *tools.Env, command string) string {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"command": command, "run_in_background": true})
	start := time.Now()
	res, err := runTool(t, bashTool{}, env, string(args))
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("a background start took %s", d)
	}
	f := strings.Fields(strings.TrimPrefix(res.Content, "started "))
	if len(f) == 0 || !strings.HasPrefix(f[0], "job-") || !strings.Contains(res.Content, command) {
		t.Fatalf("no job id or command in %q", res.Content)
	}
	return f[0]
}

func jobOutput(t *testing.T, env *tools.Env, id string, wait float64) string {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"job_id": id, "wait_seconds": wait})
	res, err := runTool(t, jobTool{}, env, string(args))
	if err != nil {
		t.Fatal(err)
	}
	return res.Content
}

// waitGone waits for the process whose pid is in file to be gone.
func waitGone(t *testing.T, file string) {
	t.Helper()
	var pid int
	deadline := time.Now().Add(5 * time.Second)
	for pid == 0 {
		b, _ := os.ReadFile(file)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		if pid == 0 && time.Now().After(deadline) {
			t.Fatalf("no pid in %s", file)
		}
		time.Sleep(20 * time.Millisecond)
	}
	for !processGone(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d still runs", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestBackgroundJobOutputIncrementallyAndExitCode(t *testing.T) {
	skipOnWindows(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dir := t.TempDir()
	env := tools.NewEnv(dir)
	env.TempDir = dir
	defer env.State.Close()
	gate := filepath.Join(dir, "go")
	id := startBackground(t, env, `echo first; echo tmp=$TMPDIR; while [ ! -e go ]; do sleep 0.05; done; echo second; exit 7`)
	if id != "job-1" {
		t.Errorf("first job id %q", id)
	}
	out := jobOutput(t, env, id, 10)
	if !strings.Contains(out, "first\n") || !strings.Contains(out, "tmp="+dir) || !strings.HasSuffix(out, "status: running") {
		t.Fatalf("first read: %q", out)
	}
	if out := jobOutput(t, env, id, 0); out != "(no new output)\nstatus: running" {
		t.Fatalf("second read should have nothing new: %q", out)
	}
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var all string
	for i := 0; i < 5 && !strings.Contains(all, "exit code: 7"); i++ {
		all += jobOutput(t, env, id, 10)
	}
	if strings.Contains(all, "first") || !strings.Contains(all, "second\n") || !strings.HasSuffix(all, "status: exited, exit code: 7") {
		t.Fatalf("later reads: %q", all)
	}
	if _, err := runTool(t, jobTool{}, env, `{"job_id":"job-9"}`); err == nil || !strings.Contains(err.Error(), "job-1") {
		t.Errorf("unknown job: %v", err)
	}
}

func TestBackgroundJobKill(t *testing.T) {
	skipOnWindows(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dir := t.TempDir()
	env := tools.NewEnv(dir)
	defer env.State.Close()
	id := startBackground(t, env, `sleep 60 & echo $! > child.pid; echo up; wait`)
	if out := jobOutput(t, env, id, 10); !strings.Contains(out, "up") {
		t.Fatalf("got %q", out)
	}
	res, err := runTool(t, jobTool{}, env, `{"job_id":"`+id+`","kill":true}`)
	if err != nil || !strings.Contains(res.Content, "killed "+id) {
		t.Fatalf("kill: %q %v", res.Content, err)
	}
	waitGone(t, filepath.Join(dir, "child.pid"))
	if out := jobOutput(t, env, id, 1); !strings.HasSuffix(out, "status: killed") {
		t.Fatalf("after kill: %q", out)
	}
	res, err = runTool(t, jobTool{}, env, `{"job_id":"`+id+`","kill":true}`)
	if err != nil || !strings.Contains(res.Content, "already ended") {
		t.Fatalf("second kill: %q %v", res.Content, err)
	}
}

func TestBackgroundJobsDieWithSession(t *testing.T) {
	skipOnWindows(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dir := t.TempDir()
	env := tools.NewEnv(dir)
	startBackground(t, env, `sleep 60 & echo $! > a.pid; wait`)
	startBackground(t, env, `echo $$ > b.pid; exec sleep 60`)
	// A forked (child) session has its own jobs: closing it leaves these.
	child := env.Fork()
	if _, err := runTool(t, jobTool{}, child, `{"job_id":"job-1"}`); err == nil {
		t.Error("a child session sees its parent's job")
	}
	child.State.Close()
	// The shell creates a pid file before it writes the pid: wait for a
	// whole line.
	for _, f := range []string{"a.pid", "b.pid"} {
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if b, err := os.ReadFile(filepath.Join(dir, f)); err == nil && strings.HasSuffix(string(b), "\n") || time.Now().After(deadline) {
				break
			}
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "b.pid"))
	if pid, _ := strconv.Atoi(strings.TrimSpace(string(b))); pid == 0 || processGone(pid) {
		t.Fatalf("job gone before its session closed (pid %q)", b)
	}
	start := time.Now()
	if err := env.State.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > bashPipeGrace+3*time.Second {
		t.Errorf("close took %s", d)
	}
	waitGone(t, filepath.Join(dir, "a.pid"))
	waitGone(t, filepath.Join(dir, "b.pid"))
	if _, err := runTool(t, bashTool{}, env, `{"command":"true","run_in_background":true}`); err == nil {
		t.Error("a job started after the session closed")
	}
}

func TestBackgroundJobWaitHonoursContext(t *testing.T) {
	skipOnWindows(t)
	env := tools.NewEnv(t.TempDir())
	defer env.State.Close()
	id := startBackground(t, env, `sleep 60`)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := jobTool{}.Execute(ctx, env, json.RawMessage(`{"job_id":"`+id+`","wait_seconds":30}`))
	if err == nil || time.Since(start) > 5*time.Second {
		t.Fatalf("wait ignored the context: %v after %s", err, time.Since(start))
	}
	// A wait with no output and no end returns after wait_seconds.
	start = time.Now()
	if out := jobOutput(t, env, id, 0.3); out != "(no new output)\nstatus: running" || time.Since(start) < 250*time.Millisecond {
		t.Fatalf("got %q after %s", out, time.Since(start))
	}
}

func TestJobBufferDropsOldest(t *testing.T) {
	b := newJobBuffer(10)
	b.Write([]byte("0123456789abcdef"))
	if got := b.read(); got != "[... 6 bytes of output dropped ...]\n6789abcdef" {
		t.Fatalf("got %q", got)
	}
	b.Write([]byte("xy"))
	if got := b.read(); got != "xy" {
		t.Fatalf("got %q", got)
	}
	if got := b.read(); got != "" {
		t.Fatalf("got %q", got)
	}
}

func TestJobAccessNeverAsks(t *testing.T) {
	for _, c := range []struct {
		args, detail string
		kind         tools.Kind
	}{{`{"job_id":"job-2"}`, "job-2", tools.KindRead}, {`{"job_id":"job-2","kill":true}`, "kill job-2", tools.KindOther}} {
		a, err := tools.Describe(jobTool{}, json.RawMessage(c.args))
		if err != nil || a.Kind != c.kind || !a.SessionOnly || a.Detail != c.detail {
			t.Errorf("%s: %+v %v", c.args, a, err)
		}
	}
	a, _ := tools.Describe(bashTool{}, json.RawMessage(`{"command":"make serve","run_in_background":true}`))
	if a.Kind != tools.KindExecute || a.Command != "make serve" {
		t.Errorf("background bash: %+v", a)
	}
}

func TestBackgroundJobsBounded(t *testing.T) {
	skipOnWindows(t)
	env := tools.NewEnv(t.TempDir())
	defer env.State.Close()
	for i := 0; i < jobMaxRunning; i++ {
		startBackground(t, env, `sleep 60`)
	}
	_, err := runTool(t, bashTool{}, env, `{"command":"sleep 60","run_in_background":true}`)
	if err == nil || !strings.Contains(err.Error(), "kill: true") {
		t.Fatalf("job %d started: %v", jobMaxRunning+1, err)
	}
	if _, err := runTool(t, jobTool{}, env, `{"job_id":"job-3","kill":true}`); err != nil {
		t.Fatal(err)
	}
	if id := startBackground(t, env, `sleep 60`); id != fmt.Sprintf("job-%d", jobMaxRunning+1) {
		t.Errorf("after a kill: %s", id)
	}
}

// TestBackgroundJobEvents: a job publishes started, then exited with its
// code and byte count; one still running when the session ends, killed.
func TestBackgroundJobEvents(t *testing.T) {
	skipOnWindows(t)
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	dir := t.TempDir()
	env := tools.NewEnv(dir)
	var rec events.Recorder
	env.Publish = rec.Publish
	id := startBackground(t, env, `while [ ! -e go ]; do sleep 0.05; done; printf abc; exit 4`)
	long := startBackground(t, env, `sleep 60`)
	if err := os.WriteFile(filepath.Join(dir, "go"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5 && !strings.Contains(jobOutput(t, env, id, 10), "exit code: 4"); i++ {
	}
	env.State.Close()
	var got []string
	for _, e := range rec.Events() {
		if e.Type != events.JobUpdate || e.Job == nil {
			t.Fatalf("unexpected event %+v", e)
		}
		if e.Job.State == events.JobOutput {
			continue
		}
		got = append(got, fmt.Sprintf("%s %s %d %d", e.Job.ID, e.Job.State, e.Job.Code, e.Job.Bytes))
	}
	want := []string{id + " started -1 0", long + " started -1 0", id + " exited 4 3", long + " killed -1 0"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events = %q, want %q", got, want)
	}
}
