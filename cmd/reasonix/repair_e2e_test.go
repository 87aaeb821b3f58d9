package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// jsonRun is the part of `--output-format json` these tests read.
type jsonRun struct {
	Answer    string `json:"answer"`
	ToolCalls []struct {
		Name    string          `json:"name"`
		Args    json.RawMessage `json:"args"`
		Summary string          `json:"summary"`
		IsError bool            `json:"is_error"`
	} `json:"tool_calls"`
	Usage struct {
		PromptTokens    int     `json:"prompt_tokens"`
		CacheHitTokens  int     `json:"cache_hit_tokens"`
		CacheMissTokens int     `json:"cache_miss_tokens"`
		CacheHitRatio   float64 `json:"cache_hit_ratio"`
	} `json:"usage"`
	Cost     *float64 `json:"cost"`
	Currency string   `json:"currency"`
	Session  string   `json:"session"`
	Error    string   `json:"error"`
}

func decodeRun(t *testing.T, r runResult) jsonRun {
	t.Helper()
	var out jsonRun
	if err := json.Unmarshal([]byte(r.stdout), &out); err != nil {
		t.Fatalf("json output: %v\n%s\nstderr: %s", err, r.stdout, r.stderr)
	}
	return out
}

// assistantAt returns the last assistant message of request i.
func assistantAt(t *testing.T, body []byte) map[string]any {
	t.Helper()
	var msgs []map[string]any
	if err := json.Unmarshal(messagesOf(t, body), &msgs); err != nil {
		t.Fatal(err)
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i]["role"] == "assistant" {
			return msgs[i]
		}
	}
	t.Fatalf("no assistant message in %s", body)
	return nil
}

func TestE2ECallOnlyInReasoningIsRecovered(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{Reasoning: `The user wants notes. I will call {"name": "read_file", "arguments": {"path": "notes.txt"}} to see them.`, ChunkSize: 7},
		scripted.Turn{Text: "The notes say remember-the-milk."},
	)
	e.write("notes.txt", "remember-the-milk\n")
	r := e.run("", "run", "what do the notes say?")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "read_file notes.txt") || !strings.Contains(r.stderr, "recovered 1 tool call(s) written in the reasoning") {
		t.Errorf("the call in the reasoning did not run:\n%s", r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	if !strings.Contains(string(messagesOf(t, reqs[1])), "remember-the-milk") {
		t.Errorf("file content not sent back: %s", messagesOf(t, reqs[1]))
	}
	a := assistantAt(t, reqs[1])
	if calls, _ := a["tool_calls"].([]any); len(calls) != 1 {
		t.Errorf("the recovered call is not in the history: %v", a)
	}
	assertPrefixStable(t, reqs)
}

func TestE2EDSMLMarkupInTextIsRecoveredAndHidden(t *testing.T) {
	t.Parallel()
	markup := "Let me read it.\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"read_file\">\n" +
		"<｜DSML｜parameter name=\"path\" string=\"true\">notes.txt</｜DSML｜parameter>\n" +
		"</｜DSML｜invoke>\n</｜DSML｜function_calls>"
	e := newE2E(t,
		scripted.Turn{Text: markup, ChunkSize: 4},
		scripted.Turn{Text: "It says remember-the-milk."},
	)
	e.write("notes.txt", "remember-the-milk\n")
	r := e.run("", "run", "read the notes")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if strings.Contains(r.stdout, "DSML") || strings.Contains(r.stdout, "｜") {
		t.Errorf("markup reached the screen:\n%s", r.stdout)
	}
	if !strings.Contains(r.stdout, "Let me read it.") || !strings.Contains(r.stdout, "It says remember-the-milk.") {
		t.Errorf("answer text missing:\n%s", r.stdout)
	}
	if !strings.Contains(r.stderr, "read_file notes.txt") {
		t.Errorf("the DSML call did not run:\n%s", r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d", len(reqs))
	}
	a := assistantAt(t, reqs[1])
	if c, _ := a["content"].(string); strings.Contains(c, "DSML") || !strings.Contains(c, "Let me read it.") {
		t.Errorf("history keeps the markup: %q", c)
	}
	assertPrefixStable(t, reqs)
}

func TestE2ETruncatedArguments(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		// Cut after the last value: closing the brace loses nothing.
		scripted.Turn{ToolCalls: []scripted.Call{{Name: "read_file", Arguments: `{"path": "notes.txt"`}}, FinishReason: "length", ChunkSize: 5},
		// Cut inside the content: closing it would write half a file.
		scripted.Turn{ToolCalls: []scripted.Call{{Name: "write_file", Arguments: `{"path": "out.txt", "content": "hello wor`}}, FinishReason: "length"},
		scripted.Turn{Text: "done"},
	)
	e.write("notes.txt", "remember-the-milk\n")
	r := e.run("", "run", "--yolo", "--output-format", "json", "copy the notes")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	out := decodeRun(t, r)
	if len(out.ToolCalls) != 2 {
		t.Fatalf("tool calls = %+v", out.ToolCalls)
	}
	var args bytes.Buffer
	json.Compact(&args, out.ToolCalls[0].Args)
	if out.ToolCalls[0].IsError || args.String() != `{"path":"notes.txt"}` {
		t.Errorf("repairable call: %+v", out.ToolCalls[0])
	}
	if !out.ToolCalls[1].IsError || out.ToolCalls[1].Summary != "arguments cut off" {
		t.Errorf("cut call: %+v", out.ToolCalls[1])
	}
	if _, err := os.Stat(filepath.Join(e.repo, "out.txt")); err == nil {
		t.Error("a half-written file was created")
	}
	reqs := e.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("requests = %d", len(reqs))
	}
	if !strings.Contains(string(messagesOf(t, reqs[1])), "remember-the-milk") {
		t.Errorf("repaired read did not run: %s", messagesOf(t, reqs[1]))
	}
	if a := assistantAt(t, reqs[1]); !strings.Contains(string(mustJSON(a)), `{\"path\": \"notes.txt\"}`) {
		t.Errorf("history does not hold the repaired arguments: %v", a)
	}
	if !strings.Contains(string(messagesOf(t, reqs[2])), "were cut off after") {
		t.Errorf("model not told the arguments were cut: %s", messagesOf(t, reqs[2]))
	}
	assertPrefixStable(t, reqs)
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

func TestE2EStormBreaker(t *testing.T) {
	t.Parallel()
	read := call("read_file", map[string]any{"path": "notes.txt"})
	var turns []scripted.Turn
	for range 5 {
		turns = append(turns, scripted.Turn{ToolCalls: []scripted.Call{read}})
	}
	turns = append(turns, scripted.Turn{Text: "stuck"})
	e := newE2E(t, turns...)
	e.write("notes.txt", "remember-the-milk\n")
	r := e.run("", "run", "--output-format", "json", "read the notes")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	out := decodeRun(t, r)
	if len(out.ToolCalls) != 5 {
		t.Fatalf("tool calls = %+v", out.ToolCalls)
	}
	for i, c := range out.ToolCalls {
		blocked := c.Summary == "repeated call not run"
		if want := i >= 3; blocked != want {
			t.Errorf("read %d: blocked = %v, want %v (%+v)", i+1, blocked, want, c)
		}
	}
	reqs := e.srv.Requests()
	if !strings.Contains(string(messagesOf(t, reqs[4])), "Change approach") {
		t.Errorf("the model was not told to change approach: %s", messagesOf(t, reqs[4]))
	}
	assertPrefixStable(t, reqs)
}

func TestE2EStormBreakerRereadAfterEditRuns(t *testing.T) {
	t.Parallel()
	read := call("read_file", map[string]any{"path": "notes.txt"})
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{read}},
		scripted.Turn{ToolCalls: []scripted.Call{read}},
		scripted.Turn{ToolCalls: []scripted.Call{read}},
		scripted.Turn{ToolCalls: []scripted.Call{call("edit_file", map[string]any{"path": "notes.txt", "old_string": "milk", "new_string": "eggs"})}},
		scripted.Turn{ToolCalls: []scripted.Call{read}},
		scripted.Turn{Text: "now eggs"},
	)
	e.write("notes.txt", "remember-the-milk\n")
	r := e.run("", "run", "--yolo", "--output-format", "json", "change milk to eggs")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	out := decodeRun(t, r)
	if len(out.ToolCalls) != 5 {
		t.Fatalf("tool calls = %+v", out.ToolCalls)
	}
	for i, c := range out.ToolCalls {
		if c.IsError {
			t.Errorf("call %d failed: %+v", i+1, c)
		}
	}
	if reqs := e.srv.Requests(); !strings.Contains(string(messagesOf(t, reqs[5])), "remember-the-eggs") {
		t.Errorf("the re-read did not run")
	}
}

func TestE2ECutTextAnswerContinuedOnce(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{Text: "First half of a long", FinishReason: "length"},
		scripted.Turn{Text: " answer, and still", FinishReason: "length"},
	)
	r := e.run("", "run", "explain")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d, want 2 (one continuation, not two)", len(reqs))
	}
	if !strings.Contains(string(messagesOf(t, reqs[1])), "cut off at the output token limit") {
		t.Errorf("no continuation turn: %s", messagesOf(t, reqs[1]))
	}
	if !strings.Contains(r.stdout, "First half of a long") || !strings.Contains(r.stdout, "answer, and still") {
		t.Errorf("stdout: %q", r.stdout)
	}
	assertPrefixStable(t, reqs)
}
