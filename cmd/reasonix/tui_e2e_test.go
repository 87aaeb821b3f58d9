package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/providers/scripted"
)

// tuiTerm is the real binary's interactive mode running in a detached tmux
// session of 120x40: keys go in with send-keys, the screen comes back with
// capture-pane, as a person would see it.
type tuiTerm struct {
	t    *testing.T
	e    *e2e
	sock string
}

// startTUI runs `reasonix ARGS...` in the e2e repository inside tmux. The
// wrapper script records whether the terminal settings were restored and
// the exit code, then keeps the pane open so both can be read.
func startTUI(t *testing.T, e *e2e, args ...string) *tuiTerm {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (.ci/run installs it): the terminal end-to-end tests need it")
	}
	dir := t.TempDir()
	tt := &tuiTerm{t: t, e: e, sock: filepath.Join(dir, "tmux.sock")}
	var env strings.Builder
	for _, kv := range e.env {
		fmt.Fprintf(&env, " %s", shellQuote(kv))
	}
	var argv strings.Builder
	for _, a := range args {
		fmt.Fprintf(&argv, " %s", shellQuote(a))
	}
	script := fmt.Sprintf(`#!/bin/sh
cd %s || exit 1
before=$(stty -g)
env -i TERM="$TERM"%s %s%s
code=$?
after=$(stty -g)
if [ "$before" = "$after" ]; then echo "TTY RESTORED"; else echo "TTY CHANGED"; fi
echo "EXIT CODE $code"
sleep 600
`, shellQuote(e.repo), env.String(), shellQuote(binPath), argv.String())
	run := filepath.Join(dir, "run.sh")
	if err := os.WriteFile(run, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	tt.tmux("-f", "/dev/null", "new-session", "-d", "-x", "120", "-y", "40", "-s", "rx", run)
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", tt.sock, "kill-server").Run() })
	tt.waitFor("Reasonix")
	return tt
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

func (tt *tuiTerm) tmux(args ...string) string {
	tt.t.Helper()
	out, err := exec.Command("tmux", append([]string{"-S", tt.sock}, args...)...).CombinedOutput()
	if err != nil {
		tt.t.Fatalf("tmux %v: %v\n%s", args, err, out)
	}
	return string(out)
}

// screen is what the pane shows now.
func (tt *tuiTerm) screen() string { return tt.tmux("capture-pane", "-p", "-t", "rx") }

// typeLine types text literally and presses Enter.
func (tt *tuiTerm) typeLine(text string) {
	tt.t.Helper()
	tt.tmux("send-keys", "-t", "rx", "-l", text)
	tt.keys("Enter")
}

// keys sends tmux key names (Enter, C-c, Escape, y).
func (tt *tuiTerm) keys(k ...string) {
	tt.t.Helper()
	tt.tmux(append([]string{"send-keys", "-t", "rx"}, k...)...)
}

// waitFor polls the screen until it shows every want, and returns it.
func (tt *tuiTerm) waitFor(want ...string) string {
	tt.t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		s := tt.screen()
		ok := true
		for _, w := range want {
			if !strings.Contains(s, w) {
				ok = false
				break
			}
		}
		if ok {
			return s
		}
		if time.Now().After(deadline) {
			tt.t.Fatalf("screen never showed %q; it shows:\n%s", want, s)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// quit leaves with /quit and checks the exit code and the terminal.
func (tt *tuiTerm) quit() {
	tt.t.Helper()
	tt.typeLine("/quit")
	tt.waitFor("EXIT CODE 0", "TTY RESTORED")
}

// TestTUIChatReadsAFileAndAnswers: a typed prompt reaches the model, the
// read_file call shows as one tool line and the scripted answer streams in;
// /quit exits 0 with the terminal restored. It starts with no arguments,
// as a person would.
func TestTUIChatReadsAFileAndAnswers(t *testing.T) {
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": "notes.txt"})}},
		scripted.Turn{Text: "The notes say: remember the milk.", ChunkSize: 4},
	)
	e.write("notes.txt", "remember the milk\n")
	tt := startTUI(t, e)
	tt.typeLine("what do my notes say?")
	s := tt.waitFor("› what do my notes say?", "✓ read_file notes.txt", "The notes say: remember the milk.")
	t.Logf("screen:\n%s", s)
	if !strings.Contains(s, "test-model") {
		t.Errorf("status line lacks the model:\n%s", s)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 || !bytes.Contains(reqs[1], []byte("remember the milk")) {
		t.Errorf("the file's content did not reach the model: %d requests", len(reqs))
	}
	tt.quit()
}
