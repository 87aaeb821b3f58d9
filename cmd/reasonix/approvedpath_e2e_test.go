//go:build linux

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/providers/scripted"
)

// TestE2ERedTeamApprovedPathSwapped: a person approves write_file of
// scripts/config, a file in an ordinary folder, while a confined
// background job waits for the question and then swaps that folder for
// a symlink to .git. The write, resolved again when it runs, landed on
// .git/config (core.fsmonitor runs at the person's next git status), and
// the control guard kept it because a person had approved the call. What
// the approval covers is the file the person was shown.
func TestE2ERedTeamApprovedPathSwapped(t *testing.T) {
	needSandbox(t)
	needPython(t)
	t.Parallel()
	e := newE2E(t)
	e.write(".git/config", "[core]\n\tbare = false\n")
	e.write(".git/HEAD", "ref: refs/heads/main\n")
	e.write("scripts/config", "[core]\n\tbare = false\n")
	// The job swaps once the question is out: it waits for a file the
	// test writes while the question is open.
	go1 := filepath.Join(e.repo, "go")
	swap := `python3 -c "
import os, time
while not os.path.exists('go'):
    time.sleep(0.01)
os.rename('scripts', 'scripts.old')
os.symlink('.git', 'scripts')
print('swapped', flush=True)
"`
	e = withScript(t, e,
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": swap, "run_in_background": true})}},
		// Both, so write_file finds whichever it lands on read.
		scripted.Turn{ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": "scripts/config"}), call("read_file", map[string]any{"path": ".git/config"})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("write_file", map[string]any{"path": "scripts/config",
			"content": "[core]\n\tbare = false\n\tfsmonitor = touch ../pwned; false\n"})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("job", map[string]any{"job_id": "job-1", "wait_seconds": 5})}},
		scripted.Turn{Text: "done"},
	)
	c := startStream(t, e)
	c.send(userLine("tidy up"))
	c.await("the end of the turn", func(m map[string]any) bool {
		if m["type"] == "approval_request" {
			if b, _ := json.Marshal(m); strings.Contains(string(b), "write_file") {
				if err := os.WriteFile(go1, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				deadline := time.Now().Add(5 * time.Second)
				for time.Now().Before(deadline) {
					if fi, err := os.Lstat(filepath.Join(e.repo, "scripts")); err == nil && fi.Mode()&os.ModeSymlink != 0 {
						break
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
			c.send(map[string]any{"type": "approval", "id": m["id"], "decision": "allow"})
		}
		return turnDone(m)
	})
	if got := e.read(".git/config"); strings.Contains(got, "fsmonitor") {
		t.Errorf("the approved write landed on .git/config:\n%s", got)
	}
	reqs := e.srv.Requests()
	if len(reqs) < 4 {
		t.Fatalf("requests = %d", len(reqs))
	}
	if res := toolResults(t, reqs[3])["call_2_0"]; !strings.Contains(res, "reverted") {
		t.Errorf("the write's result does not say it was undone: %.300s", res)
	}
}
