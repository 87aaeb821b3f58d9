package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/internal/llmtest"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/providers/scripted"
)

// TestE2EReplayAsScriptReproducesTheRun records a session, replays it on
// the terminal, turns it into a script, runs the same prompt against that
// script in a fresh copy of the repository and gets the same tool calls;
// then diffs the two sessions.
func TestE2EReplayAsScriptReproducesTheRun(t *testing.T) {
	t.Parallel()
	u := &providers.Usage{PromptTokens: 900, CompletionTokens: 40, CacheHitTokens: 600, CacheMissTokens: 300}
	e := newE2E(t,
		scripted.Turn{Reasoning: "Look first.", Text: "Reading.", ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": "notes.txt"})}, Usage: u},
		scripted.Turn{ToolCalls: []scripted.Call{call("edit_file", map[string]any{"path": "notes.txt", "old_string": "milk", "new_string": "eggs"})}, Usage: u},
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "grep -c eggs notes.txt"})}, Usage: u},
		scripted.Turn{Text: "Swapped milk for eggs.", Usage: u},
	)
	const original = "remember-the-milk\n"
	e.write("notes.txt", original)
	first := e.run("", "run", "--yolo", "--output-format", "json", "swap milk for eggs")
	if first.code != 0 {
		t.Fatalf("exit %d\n%s", first.code, first.stderr)
	}
	a := decodeRun(t, first)

	r := e.run("", "replay", a.Session)
	if r.code != 0 {
		t.Fatalf("replay: exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"> swap milk for eggs", "✻ Look first.", "Reading.", "→ read_file notes.txt", "→ edit_file notes.txt",
		"→ bash grep -c eggs notes.txt", "✓ bash: 1", "Swapped milk for eggs.", "4 request(s)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("replay lacks %q:\n%s", want, r.stdout)
		}
	}
	if n := len(e.srv.Requests()); n != 4 {
		t.Errorf("replay called the model: %d requests", n)
	}

	r = e.run("", "replay", "--as-script", a.Session)
	if r.code != 0 {
		t.Fatalf("replay --as-script: exit %d\n%s", r.code, r.stderr)
	}
	script, err := scripted.Parse([]byte(r.stdout))
	if err != nil {
		t.Fatalf("not a script: %v\n%s", err, r.stdout)
	}
	if len(script.Turns) != 4 || script.Turns[0].Usage == nil || script.Turns[0].Reasoning != "Look first." {
		t.Fatalf("script turns: %+v", script.Turns)
	}

	// The same prompt against the script, in a fresh repository.
	e2 := newE2E(t)
	srv := llmtest.Start(t, script)
	e2.env = append(e2.env, "REASONIX_BASE_URL="+srv.URL())
	e2.write("notes.txt", original)
	second := e2.run("", "run", "--yolo", "--output-format", "json", "swap milk for eggs")
	if second.code != 0 {
		t.Fatalf("replayed run: exit %d\n%s", second.code, second.stderr)
	}
	b := decodeRun(t, second)
	if len(a.ToolCalls) != 3 || len(b.ToolCalls) != len(a.ToolCalls) {
		t.Fatalf("tool calls: %d then %d", len(a.ToolCalls), len(b.ToolCalls))
	}
	for i := range a.ToolCalls {
		var x, y any
		json.Unmarshal(a.ToolCalls[i].Args, &x)
		json.Unmarshal(b.ToolCalls[i].Args, &y)
		if a.ToolCalls[i].Name != b.ToolCalls[i].Name || !reflect.DeepEqual(x, y) || a.ToolCalls[i].IsError != b.ToolCalls[i].IsError {
			t.Errorf("call %d: %+v then %+v", i, a.ToolCalls[i], b.ToolCalls[i])
		}
	}
	if b.Answer != a.Answer || e2.read("notes.txt") != e.read("notes.txt") {
		t.Errorf("the replayed run ended differently: %q / %q", b.Answer, e2.read("notes.txt"))
	}

	// diff compares the two runs (the second session copied beside the first).
	src := filepath.Join(e2.repo, ".reasonix", "sessions", b.Session+".jsonl")
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	e.write(filepath.Join(".reasonix", "sessions", b.Session+".jsonl"), string(data))
	r = e.run("", "diff", "--json", a.Session, b.Session)
	if r.code != 0 {
		t.Fatalf("diff: exit %d\n%s", r.code, r.stderr)
	}
	var d map[string]struct {
		Session string `json:"session"`
		Turns   []struct {
			Tools []string `json:"tools"`
		} `json:"turns"`
		Total struct {
			CacheHitTokens int `json:"cache_hit_tokens"`
		} `json:"total"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &d); err != nil {
		t.Fatalf("diff json: %v\n%s", err, r.stdout)
	}
	if d["a"].Session != a.Session || d["b"].Session != b.Session || len(d["a"].Turns) != 1 ||
		strings.Join(d["a"].Turns[0].Tools, ",") != "read_file,edit_file,bash" ||
		!reflect.DeepEqual(d["a"].Turns, d["b"].Turns) || d["a"].Total.CacheHitTokens != 2400 || d["b"].Total.CacheHitTokens != 2400 {
		t.Errorf("diff = %+v", d)
	}
	r = e.run("", "diff", a.Session, b.Session)
	for _, want := range []string{"turn 1", "A: read_file, edit_file, bash", "B: read_file, edit_file, bash", "3600 in (2400 cached, 66.7% hit)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("diff text lacks %q:\n%s", want, r.stdout)
		}
	}
	if strings.Contains(r.stdout, "≠") {
		t.Errorf("identical runs shown as different:\n%s", r.stdout)
	}
}
