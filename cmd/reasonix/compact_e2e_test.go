package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/internal/llmtest"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/providers/scripted"
)

// TestE2ELongRunCompactsAndKeepsFacts drives one long stream-json run of
// 40 turns, each reading a 6 KB file, against a model with a 12,000-token
// window. The run compacts at least three times and never sends a
// request over the window; every user fact is still verbatim in the last
// request; requests between compactions extend each other byte for byte;
// the archive holds the folded originals. Then `reasonix compact` folds
// by hand, and the history tool finds a folded tool result in the archive.
func TestE2ELongRunCompactsAndKeepsFacts(t *testing.T) {
	t.Parallel()
	const turns, window = 40, 12000
	fact := func(i int) string { return fmt.Sprintf("FACT-%03d: the deploy key for stage %d is K%x", i, i, i*7919) }
	var script []scripted.Turn
	for i := 1; i <= turns; i++ {
		m := fmt.Sprintf("FACT-%03d:", i)
		script = append(script,
			scripted.Turn{Match: m, ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": fmt.Sprintf("big-%02d.txt", i)})}},
			scripted.Turn{Match: m, Text: fmt.Sprintf("noted stage %d", i)})
	}
	for i := 1; i <= 30; i++ {
		script = append(script, scripted.Turn{Match: "Transcript to digest", Text: fmt.Sprintf("digest %d: read the stage files; nothing changed.", i)})
	}
	e := newE2E(t, script...)
	for i := 1; i <= turns; i++ {
		e.write(fmt.Sprintf("big-%02d.txt", i), fmt.Sprintf("STAGE-%02d-MARKER\n", i)+strings.Repeat(fmt.Sprintf("line of stage %02d data\n", i), 260))
	}
	cfg := filepath.Join(e.home, "small.toml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("[[providers]]\nname = \"small\"\nkind = \"openai\"\nbase_url = %q\napi_key = \"k\"\nmodel = \"small-model\"\ncontext_window = %d\n\n[permissions]\nmode = \"auto\"\n", e.srv.URL(), window)), 0o644); err != nil {
		t.Fatal(err)
	}
	var in strings.Builder
	for i := 1; i <= turns; i++ {
		line, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]string{"role": "user", "content": fact(i)}})
		in.Write(line)
		in.WriteByte('\n')
	}
	r := e.run(in.String(), "run", "--config", cfg, "--model", "small", "--input-format", "stream-json", "--output-format", "stream-json")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	if n := strings.Count(r.stdout, `"type":"compaction"`); n < 3 {
		t.Errorf("%d compaction events, want at least 3", n)
	}

	var sess, digests [][]byte
	for _, body := range e.srv.Requests() {
		if bytes.Contains(body, []byte("Transcript to digest")) {
			digests = append(digests, body)
		} else {
			sess = append(sess, body)
		}
	}
	if len(sess) != 2*turns {
		t.Fatalf("%d session requests, want %d", len(sess), 2*turns)
	}
	for i, body := range sess {
		var req struct {
			Messages json.RawMessage `json:"messages"`
			Tools    json.RawMessage `json:"tools"`
		}
		if err := json.Unmarshal(body, &req); err != nil {
			t.Fatal(err)
		}
		if est := (len(req.Messages) + len(req.Tools)) / 4; est > window {
			t.Errorf("request %d is ~%d tokens, over the %d-token window", i, est, window)
		}
	}
	resets := 0
	for i := 1; i < len(sess); i++ {
		prev := bytes.TrimSuffix(messagesOf(t, sess[i-1]), []byte("]"))
		if !bytes.HasPrefix(messagesOf(t, sess[i]), prev) {
			resets++
		}
	}
	list, _, err := store.List(filepath.Join(e.repo, ".reasonix", "sessions"), false)
	if err != nil || len(list) != 1 {
		t.Fatalf("sessions %v %v", list, err)
	}
	l, err := store.Load(list[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	if l.Compactions < 3 || resets != l.Compactions || len(digests) != l.Compactions {
		t.Errorf("%d prefix resets, %d digest requests, %d compaction records; want equal and at least 3", resets, len(digests), l.Compactions)
	}
	last := string(messagesOf(t, sess[len(sess)-1]))
	for i := 1; i <= turns; i++ {
		if !strings.Contains(last, fact(i)) {
			t.Errorf("the last request lost %q", fact(i))
		}
	}
	if !strings.Contains(last, "[digest of earlier work in this session]") {
		t.Error("the last request has no digest")
	}
	arch, err := os.ReadFile(store.ArchivePath(list[0].Path))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"STAGE-01-MARKER", "noted stage 1", `"type":"compaction"`} {
		if !bytes.Contains(arch, []byte(want)) {
			t.Errorf("the archive lacks %q", want)
		}
	}

	// By hand, then a search that only the archive can answer.
	e.srv = llmtest.Start(t, &scripted.Script{Turns: []scripted.Turn{
		{Match: "EXTRA-TURN", ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": "big-03.txt"})}},
		{Match: "EXTRA-TURN", Text: "read it again"},
		{Match: "Transcript to digest", Text: "digest by hand: stages read."},
		{Match: "Transcript to digest", Text: "another digest."},
		{Match: "STAGE-02", ToolCalls: []scripted.Call{call("history", map[string]any{"query": "STAGE-02-MARKER"})}},
		{Match: "STAGE-02", Text: "found it"},
	}})
	writeSmall := func() {
		data := fmt.Sprintf("[[providers]]\nname = \"small\"\nkind = \"openai\"\nbase_url = %q\napi_key = \"k\"\nmodel = \"small-model\"\ncontext_window = %d\n\n[permissions]\nmode = \"auto\"\n", e.srv.URL(), window)
		if err := os.WriteFile(cfg, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeSmall()
	if r = e.run("", "run", "--config", cfg, "--model", "small", "--continue", "EXTRA-TURN: read stage 3 again"); r.code != 0 {
		t.Fatalf("extra turn: exit %d\n%s", r.code, r.stderr)
	}
	l, err = store.Load(list[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	r = e.run("", "compact", "--config", cfg, "--model", "small", "--focus", "the stage keys")
	if r.code != 0 || !strings.Contains(r.stdout, "compacted "+list[0].ID) {
		t.Fatalf("compact: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if l2, err := store.Load(list[0].Path); err != nil || l2.Compactions != l.Compactions+1 {
		t.Errorf("after reasonix compact: %d compaction records, %v", l2.Compactions, err)
	}
	if reqs := e.srv.Requests(); !bytes.Contains(reqs[len(reqs)-1], []byte("focus on: the stage keys")) {
		t.Errorf("the digest request of reasonix compact lacks the focus:\n%.500s", reqs[len(reqs)-1])
	}
	r = e.run("", "run", "--config", cfg, "--model", "small", "--continue", "where was STAGE-02 read?")
	if r.code != 0 {
		t.Fatalf("history run: exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	got := string(messagesOf(t, reqs[len(reqs)-1]))
	if !strings.Contains(got, ".archive:") || !strings.Contains(got, "compacted away") {
		t.Errorf("the history tool did not find the archived result:\n%.2000s", got[max(0, len(got)-2000):])
	}
}

// TestE2EContextShowsTheWindow: `reasonix context` names the default
// model's window and the share of it the prefix takes; memory and
// history are among the tools, and a headless run refuses a memory save
// with the reason and writes nothing.
func TestE2EContextShowsTheWindow(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("memory", map[string]string{"operation": "save", "name": "deploy", "content": "Deploy with make ship."})}},
		scripted.Turn{Text: "could not save it"},
	)
	cfg := filepath.Join(e.home, "w.toml")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf("default_model = \"w\"\n[[providers]]\nname = \"w\"\nkind = \"openai\"\nbase_url = %q\napi_key = \"k\"\nmodel = \"wide\"\ncontext_window = 64000\n", e.srv.URL())), 0o644); err != nil {
		t.Fatal(err)
	}
	r := e.run("", "context", "--json", "--config", cfg)
	var rep contextReport
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil || r.code != 0 {
		t.Fatalf("context: exit %d %v\n%s", r.code, err, r.stderr)
	}
	if !strings.HasPrefix(rep.Model, "w/") || rep.Window != 64000 || rep.Percent != rep.TotalTokens*100/64000 || rep.Percent == 0 && rep.TotalTokens > 640 {
		t.Errorf("window fields = %q %d %d%% of %d tokens", rep.Model, rep.Window, rep.Percent, rep.TotalTokens)
	}
	var names []string
	for _, p := range rep.Parts {
		names = append(names, p.Tools...)
	}
	for _, want := range []string{"history", "memory", "job"} {
		if !strings.Contains(strings.Join(names, ","), want) {
			t.Errorf("tools %v lack %s", names, want)
		}
	}
	if r := e.run("", "context", "--config", cfg); !strings.Contains(r.stdout, ": 64000 tokens; the prefix takes") {
		t.Errorf("context text:\n%s", r.stdout)
	}

	r = e.run("", "run", "--config", cfg, "--yolo", "remember that we deploy with make ship")
	if r.code != 0 {
		t.Fatalf("run: exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	got := string(messagesOf(t, reqs[len(reqs)-1]))
	if !strings.Contains(got, "memory needs human approval every time") {
		t.Errorf("the model was not told why the memory save was refused:\n%.1500s", got)
	}
	if _, err := os.Stat(filepath.Join(e.repo, ".reasonix", "memory", "deploy.md")); err == nil {
		t.Error("a headless run saved a memory")
	}
}

// TestE2EGoalValidation: a goal turn that changed files runs the
// configured validation through the real bash tool; its failure goes back
// to the model, which fixes the file, and the goal ends once it passes.
// Each run is a validation event on the stream.
func TestE2EGoalValidation(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("write_file", map[string]any{"path": "x.txt", "content": "bad\n"})}},
		goalStatus("done", "wrote x"),
		scripted.Turn{Match: "NOT-GOOD-YET", ToolCalls: []scripted.Call{call("write_file", map[string]any{"path": "x.txt", "content": "good\n"})}},
		goalStatus("done", "fixed x"),
	)
	e.write("reasonix.toml", "[validation]\ncommand = \"grep -q good x.txt || { echo NOT-GOOD-YET; exit 4; }\"\n")
	r := e.run("", "run", "--output-format", "stream-json", "--goal", "make x.txt good")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	var runs []map[string]any
	for _, line := range strings.Split(r.stdout, "\n") {
		var ev struct {
			Type       string         `json:"type"`
			Validation map[string]any `json:"validation"`
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "validation" {
			runs = append(runs, ev.Validation)
		}
	}
	if len(runs) != 2 || runs[0]["passed"] == true || runs[0]["exit_code"] != float64(4) || runs[1]["passed"] != true {
		t.Fatalf("validation events = %v", runs)
	}
	if got := e.read("x.txt"); got != "good\n" {
		t.Errorf("x.txt = %q", got)
	}
	if !strings.Contains(r.stdout, "goal done after 1 turn (") {
		t.Errorf("goal did not end done:\n%.2000s", r.stdout)
	}
}

// TestE2EContextOverflowCompactsAndRetries: a model whose window Reasonix
// does not know (a local server: context_window unset, so nothing is
// compacted ahead of time) refuses a request as longer than its context,
// as vLLM, DeepSeek and OpenAI word it. The session learns the window
// from the error, folds its earlier work into a digest and sends the
// request again, instead of failing every turn from then on.
func TestE2EContextOverflowCompactsAndRetries(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": "big.txt"})}},
		scripted.Turn{Text: "noted the big file"},
	)
	e.write("big.txt", "BIG-MARKER\n"+strings.Repeat("a line of the big file\n", 600))
	if r := e.run("", "run", "FIRST-TURN read big.txt"); r.code != 0 {
		t.Fatalf("first: exit %d\n%s", r.code, r.stderr)
	}
	e.srv = llmtest.Start(t, &scripted.Script{Turns: []scripted.Turn{
		{Status: 400, ErrorBody: "This model's maximum context length is 4000 tokens. However, you requested 5200 tokens (4200 in the messages, 1000 in the completion). Please reduce the length of the messages or completion."},
		{Match: "Transcript to digest", Text: "DIGEST: read big.txt, a long file of repeated lines."},
		{Text: "recovered"},
	}})
	e.env = append(e.env, "REASONIX_BASE_URL="+e.srv.URL())
	r := e.run("", "run", "--continue", "SECOND-TURN what was in it?")
	if r.code != 0 || !strings.Contains(r.stdout, "recovered") {
		t.Fatalf("continue: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "4000") || !strings.Contains(r.stderr, "context_window") {
		t.Errorf("no notice naming the learned window and the key to set:\n%s", r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want the refused one, the digest and the retry", len(reqs))
	}
	last := string(messagesOf(t, reqs[2]))
	if strings.Contains(last, "BIG-MARKER") || !strings.Contains(last, "DIGEST: read big.txt") ||
		!strings.Contains(last, "FIRST-TURN") || !strings.Contains(last, "SECOND-TURN") {
		t.Errorf("the retried request is not the compacted conversation:\n%.1500s", last)
	}
}
