package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/providers/scripted"
)

type wireMsg struct {
	Role       string `json:"role"`
	Content    string `json:"content"`
	ToolCallID string `json:"tool_call_id"`
	ToolCalls  []struct {
		ID string `json:"id"`
	} `json:"tool_calls"`
}

func wireMessages(t *testing.T, body []byte) []wireMsg {
	t.Helper()
	var req struct{ Messages []wireMsg }
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	return req.Messages
}

// TestE2EContinueAfterSIGKILL: a session killed mid-turn (in the middle of
// a bash call) is continued by a new process; its first request holds
// every complete earlier message, the first prompt included, and no tool
// call without a result.
func TestE2EContinueAfterSIGKILL(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "echo step-one"})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "sleep 30"})}},
		scripted.Turn{Text: "never reached"},
	)
	// Killed once the second call is in the file (the bash sleep runs).
	dir := filepath.Join(e.repo, ".reasonix", "sessions")
	e.killRun(t, "the second call never reached the session file", 100*time.Millisecond, func(string) bool {
		files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		if len(files) != 1 {
			return false
		}
		b, _ := os.ReadFile(files[0])
		return bytes.Contains(b, []byte("sleep 30"))
	}, "run", "--yolo", "FIRST-PROMPT do two things")

	withScript(t, e, scripted.Turn{Text: "Continued."})
	r := e.run("", "run", "--continue", "go on")
	if r.code != 0 || !strings.Contains(r.stdout, "Continued.") {
		t.Fatalf("continue: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %d", len(reqs))
	}
	msgs := wireMessages(t, reqs[0])
	var roles []string
	pending := map[string]bool{}
	for _, m := range msgs {
		roles = append(roles, m.Role)
		for _, c := range m.ToolCalls {
			pending[c.ID] = true
		}
		if m.Role == "tool" {
			if !pending[m.ToolCallID] {
				t.Errorf("a tool result without its call: %s", m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
		}
	}
	if len(pending) != 0 {
		t.Errorf("tool calls without results: %v", pending)
	}
	want := "system user assistant tool assistant tool user"
	if got := strings.Join(roles, " "); got != want {
		t.Fatalf("messages %s, want %s", got, want)
	}
	if !strings.Contains(msgs[1].Content, "FIRST-PROMPT") || !strings.Contains(msgs[3].Content, "step-one") ||
		!strings.Contains(msgs[5].Content, "interrupted") || msgs[6].Content != "go on" {
		t.Errorf("history %+v", msgs)
	}
	// The same session went on: one file, one id.
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("session files %v, want the one continued", files)
	}
	l, err := store.Load(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if l.Meta.Turns != 2 || !strings.HasPrefix(l.Meta.Title, "FIRST-PROMPT") || store.Turns(l.Messages) != 2 {
		t.Errorf("meta %+v", l.Meta)
	}
	if h := l.Header; !strings.HasPrefix(h.Title, "FIRST-PROMPT") || h.Cwd != e.repo || h.Model != "test-model" || h.Role != "executor" || h.Created.IsZero() {
		t.Errorf("header %+v", h)
	}

	// sessions lists it, as text and as JSON.
	r = e.run("", "sessions", "--json")
	var list []map[string]any
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &list) != nil || len(list) != 1 {
		t.Fatalf("sessions --json: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	for _, k := range []string{"id", "title", "model", "created", "updated", "turns"} {
		if _, ok := list[0][k]; !ok {
			t.Errorf("sessions --json lacks %q: %v", k, list[0])
		}
	}
	if r = e.run("", "sessions"); r.code != 0 || !strings.Contains(r.stdout, "FIRST-PROMPT") {
		t.Errorf("sessions: exit %d %s", r.code, r.stdout)
	}
}

// TestE2EResumeForkAndBadInput: --resume by prefix, fork at a turn, and
// damaged or unknown sessions: exit 2 with a clear message, nothing
// rewritten.
func TestE2EResumeForkAndBadInput(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "one"}, scripted.Turn{Text: "two"})
	if r := e.run("", "run", "first question"); r.code != 0 {
		t.Fatalf("first: %d %s", r.code, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(e.repo, ".reasonix", "sessions", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("files %v", files)
	}
	id := strings.TrimSuffix(filepath.Base(files[0]), ".jsonl")
	if r := e.run("", "run", "--resume", id[:len(id)-10], "second question"); r.code != 0 || !strings.Contains(r.stdout, "two") {
		t.Fatalf("resume by prefix: %d %s %s", r.code, r.stdout, r.stderr)
	}
	msgs := wireMessages(t, e.srv.Requests()[1])
	if len(msgs) != 4 || msgs[1].Content != "first question" || msgs[2].Content != "one" {
		t.Errorf("resumed request %+v", msgs)
	}

	// Fork before turn 2: the new session holds turn 1 only.
	r := e.run("", "fork", id, "--at", "2")
	forked := strings.TrimSpace(r.stdout)
	if r.code != 0 || forked == "" || forked == id {
		t.Fatalf("fork: %d %q %s", r.code, r.stdout, r.stderr)
	}
	fl, err := store.Load(filepath.Join(e.repo, ".reasonix", "sessions", forked+".jsonl"))
	if err != nil || store.Turns(fl.Messages) != 1 || fl.Header.ForkOf != id+"@2" {
		t.Fatalf("fork: %v %+v", err, fl)
	}
	if r := e.run("", "fork", id, "--at", "9"); r.code != 2 || !strings.Contains(r.stderr, "has 2 turn(s)") {
		t.Errorf("fork past the end: %d %s", r.code, r.stderr)
	}

	// Unknown id and damaged file.
	if r := e.run("", "run", "--resume", "nope", "x"); r.code != 2 || !strings.Contains(r.stderr, `no session "nope"`) {
		t.Errorf("unknown id: %d %s", r.code, r.stderr)
	}
	before, _ := os.ReadFile(files[0])
	damaged := append(append([]byte(nil), before[:len(before)/2]...), []byte("\nGARBAGE LINE\n")...)
	damaged = append(damaged, before[len(before)/2:]...)
	if err := os.WriteFile(files[0], damaged, 0o644); err != nil {
		t.Fatal(err)
	}
	r = e.run("", "run", "--resume", id, "x")
	if r.code != 2 || !strings.Contains(r.stderr, filepath.Base(files[0])+":") {
		t.Errorf("damaged: %d %s", r.code, r.stderr)
	}
	if after, _ := os.ReadFile(files[0]); !bytes.Equal(after, damaged) {
		t.Error("a damaged session file was rewritten")
	}
}

// TestE2ERewindUndoesEditsAndBash: an edit_file edit and files created by
// bash in two turns are undone by `rewind --to 1`, which also cuts the
// conversation back; `rewind --undo` brings both back.
func TestE2ERewindUndoesEditsAndBash(t *testing.T) {
	t.Parallel()
	const orig = "package a\n\nconst X = 1\n"
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{
			call("edit_file", map[string]any{"path": "a.go", "old_string": "X = 1", "new_string": "X = 2"}),
			call("bash", map[string]any{"command": "echo made > made.txt"}),
		}},
		scripted.Turn{Text: "Turn one done."},
		scripted.Turn{ToolCalls: []scripted.Call{
			call("bash", map[string]any{"command": "echo two > two.txt"}),
			call("move_file", map[string]any{"source": "keep.txt", "destination": "moved.txt"}),
		}},
		scripted.Turn{Text: "Turn two done."},
	)
	e.write("a.go", orig)
	e.write("keep.txt", "kept\n")
	e.write(".gitignore", "build/\n")
	e.write("build/out.bin", "ignored output\n")
	if r := e.run("", "run", "--yolo", "change X and make a file"); r.code != 0 {
		t.Fatalf("turn 1: %d %s", r.code, r.stderr)
	}
	if r := e.run("", "run", "--yolo", "--continue", "more"); r.code != 0 {
		t.Fatalf("turn 2: %d %s", r.code, r.stderr)
	}
	if e.read("a.go") == orig || e.read("made.txt") != "made\n" || e.read("two.txt") != "two\n" {
		t.Fatal("the turns did not change the workspace")
	}
	e.write("build/out.bin", "rebuilt\n") // ignored: a rewind leaves it alone

	r := e.run("", "rewind", "--to", "1")
	if r.code != 0 {
		t.Fatalf("rewind: %d %s", r.code, r.stderr)
	}
	for _, want := range []string{"restored a.go", "removed made.txt", "removed two.txt", "removed moved.txt", "created keep.txt"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("rewind output lacks %q:\n%s", want, r.stdout)
		}
	}
	if got := e.read("a.go"); got != orig {
		t.Errorf("a.go after rewind: %q", got)
	}
	for _, f := range []string{"made.txt", "two.txt"} {
		if _, err := os.Stat(filepath.Join(e.repo, f)); err == nil {
			t.Errorf("%s survived the rewind", f)
		}
	}
	if e.read("keep.txt") != "kept\n" || e.read("build/out.bin") != "rebuilt\n" {
		t.Error("rewind did not restore a removed file or touched an ignored one")
	}
	files, _ := filepath.Glob(filepath.Join(e.repo, ".reasonix", "sessions", "*.jsonl"))
	l, err := store.Load(files[0])
	if err != nil || store.Turns(l.Messages) != 0 {
		t.Fatalf("conversation after rewind: %v, %d turns", err, store.Turns(l.Messages))
	}

	// Past the first turn, or to a turn that does not exist: exit 2,
	// nothing changed.
	if r := e.run("", "rewind", "--to", "3"); r.code != 2 || !strings.Contains(r.stderr, "no turns to rewind") {
		t.Errorf("rewind of an emptied session: %d %s", r.code, r.stderr)
	}

	r = e.run("", "rewind", "--undo")
	if r.code != 0 {
		t.Fatalf("undo: %d %s", r.code, r.stderr)
	}
	if e.read("a.go") == orig || e.read("made.txt") != "made\n" || e.read("two.txt") != "two\n" {
		t.Error("undo did not bring the changes back")
	}
	if _, err := os.Stat(filepath.Join(e.repo, "keep.txt")); err == nil || e.read("moved.txt") != "kept\n" {
		t.Error("undo did not redo the move")
	}
	l, _ = store.Load(files[0])
	if store.Turns(l.Messages) != 2 {
		t.Errorf("conversation after undo: %d turns", store.Turns(l.Messages))
	}
	if r := e.run("", "rewind", "--to", "7"); r.code != 2 || !strings.Contains(r.stderr, "has 2 turn(s)") {
		t.Errorf("rewind past the end: %d %s", r.code, r.stderr)
	}
	if r := e.run("", "rewind", "--undo"); r.code != 2 || !strings.Contains(r.stderr, "no rewind to undo") {
		t.Errorf("second undo: %d %s", r.code, r.stderr)
	}
}

// TestE2ERewindFilesOnlyAndConversationOnly: each flag restores one side
// and leaves the other as it is.
func TestE2ERewindFilesOnlyAndConversationOnly(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("write_file", map[string]any{"path": "new.txt", "content": "from turn one\n"})}},
		scripted.Turn{Text: "Wrote it."},
	)
	if r := e.run("", "run", "--yolo", "write new.txt"); r.code != 0 {
		t.Fatalf("turn: %d %s", r.code, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(e.repo, ".reasonix", "sessions", "*.jsonl"))
	turns := func() int {
		l, err := store.Load(files[0])
		if err != nil {
			t.Fatal(err)
		}
		return store.Turns(l.Messages)
	}
	exists := func() bool { _, err := os.Stat(filepath.Join(e.repo, "new.txt")); return err == nil }

	if r := e.run("", "rewind", "--conversation-only", "--to", "1"); r.code != 0 || r.stdout != "" {
		t.Fatalf("conversation-only: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if !exists() || turns() != 0 {
		t.Errorf("conversation-only: file kept %v, turns %d (want true, 0)", exists(), turns())
	}
	if r := e.run("", "rewind", "--undo"); r.code != 0 || turns() != 1 {
		t.Fatalf("undo: %d %s, turns %d", r.code, r.stderr, turns())
	}
	r := e.run("", "rewind", "--files-only", "--to", "1")
	if r.code != 0 || !strings.Contains(r.stdout, "removed new.txt") {
		t.Fatalf("files-only: %d %q %s", r.code, r.stdout, r.stderr)
	}
	if exists() || turns() != 1 {
		t.Errorf("files-only: file kept %v, turns %d (want false, 1)", exists(), turns())
	}
	if r := e.run("", "rewind", "--files-only", "--conversation-only"); r.code != 2 {
		t.Errorf("both flags: exit %d", r.code)
	}
}

// TestE2EContinueSkipsPlanWorkers: a plan's worker sessions are not the
// user's conversation: `run --continue` after `run --plan` goes on with
// the conversation the user had, not with the last step's worker, and
// `sessions` names a worker by its step instead of its brief.
func TestE2EContinueSkipsPlanWorkers(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{Text: "first answer"},
		scripted.Turn{Match: "assigned step s1 ", Text: "did s1"},
		scripted.Turn{Match: "assigned step s2 ", Text: "did s2"},
		scripted.Turn{Text: "continued"},
	)
	if r := e.run("", "run", "CONV-ONE question"); r.code != 0 {
		t.Fatalf("first: %d %s", r.code, r.stderr)
	}
	e.savePlan("p1", map[string]any{"goal": "two steps", "steps": []map[string]any{
		{"id": "s1", "title": "First step"}, {"id": "s2", "title": "Second step", "depends_on": []string{"s1"}}}})
	if r := e.run("", "run", "--plan", "p1"); r.code != 0 {
		t.Fatalf("run --plan: %d %s", r.code, r.stderr)
	}
	r := e.run("", "run", "--continue", "go on")
	if r.code != 0 || !strings.Contains(r.stdout, "continued") {
		t.Fatalf("continue: %d %s %s", r.code, r.stdout, r.stderr)
	}
	reqs := e.srv.Requests()
	msgs := string(messagesOf(t, reqs[len(reqs)-1]))
	if !strings.Contains(msgs, "CONV-ONE question") || strings.Contains(msgs, "assigned step") {
		t.Errorf("--continue did not go on with the user's conversation: %.600s", msgs)
	}
	r = e.run("", "sessions")
	if r.code != 0 || strings.Contains(r.stdout, "You are one of several workers") || !strings.Contains(r.stdout, "Second step") {
		t.Errorf("sessions names a worker by its brief, not its step: %s", r.stdout)
	}
}

// TestE2EKilledBatchKeepsFinishedResults: an assistant message whose
// calls run one after another (a write, then a long bash) is killed
// during the bash; the write's result, which was in before the bash
// started, is in the continued history as it was, not "interrupted".
func TestE2EKilledBatchKeepsFinishedResults(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{
			call("write_file", map[string]any{"path": "out1.txt", "content": "one\n"}),
			call("bash", map[string]any{"command": "touch started; sleep 30"}),
		}},
		scripted.Turn{Text: "never reached"},
	)
	e.killRun(t, "the bash call never started", 100*time.Millisecond, func(string) bool {
		_, err := os.Stat(filepath.Join(e.repo, "started"))
		return err == nil
	}, "run", "--yolo", "write then wait")

	withScript(t, e, scripted.Turn{Text: "Continued."})
	if r := e.run("", "run", "--continue", "go on"); r.code != 0 {
		t.Fatalf("continue: exit %d\n%s", r.code, r.stderr)
	}
	var tools []string
	for _, m := range wireMessages(t, e.srv.Requests()[0]) {
		if m.Role == "tool" {
			tools = append(tools, m.Content)
		}
	}
	if len(tools) != 2 || !strings.Contains(tools[0], "created out1.txt") || !strings.Contains(tools[1], "interrupted") {
		t.Errorf("tool results after the kill: %q; want the write's own result, then the bash interrupted", tools)
	}
	if e.read("out1.txt") != "one\n" {
		t.Error("the written file is gone")
	}
}

// TestE2EContinueAfterSIGKILLInTheFirstAnswer: a run killed while the
// model's very first answer is still streaming keeps its prompt: the
// session file holds the header and the prompt from the time the first
// request went out, so --continue finds the conversation and sends the
// prompt again with the new turn.
func TestE2EContinueAfterSIGKILLInTheFirstAnswer(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: strings.Repeat("slow words ", 200), ChunkSize: 4, ChunkDelayMS: 50})
	// Killed once the answer streams (its first words are printed).
	e.killRun(t, "the answer never started streaming", 0, func(stdout string) bool {
		return len(e.srv.Requests()) > 0 && strings.Contains(stdout, "slow words")
	}, "run", "FIRST-PROMPT remember the octopus")

	dir := filepath.Join(e.repo, ".reasonix", "sessions")
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("session files %v after the kill, want one", files)
	}
	l, err := store.Load(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Notices) != 0 || l.Meta.Turns != 1 || !strings.HasPrefix(l.Header.Title, "FIRST-PROMPT") {
		t.Errorf("the killed session: header %+v meta %+v notices %v", l.Header, l.Meta, l.Notices)
	}

	withScript(t, e, scripted.Turn{Text: "Continued."})
	r := e.run("", "run", "--continue", "what was it?")
	if r.code != 0 || !strings.Contains(r.stdout, "Continued.") {
		t.Fatalf("continue: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %d", len(reqs))
	}
	var roles []string
	msgs := wireMessages(t, reqs[0])
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, " "); got != "system user user" ||
		!strings.Contains(msgs[1].Content, "FIRST-PROMPT remember the octopus") || msgs[2].Content != "what was it?" {
		t.Errorf("the continued request's messages: %s\n%+v", got, msgs)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl")); len(files) != 1 {
		t.Errorf("session files %v, want the one continued", files)
	}
}

// killRun starts `reasonix args...` in the repository, waits up to 20 s
// for reached (told what the command printed so far) and then settle,
// and kills the command with SIGKILL; when reached never comes, the test
// fails naming what, with the command's stderr.
func (e *e2e) killRun(t *testing.T, what string, settle time.Duration, reached func(stdout string) bool, args ...string) {
	t.Helper()
	cmd := exec.Command(binPath, args...)
	cmd.Dir, cmd.Env = e.repo, e.env
	// Read while the command writes: exec's copying goroutine fills them.
	var stdout, stderr lockedBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for !reached(stdout.String()) {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("%s; stderr:\n%s", what, stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(settle)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
}

// lockedBuffer is a bytes.Buffer a test may read while a running
// command's output is copied into it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
