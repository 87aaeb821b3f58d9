package llmtest

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/providers/scripted"
)

func post(t *testing.T, s *Server, body string) (*http.Response, []byte, error) {
	t.Helper()
	resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// dataLines returns the payload of every data: line.
func dataLines(t *testing.T, raw []byte) []string {
	t.Helper()
	var out []string
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if p, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, p)
		}
	}
	return out
}

type chunk struct {
	Choices []struct {
		Delta struct {
			Content          json.RawMessage `json:"content"`
			ReasoningContent *string         `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string  `json:"name"`
					Arguments *string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens         int `json:"prompt_tokens"`
		CompletionTokens     int `json:"completion_tokens"`
		PromptCacheHitTokens int `json:"prompt_cache_hit_tokens"`
		PromptTokensDetails  struct {
			CachedTokens int `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	} `json:"usage"`
}

func decode(t *testing.T, lines []string) []chunk {
	t.Helper()
	var out []chunk
	for _, l := range lines {
		if l == "[DONE]" {
			continue
		}
		var c chunk
		if err := json.Unmarshal([]byte(l), &c); err != nil {
			t.Fatalf("bad chunk %s: %v", l, err)
		}
		out = append(out, c)
	}
	return out
}

func TestStreamShape(t *testing.T) {
	s := Start(t, &scripted.Script{Turns: []scripted.Turn{{
		Reasoning: "hmm",
		Text:      "hi!",
		ChunkSize: 2,
		ToolCalls: []scripted.Call{{ID: "c1", Name: "read", Arguments: `{"a":1}`}},
		Usage:     &providers.Usage{PromptTokens: 100, CompletionTokens: 7, CacheHitTokens: 64, CacheMissTokens: 36},
	}}})
	resp, raw, err := post(t, s, `{"model":"deepseek-chat","messages":[]}`)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	lines := dataLines(t, raw)
	if lines[len(lines)-1] != "[DONE]" {
		t.Fatalf("no [DONE]: %q", lines)
	}
	chunks := decode(t, lines)
	var reasoning, text, args string
	var finish string
	for _, c := range chunks {
		if c.Usage != nil {
			if c.Usage.PromptCacheHitTokens != 64 || c.Usage.PromptTokensDetails.CachedTokens != 64 {
				t.Fatalf("usage %+v", c.Usage)
			}
		}
		for _, ch := range c.Choices {
			if ch.Delta.ReasoningContent != nil {
				reasoning += *ch.Delta.ReasoningContent
			}
			var s string
			if len(ch.Delta.Content) > 0 && json.Unmarshal(ch.Delta.Content, &s) == nil {
				text += s
			}
			for _, tc := range ch.Delta.ToolCalls {
				if tc.Function.Arguments != nil {
					args += *tc.Function.Arguments
				}
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
	if reasoning != "hmm" || text != "hi!" || args != `{"a":1}` || finish != "tool_calls" {
		t.Fatalf("reasoning %q text %q args %q finish %q", reasoning, text, args, finish)
	}
	last := chunks[len(chunks)-1]
	if len(last.Choices) != 0 || last.Usage == nil {
		t.Fatalf("last chunk should be a usage-only chunk: %+v", last)
	}
}

func TestInterleaveAndQuirks(t *testing.T) {
	s := Start(t, &scripted.Script{Turns: []scripted.Turn{{
		ChunkSize:  1,
		Interleave: true,
		ToolCalls:  []scripted.Call{{ID: "a", Name: "x", Arguments: "12"}, {ID: "b", Name: "y", Arguments: "34"}},
		Wire:       &scripted.Wire{IndexBase: 1, NameWithoutArguments: true, EmptyFirstChunk: true, UsageEveryChunk: true},
	}}})
	_, raw, _ := post(t, s, `{"model":"m"}`)
	chunks := decode(t, dataLines(t, raw))
	if len(chunks[0].Choices) != 0 {
		t.Fatalf("first chunk has choices: %+v", chunks[0])
	}
	var order []string
	for _, c := range chunks {
		if c.Usage == nil {
			t.Fatal("chunk without usage under UsageEveryChunk")
		}
		for _, ch := range c.Choices {
			for _, tc := range ch.Delta.ToolCalls {
				if tc.ID != "" {
					if tc.Function.Arguments != nil {
						t.Fatal("header delta carries arguments under NameWithoutArguments")
					}
					order = append(order, fmt.Sprintf("h%d", tc.Index))
				} else {
					order = append(order, fmt.Sprintf("%d:%s", tc.Index, *tc.Function.Arguments))
				}
			}
		}
	}
	if got := strings.Join(order, " "); got != "h1 h2 1:1 2:3 1:2 2:4" {
		t.Fatalf("tool delta order %q", got)
	}
}

func TestErrorTurn(t *testing.T) {
	s := Start(t, &scripted.Script{Turns: []scripted.Turn{
		{Status: 429, RetryAfter: "3", ErrorBody: "slow down"},
		{Status: 500, ErrorBody: `{"weird":true}`},
	}})
	resp, body, _ := post(t, s, `{}`)
	if resp.StatusCode != 429 || resp.Header.Get("Retry-After") != "3" {
		t.Fatalf("status %d retry-after %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	var e struct {
		Error struct{ Message string } `json:"error"`
	}
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Message != "slow down" {
		t.Fatalf("body %s", body)
	}
	resp, body, _ = post(t, s, `{}`)
	if resp.StatusCode != 500 || string(body) != `{"weird":true}` {
		t.Fatalf("status %d body %s", resp.StatusCode, body)
	}
}

func TestInvalidBodyConsumesNothing(t *testing.T) {
	s := Start(t, &scripted.Script{Turns: []scripted.Turn{{Text: "x"}}})
	resp, _, _ := post(t, s, `not json`)
	if resp.StatusCode != 400 || s.Queue().Remaining() != 1 {
		t.Fatalf("status %d remaining %d", resp.StatusCode, s.Queue().Remaining())
	}
}

func TestCutAfterBreaksConnection(t *testing.T) {
	s := Start(t, &scripted.Script{Turns: []scripted.Turn{{Text: "abcdef", ChunkSize: 1, CutAfter: 2}}})
	_, raw, err := post(t, s, `{}`)
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("read error %v, want unexpected EOF", err)
	}
	if n := len(dataLines(t, raw)); n != 3 {
		t.Fatalf("got %d data lines before the cut, want 3 (role + 2 content)", n)
	}
}

func TestExhaustedAndRequestsConcurrent(t *testing.T) {
	s := Start(t, &scripted.Script{Turns: []scripted.Turn{{Text: "only"}}})
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() {
			resp, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(fmt.Sprintf(`{"n":%d}`, i)))
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			_ = s.Requests()
		})
	}
	wg.Wait()
	if n := len(s.Requests()); n != 10 {
		t.Fatalf("recorded %d requests", n)
	}
	if s.Queue().Exhausted() != 9 {
		t.Fatalf("exhausted %d, want 9", s.Queue().Exhausted())
	}
}

func TestDelayAndKeepalive(t *testing.T) {
	s := Start(t, &scripted.Script{Turns: []scripted.Turn{{Text: "x", DelayMS: 30, Wire: &scripted.Wire{Keepalive: true, CRLF: true, NoDone: true}}}})
	start := time.Now()
	_, raw, err := post(t, s, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) < 30*time.Millisecond {
		t.Fatal("delay not honoured")
	}
	str := string(raw)
	if !strings.Contains(str, ": keep-alive\r\n\r\n") || strings.Contains(str, "[DONE]") || strings.Contains(strings.ReplaceAll(str, "\r\n", ""), "\n") {
		t.Fatalf("raw stream %q", str)
	}
}

func TestServerDelayAppliesToEveryRequest(t *testing.T) {
	s := Start(t, &scripted.Script{Turns: []scripted.Turn{{Text: "a"}, {Text: "b", DelayMS: 1}}})
	s.SetDelay(80 * time.Millisecond)
	start := time.Now()
	if _, _, err := post(t, s, `{}`); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d < 80*time.Millisecond {
		t.Fatalf("first request answered after %v, want the server's delay", d)
	}
	// A turn's own delay_ms wins.
	start = time.Now()
	if _, _, err := post(t, s, `{}`); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d >= 80*time.Millisecond {
		t.Errorf("turn delay_ms not preferred: %v", d)
	}
}
