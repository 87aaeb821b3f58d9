package orchestrator

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/reasonix/reasonix/agents"
	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/providers/scripted"
)

// sizedProvider serves a script with a context window: every request
// reports prompt_tokens = encoded bytes / 4, digest requests are answered
// here, and a request over the window fails the test.
type sizedProvider struct {
	t      *testing.T
	inner  providers.Provider
	window int

	mu      sync.Mutex
	reqs    []providers.Request // session requests, in order
	digests int
	over    int
	// bodies are the digest requests' transcripts.
	bodies []string
}

func (p *sizedProvider) Name() string             { return "sized" }
func (p *sizedProvider) ContextWindow(string) int { return p.window }
func (p *sizedProvider) size(r providers.Request) int {
	return len(joinEncoded(r)) + len(r.EncodedTools)
}

func (p *sizedProvider) Stream(ctx context.Context, req providers.Request) (<-chan providers.Chunk, error) {
	tokens := p.size(req) / 4
	p.mu.Lock()
	if tokens > p.window {
		p.over++
	}
	digest := len(req.Messages) > 0 && req.Messages[0].Content == agents.DigestInstruction
	if digest {
		p.digests++
		p.bodies = append(p.bodies, req.Messages[len(req.Messages)-1].Content)
	} else {
		rec := req
		rec.Messages = append([]providers.Message(nil), req.Messages...)
		rec.Encoded = append(rec.Encoded[:0:0], req.Encoded...)
		p.reqs = append(p.reqs, rec)
	}
	n := p.digests
	p.mu.Unlock()
	u := &providers.Usage{PromptTokens: tokens, CompletionTokens: 10}
	if digest {
		ch := make(chan providers.Chunk, 1)
		ch <- providers.Chunk{Text: fmt.Sprintf("digest %d: read big.txt repeatedly; nothing changed.", n), Usage: u, FinishReason: "stop"}
		close(ch)
		return ch, nil
	}
	in, err := p.inner.Stream(ctx, req)
	if err != nil {
		return nil, err
	}
	out := make(chan providers.Chunk, 8)
	go func() {
		defer close(out)
		for c := range in {
			if c.Usage != nil || c.FinishReason != "" {
				c.Usage = u
			}
			out <- c
		}
	}()
	return out, nil
}

func TestCompactionLongSession(t *testing.T) {
	const turns = 40
	var script []scripted.Turn
	for i := 1; i <= turns; i++ {
		script = append(script,
			scripted.Turn{ToolCalls: []scripted.Call{call("read_file", map[string]string{"path": "big.txt"})}},
			scripted.Turn{Text: fmt.Sprintf("done with turn %d", i)})
	}
	var sp *sizedProvider
	h := newHarness(t, script, func(rt *Runtime) {
		rt.Resolve = func(string) (providers.Provider, string, error) { return sp, "small-model", nil }
	})
	sp = &sizedProvider{t: t, inner: h.script, window: 4000}
	if err := os.WriteFile(filepath.Join(h.ws, "big.txt"), bytes.Repeat([]byte("0123456789abcdef\n"), 180), 0o644); err != nil {
		t.Fatal(err)
	}
	cv, err := h.coord.Converse()
	if err != nil {
		t.Fatal(err)
	}
	fact := func(i int) string { return fmt.Sprintf("turn %d: remember the code word FACT-%03d-%x", i, i, i*7919) }
	for i := 1; i <= turns; i++ {
		if _, err := cv.Send(context.Background(), fact(i)); err != nil {
			t.Fatalf("turn %d: %v", i, err)
		}
	}
	path := store.PathFor(filepath.Join(h.state, "sessions"), cv.ID())
	cv.Close()

	sp.mu.Lock()
	reqs, digests, over := sp.reqs, sp.digests, sp.over
	sp.mu.Unlock()
	if over > 0 {
		t.Errorf("%d request(s) over the window", over)
	}
	if digests < 3 {
		t.Fatalf("%d digests (compactions with a fold), want at least 3", digests)
	}
	// Requests between compactions extend each other byte for byte; a
	// compaction is the only place one does not.
	resets := 0
	for i := 1; i < len(reqs); i++ {
		prev, cur := joinEncoded(reqs[i-1]), joinEncoded(reqs[i])
		if !bytes.HasPrefix(cur, prev) {
			resets++
			if !bytes.HasPrefix(cur, joinEncoded(providers.Request{Messages: reqs[0].Messages[:1], Encoded: reqs[0].Encoded[:1]})) {
				t.Errorf("request %d lost the system prompt", i)
			}
		}
	}
	l, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if resets != l.Compactions || l.Compactions < 3 {
		t.Errorf("%d prefix resets, %d compaction records; want the same, at least 3", resets, l.Compactions)
	}
	// Each compaction is recorded as a cache reset on the request after
	// it; the prefix fingerprint (system prompt and tools) is unchanged.
	recorded, prefixes := 0, map[string]bool{}
	for _, r := range l.Requests {
		prefixes[r.Prefix] = true
		if r.Reset == "compaction" {
			recorded++
		}
	}
	if recorded != l.Compactions || len(prefixes) != 1 {
		t.Errorf("%d requests recorded as cache resets for %d compactions; %d prefix fingerprints, want 1", recorded, l.Compactions, len(prefixes))
	}
	// Every user turn is still in the last request verbatim.
	last := string(joinEncoded(reqs[len(reqs)-1]))
	for i := 1; i <= turns; i++ {
		if !strings.Contains(last, fact(i)) {
			t.Errorf("the last request lost %q", fact(i))
		}
	}
	if !strings.Contains(last, "digest 1:") || !strings.Contains(last, agents.DigestPrefix[:20]) {
		t.Errorf("the last request lost the earlier digests")
	}
	// The resumed history is the compacted one the session went on with.
	final := reqs[len(reqs)-1].Messages
	if len(l.Messages) != len(final)+1 || l.Messages[len(l.Messages)-2].Content != final[len(final)-1].Content {
		t.Errorf("loaded %d messages, the last request had %d (+ the answer)", len(l.Messages), len(final))
	}
	// The archive holds the folded originals.
	arch, err := os.ReadFile(store.ArchivePath(path))
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(arch, []byte(`"type":"compaction"`)); n != l.Compactions {
		t.Errorf("archive has %d compaction records, the session %d", n, l.Compactions)
	}
	for _, want := range []string{"done with turn 1\"", "0123456789abcdef", `"role":"tool"`} {
		if !bytes.Contains(arch, []byte(want)) {
			t.Errorf("archive lacks %q", want)
		}
	}
	if list, _, _ := store.List(filepath.Join(h.state, "sessions"), true); len(list) != 1 {
		t.Errorf("listed %d sessions, want 1 (the archive is not a session)", len(list))
	}
}

func TestCompactionTooBig(t *testing.T) {
	var sp *sizedProvider
	h := newHarness(t, []scripted.Turn{{Text: "never"}}, func(rt *Runtime) {
		rt.Resolve = func(string) (providers.Provider, string, error) { return sp, "small-model", nil }
	})
	sp = &sizedProvider{t: t, inner: h.script, window: 2000}
	cv, err := h.coord.Converse()
	if err != nil {
		t.Fatal(err)
	}
	defer cv.Close()
	_, err = cv.Send(context.Background(), strings.Repeat("a very long prompt ", 1000))
	if err == nil || !strings.Contains(err.Error(), "does not fit the context window") || !strings.Contains(err.Error(), "user") {
		t.Fatalf("err = %v, want a too-big error naming the user message", err)
	}
	if len(sp.reqs) != 0 {
		t.Errorf("%d requests sent", len(sp.reqs))
	}
}

// TestEngineCompactByHand: /compact folds the earlier turns now, whatever
// the size, with the focus in the digest request; the compaction is an
// event; the next request starts from the compacted history and the
// conversation's window is reported part by part.
func TestEngineCompactByHand(t *testing.T) {
	var sp *sizedProvider
	h := newHarness(t, []scripted.Turn{
		{Match: "FIRST", ToolCalls: []scripted.Call{call("read_file", map[string]string{"path": "a.txt"})}},
		{Text: "read it"},
		{Match: "SECOND", Text: "second answer"},
		{Match: "THIRD", Text: "third answer"},
	}, func(rt *Runtime) {
		rt.Resolve = func(string) (providers.Provider, string, error) { return sp, "small-model", nil }
	})
	sp = &sizedProvider{t: t, inner: h.script, window: 100000}
	if err := os.WriteFile(filepath.Join(h.ws, "a.txt"), []byte("alpha contents"), 0o644); err != nil {
		t.Fatal(err)
	}
	hub := &events.Hub{}
	rec := &events.Recorder{}
	hub.Subscribe(rec)
	h.coord.rt.Sink = hub
	eng, err := NewEngine(h.coord, hub, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	ctx := context.Background()
	for _, s := range []string{"FIRST turn", "SECOND turn"} {
		if err := eng.Send(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	before := eng.Context()
	if before.Limit != 100000 || before.Used <= 0 || before.Percent != events.Percent(before.Used, before.Limit) {
		t.Errorf("context before = %+v", before)
	}
	names := []string{}
	for _, p := range before.Parts {
		names = append(names, p.Name)
	}
	if strings.Join(names, ",") != "system,rules,skills,tools,history" {
		t.Errorf("parts = %v", names)
	}
	if err := eng.Compact(ctx, "the alpha file"); err != nil {
		t.Fatal(err)
	}
	var got *events.ContextInfo
	for _, e := range rec.Events() {
		if e.Type == events.Compacted {
			got = e.Context
		}
	}
	if got == nil || got.Folded == 0 || got.After >= got.Before || got.Focus != "the alpha file" ||
		!strings.HasSuffix(got.Archive, ".archive.jsonl") {
		t.Fatalf("compaction event = %+v", got)
	}
	if len(sp.bodies) != 1 || !strings.Contains(sp.bodies[0], "focus on: the alpha file") || !strings.Contains(sp.bodies[0], "alpha contents") {
		t.Errorf("digest requests = %q", sp.bodies)
	}
	if err := eng.Send(ctx, "THIRD turn"); err != nil {
		t.Fatal(err)
	}
	last := sp.reqs[len(sp.reqs)-1]
	all := string(joinEncoded(last))
	if !strings.Contains(all, "FIRST turn") || !strings.Contains(all, agents.DigestPrefix[:20]) || strings.Contains(all, "alpha contents") {
		t.Errorf("request after /compact:\n%s", all)
	}
	if after := eng.Context(); after.Used >= before.Used+1000 {
		t.Errorf("context after = %+v", after)
	}
	// The same commands sent as turns, as stream-json, ACP and the
	// browser send them.
	if err := eng.Send(ctx, "/compact keep the third answer"); err != nil {
		t.Fatal(err)
	}
	if err := eng.Send(ctx, "/context"); err != nil {
		t.Fatal(err)
	}
	compactions, summary := 0, ""
	for _, e := range rec.Events() {
		if e.Type == events.Compacted {
			compactions++
		}
		if e.Type == events.Notice && strings.HasPrefix(e.Text, "context: ") {
			summary = e.Text
		}
	}
	if compactions != 2 || len(sp.bodies) != 2 || !strings.Contains(sp.bodies[1], "focus on: keep the third answer") {
		t.Errorf("/compact as a turn: %d compactions, digests %q", compactions, sp.bodies)
	}
	if !strings.Contains(summary, "of 100000 tokens") || !strings.Contains(summary, "history ~") {
		t.Errorf("/context as a turn published %q", summary)
	}
}
