package orchestrator

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/providers/scripted"
	"github.com/reasonix/reasonix/tools"
)

// TestSessionEndKillsBackgroundJobs: a background job the session started
// (and the child it forked) is killed and waited for when the session
// ends, while this process lives on; goleak (TestMain) checks that no
// waiting goroutine is left.
func TestSessionEndKillsBackgroundJobs(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX shell test")
	}
	h := newHarness(t, []scripted.Turn{
		{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "sleep 60 & echo $! > child.pid; echo up; wait", "run_in_background": true})}},
		{ToolCalls: []scripted.Call{call("job", map[string]any{"job_id": "job-1", "wait_seconds": 10})}},
		{Text: "started"},
	}, func(rt *Runtime) {
		for _, name := range []string{"bash", "job"} {
			tl, ok := tools.Builtin(name)
			if !ok {
				t.Fatalf("no %s tool", name)
			}
			rt.Tools.Add(tl)
		}
	})
	if _, err := h.coord.Run(context.Background(), "start a server"); err != nil {
		t.Fatal(err)
	}
	if m := joinEncoded(h.session("start a server").requests()[2]); !strings.Contains(string(m), "up") {
		t.Fatalf("job output not sent back: %s", m)
	}
	b, err := os.ReadFile(filepath.Join(h.ws, "child.pid"))
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid == 0 {
		t.Fatalf("no pid: %v %q", err, b)
	}
	deadline := time.Now().Add(3 * time.Second)
	for {
		out, err := exec.Command("ps", "-o", "stat=", "-p", strconv.Itoa(pid)).Output()
		if err != nil || strings.HasPrefix(strings.TrimSpace(string(out)), "Z") {
			break
		}
		if time.Now().After(deadline) {
			_ = exec.Command("kill", "-9", strconv.Itoa(pid)).Run()
			t.Fatalf("the job's child %d outlived its session", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
