package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"github.com/reasonix/reasonix/providers/scripted"
)

// TestE2EJSONOutputSaysHowTheRunStopped: --output-format json always says
// how the run stopped: "error" (exit 1) when the provider failed, and
// "interrupted", with the error "interrupted" rather than a Go context
// message, when SIGINT ended it (exit 130); a program reading the object
// need not parse the error text or know the exit code.
func TestE2EJSONOutputSaysHowTheRunStopped(t *testing.T) {
	t.Parallel()
	type final struct {
		Stop, Error, Session string
	}
	e := newE2E(t,
		scripted.Turn{Status: 400, ErrorBody: "bad request for this model"},
	)
	r := e.run("", "run", "--output-format", "json", "fail please")
	var got final
	if err := json.Unmarshal([]byte(r.stdout), &got); err != nil {
		t.Fatalf("not JSON (exit %d): %v\n%s", r.code, err, r.stdout)
	}
	if r.code != 1 || got.Stop != "error" || got.Error == "" {
		t.Errorf("provider failure: exit %d, stop %q, error %q; want 1, \"error\" and the error", r.code, got.Stop, got.Error)
	}

	if runtime.GOOS == "windows" {
		return // SIGINT delivery is unix-only
	}
	out := interruptMidAnswer(t, e, "json")
	got = final{}
	if err := json.Unmarshal(out.Bytes(), &got); err != nil {
		t.Fatalf("not JSON after SIGINT: %v\n%s", err, out.String())
	}
	if got.Stop != "interrupted" || got.Error != "interrupted" || got.Session == "" {
		t.Errorf("after SIGINT: stop %q, error %q, session %q; want \"interrupted\" twice and the session", got.Stop, got.Error, got.Session)
	}
}

// TestE2EStreamJSONDoneSaysInterrupted: the done event of a stream-json
// run ended by SIGINT says "interrupted" (its text and its error), and a
// provider failure's says "error", where they said nothing and
// "env: context canceled".
func TestE2EStreamJSONDoneSaysInterrupted(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("SIGINT delivery is unix-only")
	}
	type doneEvent struct{ Type, Text, Error string }
	lastDone := func(stdout []byte) doneEvent {
		var d doneEvent
		for _, l := range bytes.Split(stdout, []byte("\n")) {
			var ev doneEvent
			if json.Unmarshal(l, &ev) == nil && ev.Type == "done" {
				d = ev
			}
		}
		return d
	}
	e := newE2E(t, scripted.Turn{Status: 400, ErrorBody: "bad request for this model"})
	r := e.run("", "run", "--output-format", "stream-json", "fail please")
	if d := lastDone([]byte(r.stdout)); r.code != 1 || d.Text != "error" || d.Error == "" {
		t.Errorf("provider failure: exit %d, done %+v; want 1 and text \"error\"", r.code, d)
	}
	out := interruptMidAnswer(t, e, "stream-json")
	if d := lastDone(out.Bytes()); d.Text != "interrupted" || d.Error != "interrupted" {
		t.Errorf("done after SIGINT = %+v, want text and error \"interrupted\"\n%s", d, out.String())
	}
}

// interruptMidAnswer runs `reasonix run --output-format format` in e
// against a slowly streamed answer, interrupts it once the answer has
// started, checks it exits 130, and returns its stdout.
func interruptMidAnswer(t *testing.T, e *e2e, format string) *bytes.Buffer {
	t.Helper()
	e2 := withScript(t, e, scripted.Turn{Text: "slow answer that goes on and on and on", ChunkSize: 2, ChunkDelayMS: 300})
	cmd := exec.Command(binPath, "run", "--output-format", format, "wait")
	cmd.Dir, cmd.Env = e2.repo, e2.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for len(e2.srv.Requests()) < 1 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(400 * time.Millisecond)
	_ = cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("exit = %v, want 130; stderr %s", err, errb.String())
	}
	return &out
}
