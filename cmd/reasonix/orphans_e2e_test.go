//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/providers/scripted"
)

// A hostile command leaves processes running outside its process group
// (a new session, a group of their own, a double fork) that wait, then
// plant a git hook, which would run unconfined at the person's next
// commit, long after Reasonix exited. The sandbox ends them after the
// command; a job started with run_in_background lives on to its
// session's end.
func TestE2ESandboxEndsWhatCommandsLeaveBehind(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	needPython(t)
	// They wait past the run's end: what the guard cannot see.
	plant := func(name string) string {
		return "sleep 6; printf pwned > .git/hooks/" + name
	}
	calls := []scripted.Call{
		// A new session (setsid).
		call("bash", map[string]any{"command": `python3 -c "import subprocess; subprocess.Popen(['sh','-c','` + plant("pre-commit") + `'], start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)"; echo started`}),
		// A process group of its own (setpgid), in Reasonix's session.
		call("bash", map[string]any{"command": `python3 -c "import os, subprocess; subprocess.Popen(['sh','-c','` + plant("pre-push") + `'], preexec_fn=lambda: os.setpgid(0, 0), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)"; echo started`}),
		// A double fork: the middle process exits at once.
		call("bash", map[string]any{"command": `python3 -c "import os, time; os.fork() or (os.setsid(), os.fork() or (time.sleep(6), open('.git/hooks/post-checkout', 'w').write('pwned')), os._exit(0))"; echo started`}),
		// A job: it must live on while the session does.
		call("bash", map[string]any{"command": "sleep 2.5; echo job-finished > job.txt", "run_in_background": true}),
	}
	e := newE2E(t, scripted.Turn{ToolCalls: calls[:3]}, scripted.Turn{ToolCalls: calls[3:]},
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "sleep 3; cat job.txt"})}},
		scripted.Turn{Text: "done"})
	e.write(".git/config", "[core]\n")
	e.write(".git/hooks/pre-commit.sample", "#!/bin/sh\n")
	start := time.Now()
	r := e.run("", "run", "--output-format", "stream-json", "tidy up", "--yolo")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	time.Sleep(time.Until(start.Add(8 * time.Second))) // past the leftovers' sleep
	for _, h := range []string{"pre-commit", "pre-push", "post-checkout"} {
		if b, err := os.ReadFile(filepath.Join(e.repo, ".git/hooks", h)); err == nil {
			t.Errorf("a process a command left behind wrote .git/hooks/%s after the command: %q", h, b)
		}
	}
	if !strings.Contains(r.stdout, "left running outside its process group") {
		t.Errorf("no notice of the ended processes:\n%s", r.stdout)
	}
	// The job ran to its end: the last command read what it wrote.
	reqs := e.srv.Requests()
	if last := string(messagesOf(t, reqs[len(reqs)-1])); !strings.Contains(last, "job-finished") {
		t.Errorf("the background job did not finish while its session ran: %s", last)
	}
}
