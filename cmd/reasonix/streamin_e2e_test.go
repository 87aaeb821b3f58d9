package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/providers/scripted"
)

// streamClient drives `reasonix run --input-format stream-json` the way an
// editor or a CI job does: it writes JSON lines to stdin and reads events
// from stdout as they come.
type streamClient struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan map[string]any
	seen  []map[string]any
	exit  chan error
}

func startStream(t *testing.T, e *e2e, args ...string) *streamClient {
	t.Helper()
	cmd := exec.Command(binPath, append([]string{"run", "--input-format", "stream-json", "--output-format", "stream-json"}, args...)...)
	cmd.Dir, cmd.Env = e.repo, e.env
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &streamClient{t: t, cmd: cmd, stdin: stdin, lines: make(chan map[string]any, 256), exit: make(chan error, 1)}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"type": "UNPARSABLE", "raw": sc.Text()}
			}
			c.lines <- m
		}
		close(c.lines)
		c.exit <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("stderr:\n%s", stderr.String())
		}
	})
	return c
}

// finish closes stdin, reads what is left and fails the test unless
// the run then exits cleanly.
func (c *streamClient) finish() {
	c.t.Helper()
	c.stdin.Close()
	for range c.lines {
	}
	if err := <-c.exit; err != nil {
		c.t.Fatalf("exit: %v", err)
	}
}

func (c *streamClient) send(v any) {
	c.t.Helper()
	var line []byte
	if s, ok := v.(string); ok {
		line = []byte(s)
	} else {
		line, _ = json.Marshal(v)
	}
	if _, err := c.stdin.Write(append(line, '\n')); err != nil {
		c.t.Fatal(err)
	}
}

func userLine(content any) map[string]any {
	return map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": content}}
}

// await reads events until one satisfies match, failing after a timeout.
func (c *streamClient) await(what string, match func(map[string]any) bool) map[string]any {
	c.t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case m, ok := <-c.lines:
			if !ok {
				c.t.Fatalf("stdout closed before %s; saw %v", what, c.seen)
			}
			c.seen = append(c.seen, m)
			if m["type"] == "UNPARSABLE" {
				c.t.Fatalf("stdout line is not JSON: %v", m["raw"])
			}
			if match(m) {
				return m
			}
		case <-timeout:
			c.t.Fatalf("timed out waiting for %s; saw %v", what, c.seen)
		}
	}
}

// seenOrAwait returns the first event already read that satisfies
// match, else awaits one.
func (c *streamClient) seenOrAwait(what string, match func(map[string]any) bool) map[string]any {
	c.t.Helper()
	for _, m := range c.seen {
		if match(m) {
			return m
		}
	}
	return c.await(what, match)
}

func typed(typ string) func(map[string]any) bool {
	return func(m map[string]any) bool { return m["type"] == typ }
}

// turnDone matches the Done event of a top-level session (not a worker).
func turnDone(m map[string]any) bool { return m["type"] == "done" && m["parent"] == nil }

// lineDone matches the conversation's Done, which ends every stdin line
// (/plan included): not a subagent's, a plan worker's or the planner's.
func lineDone(m map[string]any) bool {
	return turnDone(m) && m["step"] == nil && m["role"] == "executor"
}

func TestE2EStreamJSONInputDrivesApprovals(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "touch out1.txt"})}},
		scripted.Turn{Text: "Skipped it."},
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "touch out2.txt"})}},
		scripted.Turn{Text: "Wrote it."},
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "touch out3.txt"})}},
	)
	e.write("reasonix.toml", "[permissions]\nask = [\"Bash(touch:*)\"]\n")
	c := startStream(t, e)

	// Line 1: a turn. Line 2: not JSON: an error naming the line, and the
	// run goes on.
	c.send(userLine("write out1"))
	c.send("this is not json")
	bad := c.await("the error for line 2", typed("error"))
	if bad["line"] != float64(2) || !strings.Contains(fmt.Sprint(bad["message"]), "not a JSON object") {
		t.Errorf("error event %v", bad)
	}
	// The request may have come before the error for line 2.
	req := c.seenOrAwait("the first approval request", typed("approval_request"))
	if req["tool"] != "bash" || req["id"] == "" || !strings.Contains(fmt.Sprint(req["command"]), "touch out1.txt") {
		t.Fatalf("approval request %v", req)
	}
	if got := fmt.Sprint(req["choices"]); got != "[allow allow_session allow_always deny]" {
		t.Errorf("choices %s", got)
	}
	// An answer that names no pending request is an error, not a crash.
	c.send(map[string]any{"type": "approval", "id": "ap-404", "decision": "allow"})
	if bad := c.await("the error for a wrong id", typed("error")); bad["line"] != float64(3) {
		t.Errorf("wrong id error %v", bad)
	}
	c.send(map[string]any{"type": "approval", "id": req["id"], "decision": "deny", "reason": "not now"})
	c.await("the first turn's end", turnDone)
	if _, err := os.Stat(filepath.Join(e.repo, "out1.txt")); err == nil {
		t.Error("a denied command ran")
	}

	// A turn given as content blocks; allowed this time.
	c.send(userLine([]map[string]any{{"type": "text", "text": "write out2"}}))
	req = c.await("the second approval request", typed("approval_request"))
	c.send(map[string]any{"type": "approval", "id": req["id"], "decision": "allow"})
	c.await("the second turn's end", turnDone)
	if _, err := os.Stat(filepath.Join(e.repo, "out2.txt")); err != nil {
		t.Errorf("an allowed command did not run: %v", err)
	}

	// An interrupt while a question is open withdraws it and ends the turn.
	c.send(userLine("write out3"))
	req = c.await("the third approval request", typed("approval_request"))
	c.send(map[string]any{"type": "interrupt"})
	res := c.await("the withdrawn request", typed("approval_resolved"))
	if res["id"] != req["id"] || res["choice"] != nil {
		t.Errorf("withdrawn %v", res)
	}
	c.await("the interrupt notice", func(m map[string]any) bool {
		return m["type"] == "notice" && m["text"] == "turn interrupted"
	})

	// stdin closed: the run ends, successfully.
	c.finish()
	if _, err := os.Stat(filepath.Join(e.repo, "out3.txt")); err == nil {
		t.Error("an interrupted command ran")
	}

	// The model saw the refusal with the person's reason, and turns
	// extended one conversation byte for byte.
	reqs := e.srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("requests = %d, want 5", len(reqs))
	}
	if !strings.Contains(string(reqs[1]), "denied by the user: not now") {
		t.Errorf("request 2 lacks the refusal:\n%s", reqs[1])
	}
	if !strings.Contains(string(reqs[2]), "write out2") || !strings.Contains(string(reqs[2]), "Skipped it.") {
		t.Errorf("turn 2 is not in the same conversation:\n%s", reqs[2])
	}
	assertPrefixStable(t, reqs)
}

func TestE2EStreamJSONInputUsage(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "unused"})
	if r := e.run("", "run", "--input-format", "stream-json", "hi"); r.code != 2 || !strings.Contains(r.stderr, "needs --output-format stream-json") {
		t.Errorf("text output: exit %d %s", r.code, r.stderr)
	}
	if r := e.run("", "run", "--input-format", "xml", "--output-format", "stream-json"); r.code != 2 {
		t.Errorf("bad format: exit %d %s", r.code, r.stderr)
	}
	// A positional prompt is the first turn; closed stdin ends the run.
	r := e.run("", "run", "--input-format", "stream-json", "--output-format", "stream-json", "hello")
	if r.code != 0 || !strings.Contains(r.stdout, `"text":"unused"`) {
		t.Errorf("positional turn: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}

// TestE2EAskTool: over stream-json the ask tool's question is an event
// the client answers with an answer line; in a plain headless run no one
// can answer and the model is told to proceed on a stated assumption.
func TestE2EAskTool(t *testing.T) {
	t.Parallel()
	ask := call("ask", map[string]any{"question": "Which colour should the button be?", "choices": []string{"blue", "green"}})
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{ask}},
		scripted.Turn{Text: "Made it green."},
	)
	c := startStream(t, e)
	c.send(userLine("style the button"))
	q := c.await("the question", typed("question"))
	if q["text"] != "Which colour should the button be?" || fmt.Sprint(q["choices"]) != "[blue green]" || q["id"] == "" {
		t.Fatalf("question event %v", q)
	}
	c.send(map[string]any{"type": "answer", "id": "q-404", "text": "green"})
	c.await("the error for a wrong id", typed("error"))
	c.send(map[string]any{"type": "answer", "id": q["id"], "text": "green, like the logo"})
	if r := c.await("the resolved question", typed("question_resolved")); r["answer"] != "green, like the logo" {
		t.Errorf("resolved %v", r)
	}
	c.await("the turn's end", turnDone)
	c.finish()
	if reqs := e.srv.Requests(); len(reqs) != 2 || !strings.Contains(string(reqs[1]), "The user answered: green, like the logo") {
		t.Errorf("the model did not get the answer: %d requests", len(reqs))
	}

	// Headless: no one to ask.
	h := newE2E(t, scripted.Turn{ToolCalls: []scripted.Call{ask}}, scripted.Turn{Text: "Assumption: blue, the project's colour."})
	r := h.run("", "run", "style the button")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(string(h.srv.Requests()[1]), "No one to ask in this run") || !strings.Contains(string(h.srv.Requests()[1]), `Assumption:`) {
		t.Errorf("the model was not told to proceed on a stated assumption:\n%s", h.srv.Requests()[1])
	}
	if !strings.Contains(r.stderr, "no one to ask; proceeding on a stated assumption") {
		t.Errorf("the transcript does not label the assumption:\n%s", r.stderr)
	}
}

// TestE2EStreamJSONPlanWorkersAskOneAtATime: a /plan line over stream-json
// asks for the plan's approval, then its two workers run at once and each
// wants a command the gate asks about; the questions come one at a time,
// each naming its step, and both steps land once answered. A second /plan
// rejected is a notice, not a failure.
func TestE2EStreamJSONPlanWorkersAskOneAtATime(t *testing.T) {
	t.Parallel()
	plan := map[string]any{"goal": "two marker files", "steps": []map[string]any{
		{"id": "s1", "title": "touch one", "files": []string{"one.txt"}},
		{"id": "s2", "title": "touch two", "files": []string{"two.txt"}},
	}}
	turns := []scripted.Turn{{ToolCalls: []scripted.Call{call("submit_plan", plan)}}}
	turns = append(turns, stepWorker("s1", call("bash", map[string]any{"command": "touch one.txt"}))...)
	turns = append(turns, stepWorker("s2", call("bash", map[string]any{"command": "touch two.txt"}))...)
	turns = append(turns, scripted.Turn{ToolCalls: []scripted.Call{call("submit_plan", plan)}})
	e := newE2E(t, turns...)
	e.write("reasonix.toml", "[agent]\nmax_parallel = 2\n")
	c := startStream(t, e)
	c.send(userLine("/plan make two marker files"))
	ap := c.await("the plan's approval", typed("approval_request"))
	if ap["tool"] != "plan" || ap["subject"] != "two marker files" || !strings.Contains(fmt.Sprint(ap["reason"]), "touch two") ||
		fmt.Sprint(ap["choices"]) != "[allow deny]" {
		t.Fatalf("plan approval %v", ap)
	}
	c.send(map[string]any{"type": "approval", "id": ap["id"], "decision": "allow"})

	// Both workers start; the first to reach its command asks.
	first := c.await("a worker's approval", typed("approval_request"))
	running := map[string]bool{}
	for _, m := range c.seen {
		if r, ok := m["step_result"].(map[string]any); ok && m["type"] == "step_update" && r["status"] == "running" {
			running[fmt.Sprint(r["step"])] = true
		}
	}
	step1 := fmt.Sprint(first["step"])
	if first["tool"] != "bash" || (step1 != "s1" && step1 != "s2") {
		t.Fatalf("worker approval %v", first)
	}
	// The other worker's question waits behind it: give it time to come
	// (it would, were questions not queued) before answering.
	other := map[string]string{"s1": "s2", "s2": "s1"}[step1]
	deadline := time.After(3 * time.Second)
	for !running[other] {
		select {
		case m := <-c.lines:
			c.seen = append(c.seen, m)
			if r, ok := m["step_result"].(map[string]any); ok && m["type"] == "step_update" && r["status"] == "running" {
				running[fmt.Sprint(r["step"])] = true
			}
			if m["type"] == "approval_request" {
				t.Fatalf("a second question came while the first was open: %v", m)
			}
		case <-deadline:
			t.Fatalf("step %s never ran alongside %s; saw %v", other, step1, c.seen)
		}
	}
	time.Sleep(500 * time.Millisecond)
	for len(c.lines) > 0 {
		m := <-c.lines
		c.seen = append(c.seen, m)
		if m["type"] == "approval_request" {
			t.Fatalf("a second question came while the first was open: %v", m)
		}
	}
	c.send(map[string]any{"type": "approval", "id": first["id"], "decision": "allow"})
	second := c.await("the other worker's approval", typed("approval_request"))
	if second["step"] != other || !strings.Contains(fmt.Sprint(second["command"]), map[string]string{"s1": "one", "s2": "two"}[other]) {
		t.Fatalf("second approval %v, want step %s", second, other)
	}
	c.send(map[string]any{"type": "approval", "id": second["id"], "decision": "allow"})
	if d := c.await("the plan's end", lineDone); d["text"] != "done" {
		t.Errorf("the plan's line ended %v", d)
	}
	for _, f := range []string{"one.txt", "two.txt"} {
		if _, err := os.Stat(filepath.Join(e.repo, f)); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	// Every worker event carried its step.
	for _, m := range c.seen {
		if m["type"] == "tool_end" && m["role"] == "executor" && m["step"] == nil {
			t.Errorf("a worker's tool event without its step: %v", m)
		}
	}

	// A rejected plan runs nothing and is not a failure.
	c.send(userLine("/plan again"))
	ap = c.await("the second plan's approval", typed("approval_request"))
	c.send(map[string]any{"type": "approval", "id": ap["id"], "decision": "deny"})
	if d := c.await("the rejected plan's end", lineDone); d["text"] != "rejected" {
		t.Errorf("a rejected plan's line ended %v", d)
	}
	c.await("the rejection", func(m map[string]any) bool {
		return m["type"] == "notice" && m["text"] == "plan rejected; nothing was changed"
	})
	c.finish()
}

// TestE2EPlannerAsksBeforePlanning: the planner clears up an ambiguous
// goal with the ask tool before it plans, and the plan it submits
// follows the answer.
func TestE2EPlannerAsksBeforePlanning(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("ask", map[string]any{"question": "Store the cache in memory or in sqlite?", "choices": []string{"memory", "sqlite"}})}},
		scripted.Turn{Match: "The user answered: sqlite", ToolCalls: []scripted.Call{call("submit_plan", map[string]any{
			"goal": "cache in sqlite", "steps": []map[string]any{{"id": "s1", "title": "add the sqlite cache"}}})}},
		scripted.Turn{Match: "assigned step s1 ", ToolCalls: []scripted.Call{call("ask", map[string]any{"question": "Which table name?"})}},
		scripted.Turn{Match: "The user answered: kv", Text: "added the kv table"},
		scripted.Turn{ToolCalls: []scripted.Call{call("submit_plan", map[string]any{
			"goal": "cache again", "steps": []map[string]any{{"id": "s1", "title": "add it"}}})}},
	)
	c := startStream(t, e)
	c.send(userLine("/plan add a cache"))
	q := c.await("the planner's question", typed("question"))
	if q["role"] != "planner" || q["text"] != "Store the cache in memory or in sqlite?" {
		t.Fatalf("question %v", q)
	}
	c.send(map[string]any{"type": "answer", "id": q["id"], "text": "sqlite"})
	ap := c.await("the plan's approval", typed("approval_request"))
	if ap["tool"] != "plan" || ap["subject"] != "cache in sqlite" {
		t.Fatalf("plan approval %v", ap)
	}
	c.send(map[string]any{"type": "approval", "id": ap["id"], "decision": "allow"})
	// A plan worker's question names its step.
	q = c.await("the worker's question", typed("question"))
	if q["step"] != "s1" || q["role"] != "executor" || q["text"] != "Which table name?" {
		t.Fatalf("worker question %v", q)
	}
	c.send(map[string]any{"type": "answer", "id": q["id"], "text": "kv"})
	if d := c.await("the plan's end", lineDone); d["text"] != "done" {
		t.Errorf("the plan's line ended %v", d)
	}

	c.send(userLine("/plan again"))
	ap = c.await("the second plan's approval", typed("approval_request"))
	c.send(map[string]any{"type": "approval", "id": ap["id"], "decision": "deny"})
	c.await("the rejection", func(m map[string]any) bool {
		return m["type"] == "notice" && m["text"] == "plan rejected; nothing was changed"
	})
	c.finish()
	reqs := e.srv.Requests()
	if len(reqs) != 5 || !strings.Contains(string(reqs[0]), `"name":"ask"`) {
		t.Errorf("the planner was not offered ask (%d requests)", len(reqs))
	}
}

// TestE2ESubagentAsks: a general subagent offered the ask tool (and told
// how to use it) puts its question through the one question path: the
// event names the subagent's role and its parent session, the answer
// reaches the subagent, and its report reaches the caller.
func TestE2ESubagentAsks(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("task", map[string]any{"agent": "general", "description": "rename the flag", "prompt": "SUBJOB rename the --fast flag"})}},
		scripted.Turn{Match: "SUBJOB", ToolCalls: []scripted.Call{call("ask", map[string]any{"question": "Rename --fast to --quick or --turbo?", "choices": []string{"--quick", "--turbo"}})}},
		scripted.Turn{Match: "The user answered: --quick", Text: "Renamed to --quick."},
		scripted.Turn{Match: "Renamed to --quick.", Text: "The subagent renamed it."},
	)
	c := startStream(t, e)
	c.send(userLine("rename the fast flag"))
	var q map[string]any
	for q == nil {
		m := c.await("the subagent's question", func(m map[string]any) bool {
			return m["type"] == "question" || m["type"] == "approval_request"
		})
		if m["type"] == "approval_request" { // the posture may ask about the delegation
			c.send(map[string]any{"type": "approval", "id": m["id"], "decision": "allow"})
			continue
		}
		q = m
	}
	start := c.seenOrAwait("the conversation's start", func(m map[string]any) bool {
		return m["type"] == "session_start" && m["role"] == "executor"
	})
	if q["role"] != "general" || q["parent"] != start["session"] || q["session"] == start["session"] ||
		q["text"] != "Rename --fast to --quick or --turbo?" || fmt.Sprint(q["choices"]) != "[--quick --turbo]" {
		t.Fatalf("question %v, want one from the general subagent of %v", q, start["session"])
	}
	c.send(map[string]any{"type": "answer", "id": q["id"], "text": "--quick"})
	if d := c.await("the turn's end", lineDone); d["text"] == "error" {
		t.Fatalf("turn ended %v", d)
	}
	c.finish()
	reqs := e.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	sub := reqs[1]
	if names := strings.Join(toolNames(t, sub), ","); !strings.Contains(names, "ask") {
		t.Errorf("the general subagent was not offered ask: %s", names)
	}
	if sys := systemOf(t, sub); strings.Contains(sys, "cannot ask") || !strings.Contains(sys, "ask tool") {
		t.Errorf("the general subagent's prompt does not agree with its ask tool:\n%s", sys)
	}
	if !strings.Contains(string(reqs[3]), "Renamed to --quick.") {
		t.Errorf("the subagent's report did not reach the caller")
	}
}
