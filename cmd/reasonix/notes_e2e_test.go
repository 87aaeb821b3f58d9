package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// TestE2EShellLineKeptForTheNextRun: a ! line given to `run --continue`
// runs without a model, and its command and output ride in the session's
// next turn even when that turn comes from another process.
func TestE2EShellLineKeptForTheNextRun(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{Text: "Hello."},
		scripted.Turn{Text: "It printed the marker."},
	)
	if r := e.run("", "run", "hello"); r.code != 0 {
		t.Fatalf("first run: %d %s", r.code, r.stderr)
	}
	r := e.run("", "run", "--continue", "!echo SHELL-MARK-42")
	if r.code != 0 || !strings.Contains(r.stdout+r.stderr, "SHELL-MARK-42") {
		t.Fatalf("! line: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if n := len(e.srv.Requests()); n != 1 {
		t.Fatalf("the ! line called the model: %d requests", n)
	}
	r = e.run("", "run", "--continue", "what did it print?")
	if r.code != 0 {
		t.Fatalf("third run: %d %s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	last := messagesOf(t, reqs[len(reqs)-1])
	if !bytes.Contains(last, []byte("echo SHELL-MARK-42")) || bytes.Count(last, []byte("SHELL-MARK-42")) < 2 {
		t.Errorf("the next run's turn lacks the ! line and its output: %s", last)
	}
	// Once carried, the note is not repeated.
	if bytes.Count(last, []byte("echo SHELL-MARK-42")) != 1 {
		t.Errorf("the note was carried more than once: %s", last)
	}
	assertPrefixStable(t, reqs)
}
