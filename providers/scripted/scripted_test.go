package scripted

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/reasonix/reasonix/providers"
)

func TestParseForms(t *testing.T) {
	obj, err := Parse([]byte(`{"turns":[{"text":"hi","usage":{"prompt_tokens":3,"completion_tokens":1,"cache_hit_tokens":2,"cache_miss_tokens":1}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	arr, err := Parse([]byte(` [{"text":"hi","usage":{"prompt_tokens":3,"completion_tokens":1,"cache_hit_tokens":2,"cache_miss_tokens":1}}]`))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(obj, arr) {
		t.Fatalf("object and array forms differ: %+v vs %+v", obj, arr)
	}
	if obj.Turns[0].Usage.CacheHitTokens != 2 {
		t.Fatalf("usage not decoded: %+v", obj.Turns[0].Usage)
	}
}

func TestParseRejects(t *testing.T) {
	for _, in := range []string{
		`[{"txt":"typo"}]`,
		`[{"status":42}]`,
		`[{"tool_calls":[{"arguments":"{}"}]}]`,
		`[{"chunk_size":-1}]`,
		`{"turns":`,
	} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%s) succeeded, want error", in)
		}
	}
}

func TestLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(path, []byte(`[{"text":"a"},{"text":"b"}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Load(path)
	if err != nil || len(s.Turns) != 2 {
		t.Fatalf("Load = %v, %v", s, err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Fatal("Load of a missing file succeeded")
	}
}

func TestQueueMatchOrder(t *testing.T) {
	q := NewQueue(&Script{Turns: []Turn{
		{Match: "beta", Text: "b1"},
		{Text: "any1"},
		{Match: "alpha", Text: "a1"},
		{Text: "any2"},
	}})
	steps := []struct{ body, want string }{
		{"alpha session", "any1"},
		{"alpha session", "a1"},
		{"beta session", "b1"},
		{"beta session", "any2"},
	}
	for i, s := range steps {
		got, ok := q.Next([]byte(s.body))
		if !ok || got.Text != s.want {
			t.Fatalf("step %d: got %q, %v; want %q", i, got.Text, ok, s.want)
		}
	}
	got, ok := q.Next(nil)
	if ok || got.Text != ExhaustedText {
		t.Fatalf("after the script: got %q, %v", got.Text, ok)
	}
	if q.Exhausted() != 1 || q.Remaining() != 0 {
		t.Fatalf("Exhausted=%d Remaining=%d", q.Exhausted(), q.Remaining())
	}
}

func TestQueueReservedTurnNotServedToOthers(t *testing.T) {
	q := NewQueue(&Script{Turns: []Turn{{Match: "only-me", Text: "x"}}})
	if !q.NeedsBody() {
		t.Fatal("NeedsBody false with a Match turn pending")
	}
	if got, ok := q.Next([]byte("someone else")); ok {
		t.Fatalf("served reserved turn %q to a non-matching body", got.Text)
	}
	if got, ok := q.Next([]byte("it is only-me")); !ok || got.Text != "x" {
		t.Fatalf("got %q, %v", got.Text, ok)
	}
	if q.NeedsBody() {
		t.Fatal("NeedsBody true after the Match turn was served")
	}
}

func TestQueueConcurrentEachTurnOnce(t *testing.T) {
	const n = 200
	s := &Script{}
	for i := range n {
		s.Turns = append(s.Turns, Turn{Text: fmt.Sprint(i)})
	}
	q := NewQueue(s)
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for {
				tr, ok := q.Next(nil)
				if !ok {
					return
				}
				mu.Lock()
				seen[tr.Text]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(seen) != n {
		t.Fatalf("served %d distinct turns, want %d", len(seen), n)
	}
	for k, v := range seen {
		if v != 1 {
			t.Fatalf("turn %s served %d times", k, v)
		}
	}
}

func TestQueueAssignsStableUniqueIDs(t *testing.T) {
	q := NewQueue(&Script{Turns: []Turn{
		{ToolCalls: []Call{{Name: "a"}, {ID: "mine", Name: "b"}}},
		{ToolCalls: []Call{{Name: "a"}}},
	}})
	t1, _ := q.Next(nil)
	t2, _ := q.Next(nil)
	if t1.ToolCalls[0].ID != "call_0_0" || t1.ToolCalls[1].ID != "mine" || t2.ToolCalls[0].ID != "call_1_0" {
		t.Fatalf("ids: %+v %+v", t1.ToolCalls, t2.ToolCalls)
	}
}

func TestPieces(t *testing.T) {
	cases := []struct {
		s    string
		n    int
		want []string
	}{
		{"", 1, nil},
		{"abc", 0, []string{"abc"}},
		{"abc", 1, []string{"a", "b", "c"}},
		{"héllo", 2, []string{"hé", "ll", "o"}},
		{"日本語", 5, []string{"日本語"}},
	}
	for _, c := range cases {
		if got := Pieces(c.s, c.n); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Pieces(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}

func collect(t *testing.T, ch <-chan providers.Chunk) (text, reasoning string, final providers.Chunk, chunks int, err error) {
	t.Helper()
	for c := range ch {
		chunks++
		text += c.Text
		reasoning += c.Reasoning
		if c.Err != nil {
			err = c.Err
		}
		if c.FinishReason != "" {
			final = c
		}
	}
	return
}

func TestProviderStreamsTurn(t *testing.T) {
	p := NewFromScript(&Script{Turns: []Turn{{
		Reasoning: "think",
		Text:      "hello",
		ChunkSize: 2,
		ToolCalls: []Call{{Name: "read", Arguments: `{"path":"a"}`}, {Name: "list"}},
		Usage:     &providers.Usage{PromptTokens: 10, CompletionTokens: 5},
	}}})
	ch, err := p.Stream(context.Background(), providers.Request{Model: "m", Messages: []providers.Message{{Role: "user", Content: "go"}}})
	if err != nil {
		t.Fatal(err)
	}
	text, reasoning, final, chunks, err := collect(t, ch)
	if err != nil {
		t.Fatal(err)
	}
	if text != "hello" || reasoning != "think" {
		t.Fatalf("text %q reasoning %q", text, reasoning)
	}
	if chunks != 3+3+1 {
		t.Fatalf("got %d chunks, want 7 (3 reasoning, 3 text, 1 final)", chunks)
	}
	if final.FinishReason != "tool_calls" || len(final.ToolCalls) != 2 {
		t.Fatalf("final chunk %+v", final)
	}
	if final.ToolCalls[1].Function.Arguments != "{}" || final.ToolCalls[0].Type != "function" {
		t.Fatalf("calls %+v", final.ToolCalls)
	}
	if final.Usage == nil || final.Usage.PromptTokens != 10 {
		t.Fatalf("usage %+v", final.Usage)
	}
	reqs := p.Requests()
	if len(reqs) != 1 || reqs[0].Messages[0].Content != "go" {
		t.Fatalf("recorded %+v", reqs)
	}
}

func TestProviderStatusError(t *testing.T) {
	p := NewFromScript(&Script{Turns: []Turn{{Status: 429, RetryAfter: "2", ErrorBody: "slow down"}}})
	_, err := p.Stream(context.Background(), providers.Request{})
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 429 || se.RetryAfter != "2" {
		t.Fatalf("err = %v", err)
	}
	if err.Error() != "scripted: HTTP 429: slow down" {
		t.Fatalf("message %q", err.Error())
	}
	var sc interface{ StatusCode() int }
	if !errors.As(err, &sc) || sc.StatusCode() != 429 {
		t.Fatal("StatusCode interface not satisfied")
	}
}

func TestProviderCutAfter(t *testing.T) {
	p := NewFromScript(&Script{Turns: []Turn{
		{Text: "abcdef", ChunkSize: 1, CutAfter: 3},
		{Text: "ab", ToolCalls: []Call{{Name: "x", Arguments: "{}"}}, CutAfter: 3},
	}})
	ch, _ := p.Stream(context.Background(), providers.Request{})
	text, _, final, _, err := collect(t, ch)
	if text != "abc" || !errors.Is(err, ErrStreamCut) || final.FinishReason != "" {
		t.Fatalf("text %q err %v final %+v", text, err, final)
	}
	// The cut lands inside the tool call: the text arrives, the call never.
	ch, _ = p.Stream(context.Background(), providers.Request{})
	text, _, final, _, err = collect(t, ch)
	if text != "ab" || !errors.Is(err, ErrStreamCut) || final.ToolCalls != nil {
		t.Fatalf("text %q err %v final %+v", text, err, final)
	}
}

func TestProviderCancel(t *testing.T) {
	p := NewFromScript(&Script{Turns: []Turn{{Text: "abcdef", ChunkSize: 1, ChunkDelayMS: 50}}})
	ctx, cancel := context.WithCancel(context.Background())
	ch, err := p.Stream(ctx, providers.Request{})
	if err != nil {
		t.Fatal(err)
	}
	<-ch
	cancel()
	done := make(chan struct{})
	go func() {
		for range ch {
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("stream did not end after cancel")
	}
}

func TestProviderDelayHonoursContext(t *testing.T) {
	p := NewFromScript(&Script{Turns: []Turn{{Text: "x", DelayMS: 5000}}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := p.Stream(ctx, providers.Request{})
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 2*time.Second {
		t.Fatalf("err %v after %v", err, time.Since(start))
	}
}

func TestProviderMatchInProcess(t *testing.T) {
	p := NewFromScript(&Script{Turns: []Turn{{Match: "session-B", Text: "for B"}, {Text: "for A"}}})
	ch, _ := p.Stream(context.Background(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "I am session-A"}}})
	if text, _, _, _, _ := collect(t, ch); text != "for A" {
		t.Fatalf("A got %q", text)
	}
	ch, _ = p.Stream(context.Background(), providers.Request{Messages: []providers.Message{{Role: "user", Content: "I am session-B"}}})
	if text, _, _, _, _ := collect(t, ch); text != "for B" {
		t.Fatalf("B got %q", text)
	}
}

func TestRegisteredKind(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	if err := os.WriteFile(path, []byte(`{"turns":[{"text":"ok"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	p, err := providers.New(providers.Config{Name: "demo", Kind: "scripted", Script: path})
	if err != nil {
		t.Fatal(err)
	}
	if p.Name() != "demo" {
		t.Fatalf("name %q", p.Name())
	}
	if _, err := providers.New(providers.Config{Name: "demo", Kind: "scripted"}); err == nil {
		t.Fatal("no script path accepted")
	}
}

// BenchmarkSession200 replays a 200-step tool loop, the shape of a long
// benchmark session, to keep the in-process provider's overhead visible.
func BenchmarkSession200(b *testing.B) {
	s := &Script{}
	for range 200 {
		s.Turns = append(s.Turns, Turn{Text: "working on it", ToolCalls: []Call{{Name: "read", Arguments: `{"path":"main.go"}`}}})
	}
	ctx := context.Background()
	msgs := make([]providers.Message, 0, 401)
	msgs = append(msgs, providers.Message{Role: "user", Content: "do it"})
	b.ReportAllocs()
	for b.Loop() {
		p := NewFromScript(s)
		history := msgs
		for range 200 {
			ch, err := p.Stream(ctx, providers.Request{Messages: history})
			if err != nil {
				b.Fatal(err)
			}
			for c := range ch {
				if len(c.ToolCalls) > 0 {
					history = append(history, providers.Message{Role: "assistant", ToolCalls: c.ToolCalls},
						providers.Message{Role: "tool", ToolCallID: c.ToolCalls[0].ID, Content: "ok"})
				}
			}
		}
	}
}

func TestProviderFinishReasonOverride(t *testing.T) {
	p := NewFromScript(&Script{Turns: []Turn{
		{Text: "cut", FinishReason: "length"},
		{ToolCalls: []Call{{Name: "x", Arguments: `{"a":`}}, FinishReason: "length"},
		{ToolCalls: []Call{{Name: "x"}}},
	}})
	for i, want := range []string{"length", "length", "tool_calls"} {
		ch, err := p.Stream(context.Background(), providers.Request{})
		if err != nil {
			t.Fatal(err)
		}
		_, _, final, _, err := collect(t, ch)
		if err != nil || final.FinishReason != want {
			t.Errorf("turn %d: finish %q, %v; want %q", i, final.FinishReason, err, want)
		}
	}
}
