package openai

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers"
)

type result struct {
	chunks    []providers.Chunk
	text      string
	reasoning string
	final     providers.Chunk
	err       error
}

func decodeString(input string) result {
	return decodeReader(strings.NewReader(input))
}

func decodeReader(r io.Reader) result {
	var res result
	d := decoder{provider: "test"}
	res.err = d.readStream(bufio.NewReaderSize(r, 64), func(c providers.Chunk) bool {
		res.chunks = append(res.chunks, c)
		res.text += c.Text
		res.reasoning += c.Reasoning
		return true
	})
	if n := len(res.chunks); n > 0 {
		res.final = res.chunks[n-1]
	}
	return res
}

func calls(cs ...string) []providers.ToolCall {
	var out []providers.ToolCall
	for i := 0; i < len(cs); i += 3 {
		out = append(out, providers.ToolCall{ID: cs[i], Type: "function", Function: providers.FunctionCall{Name: cs[i+1], Arguments: cs[i+2]}})
	}
	return out
}

func TestRecordedDeepSeekReasoningTool(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "deepseek_reasoning_tool.sse"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := decodeReader(f)
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.reasoning != `The user wants the "main.go" file. I should read it.` {
		t.Errorf("reasoning %q", r.reasoning)
	}
	if r.text != "Let me look at it." {
		t.Errorf("text %q", r.text)
	}
	want := calls("call_0_8f2d6c1a-3e4b-4a7c-b5d9-0c1e2f3a4b5c", "read_file", `{"path":"main.go"}`)
	if !reflect.DeepEqual(r.final.ToolCalls, want) {
		t.Errorf("calls %+v", r.final.ToolCalls)
	}
	if r.final.FinishReason != "tool_calls" {
		t.Errorf("finish %q", r.final.FinishReason)
	}
	wantUsage := providers.Usage{PromptTokens: 1843, CompletionTokens: 61, CacheHitTokens: 1792, CacheMissTokens: 51, ReasoningTokens: 38}
	if r.final.Usage == nil || *r.final.Usage != wantUsage {
		t.Errorf("usage %+v", r.final.Usage)
	}
	for _, c := range r.chunks[:len(r.chunks)-1] {
		if c.ToolCalls != nil || c.FinishReason != "" {
			t.Errorf("intermediate chunk carries calls or finish: %+v", c)
		}
	}
}

func TestRecordedVLLMUsageEveryChunk(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "vllm_usage_every_chunk.sse"))
	if err != nil {
		t.Fatal(err)
	}
	r := decodeString(string(b))
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.text != "Hello! How can I help?" || r.reasoning != "Simple greeting." {
		t.Errorf("text %q reasoning %q", r.text, r.reasoning)
	}
	// The last usage wins: completion 12 and the cached prompt tokens
	// only the trailing chunk reports.
	wantUsage := providers.Usage{PromptTokens: 412, CompletionTokens: 12, CacheHitTokens: 384, CacheMissTokens: 28}
	if r.final.Usage == nil || *r.final.Usage != wantUsage {
		t.Errorf("usage %+v", r.final.Usage)
	}
	if r.final.FinishReason != "stop" || r.final.ToolCalls != nil {
		t.Errorf("final %+v", r.final)
	}
}

func TestRecordedOpenAIParallelParts(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "openai_parallel_parts.sse"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "\r\n") {
		t.Fatal("fixture lost its CRLF line endings")
	}
	r := decodeString(string(b))
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.text != "Checking both files." {
		t.Errorf("text %q", r.text)
	}
	want := calls("call_Qd3kV8mZt1", "read_file", `{"path": "go.mod"}`, "call_Hn7pL2xWc9", "read_file", `{"path": "README.md"}`)
	if !reflect.DeepEqual(r.final.ToolCalls, want) {
		t.Errorf("calls %+v", r.final.ToolCalls)
	}
	wantUsage := providers.Usage{PromptTokens: 2210, CompletionTokens: 64, CacheHitTokens: 2048, CacheMissTokens: 162}
	if r.final.Usage == nil || *r.final.Usage != wantUsage {
		t.Errorf("usage %+v", r.final.Usage)
	}
}

// sse frames payloads as data: events.
func sse(payloads ...string) string {
	var b strings.Builder
	for _, p := range payloads {
		b.WriteString("data: " + p + "\n\n")
	}
	return b.String()
}

func TestQuirks(t *testing.T) {
	cases := []struct {
		name      string
		in        string
		text      string
		reasoning string
		calls     []providers.ToolCall
		finish    string
	}{
		{
			name: "first chunk without choices",
			in:   sse(`{"choices":[],"prompt_filter_results":[]}`, `{"choices":[{"delta":{"content":"hi"},"finish_reason":"stop"}]}`, `[DONE]`),
			text: "hi", finish: "stop",
		},
		{
			name: "tool indexes start at one",
			in: sse(`{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"a","function":{"name":"f","arguments":"{\"x\""}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":":1}"}}]}}]}`,
				`{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`, `[DONE]`),
			calls: calls("a", "f", `{"x":1}`), finish: "tool_calls",
		},
		{
			name: "empty tool_calls beside reasoning",
			in: sse(`{"choices":[{"delta":{"reasoning_content":"think","tool_calls":[]}}]}`,
				`{"choices":[{"delta":{"content":"ok","tool_calls":[]},"finish_reason":"stop"}]}`, `[DONE]`),
			text: "ok", reasoning: "think", finish: "stop",
		},
		{
			name: "name delta without arguments, empty arguments become {}",
			in: sse(`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"list"}}]}}]}`,
				`{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`, `[DONE]`),
			calls: calls("a", "list", "{}"), finish: "tool_calls",
		},
		{
			name: "arguments one character at a time",
			in: func() string {
				var p []string
				p = append(p, `{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":""}}]}}]}`)
				for _, r := range `{"s":"é"}` {
					p = append(p, fmt.Sprintf(`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":%q}}]}}]}`, string(r)))
				}
				return sse(append(p, `{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`, `[DONE]`)...)
			}(),
			calls: calls("a", "f", `{"s":"é"}`), finish: "tool_calls",
		},
		{
			name: "interleaved calls emitted in index order",
			in: sse(`{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"b","function":{"name":"g","arguments":"[2"}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"[1"}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"arguments":"]"}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"]"}}]}}]}`,
				`{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}`, `[DONE]`),
			calls: calls("a", "f", "[1]", "b", "g", "[2]"), finish: "tool_calls",
		},
		{
			name:   "typed content parts, null content, unknown fields",
			in:     sse(`{"choices":[{"delta":{"content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{}},{"type":"text","text":"b"}],"new_field":{"x":[1]}}}]}`, `{"choices":[{"delta":{"content":null},"finish_reason":"stop"}]}`, `[DONE]`),
			text:   "ab",
			finish: "stop",
		},
		{
			name:   "comments, CRLF, event lines and data without space",
			in:     ": ping\r\n\r\nevent: message\r\nid: 1\r\ndata:{\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\r\n\r\nretry: 100\r\ndata: {\"choices\":[{\"delta\":{\"content\":\"y\"},\"finish_reason\":\"stop\"}]}\r\n\r\ndata: [DONE]\r\n\r\n",
			text:   "xy",
			finish: "stop",
		},
		{
			name:      "reasoning field instead of reasoning_content",
			in:        sse(`{"choices":[{"delta":{"reasoning":"r1"}}]}`, `{"choices":[{"delta":{"content":"t"},"finish_reason":"stop"}]}`, `[DONE]`),
			text:      "t",
			reasoning: "r1",
			finish:    "stop",
		},
		{
			name:   "escapes in content",
			in:     sse(`{"choices":[{"delta":{"content":"line\n\"q\" \u00e9"}}]}`, `[DONE]`),
			text:   "line\n\"q\" é",
			finish: "stop",
		},
		{
			name:   "finish reason then end of stream without [DONE]",
			in:     sse(`{"choices":[{"delta":{"content":"done"},"finish_reason":"length"}]}`),
			text:   "done",
			finish: "length",
		},
		{
			name: "calls without index or id",
			in: sse(`{"choices":[{"delta":{"tool_calls":[{"function":{"name":"f","arguments":"{"}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"function":{"arguments":"}"}}]}}]}`, `[DONE]`),
			calls: calls("call_0", "f", "{}"), finish: "tool_calls",
		},
		{
			name: "name repeated on every delta",
			in: sse(`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{"}}]}}]}`,
				`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"f","arguments":"}"}}]}}]}`, `[DONE]`),
			calls: calls("a", "f", "{}"), finish: "tool_calls",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := decodeString(c.in)
			if r.err != nil {
				t.Fatal(r.err)
			}
			if r.text != c.text || r.reasoning != c.reasoning {
				t.Errorf("text %q reasoning %q; want %q %q", r.text, r.reasoning, c.text, c.reasoning)
			}
			if !reflect.DeepEqual(r.final.ToolCalls, c.calls) {
				t.Errorf("calls %+v; want %+v", r.final.ToolCalls, c.calls)
			}
			if r.final.FinishReason != c.finish {
				t.Errorf("finish %q; want %q", r.final.FinishReason, c.finish)
			}
		})
	}
}

func TestUsageMapping(t *testing.T) {
	cases := []struct {
		in   string
		want providers.Usage
	}{
		{`{"prompt_tokens":100,"completion_tokens":5,"prompt_cache_hit_tokens":60,"prompt_cache_miss_tokens":40}`,
			providers.Usage{PromptTokens: 100, CompletionTokens: 5, CacheHitTokens: 60, CacheMissTokens: 40}},
		{`{"prompt_tokens":100,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":64},"completion_tokens_details":{"reasoning_tokens":3}}`,
			providers.Usage{PromptTokens: 100, CompletionTokens: 5, CacheHitTokens: 64, CacheMissTokens: 36, ReasoningTokens: 3}},
		{`{"prompt_tokens":100,"completion_tokens":5}`,
			providers.Usage{PromptTokens: 100, CompletionTokens: 5, CacheMissTokens: 100}},
		{`{"prompt_tokens":100,"completion_tokens":5,"prompt_tokens_details":null}`,
			providers.Usage{PromptTokens: 100, CompletionTokens: 5, CacheMissTokens: 100}},
	}
	for _, c := range cases {
		r := decodeString(sse(`{"choices":[{"delta":{},"finish_reason":"stop"}],"usage":`+c.in+`}`, `[DONE]`))
		if r.err != nil {
			t.Fatal(r.err)
		}
		if r.final.Usage == nil || *r.final.Usage != c.want {
			t.Errorf("%s: got %+v want %+v", c.in, r.final.Usage, c.want)
		}
	}
}

func TestBrokenStreams(t *testing.T) {
	cases := []struct {
		name  string
		in    string
		text  string
		wants string
	}{
		{"cut mid answer", sse(`{"choices":[{"delta":{"content":"partial "}}]}`, `{"choices":[{"delta":{"content":"text"}}]}`),
			"partial text", "stream broken after 12 bytes of answer: unexpected EOF"},
		{"cut mid line", sse(`{"choices":[{"delta":{"content":"ab"}}]}`) + `data: {"choices":[{"del`,
			"ab", "malformed chunk"},
		{"error event", sse(`{"choices":[{"delta":{"content":"ab"}}]}`, `{"error":{"message":"overloaded","type":"server_error"}}`),
			"ab", "server error: overloaded"},
		{"empty", "", "", "after 0 bytes of answer: unexpected EOF"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := decodeString(c.in)
			if r.text != c.text {
				t.Errorf("partial text %q; want %q", r.text, c.text)
			}
			var se *StreamError
			if !errors.As(r.err, &se) || !strings.Contains(r.err.Error(), c.wants) {
				t.Fatalf("err %v; want StreamError containing %q", r.err, c.wants)
			}
			for _, ch := range r.chunks {
				if ch.FinishReason != "" || ch.ToolCalls != nil {
					t.Errorf("broken stream emitted a final chunk %+v", ch)
				}
			}
		})
	}
}

func TestLongLineBeyondBuffer(t *testing.T) {
	long := strings.Repeat("x", 10000)
	r := decodeString(sse(`{"choices":[{"delta":{"content":"`+long+`"},"finish_reason":"stop"}]}`, `[DONE]`))
	if r.err != nil || r.text != long {
		t.Fatalf("err %v, got %d bytes", r.err, len(r.text))
	}
}

func TestConsumerStop(t *testing.T) {
	d := decoder{provider: "t"}
	n := 0
	err := d.readStream(bufio.NewReader(strings.NewReader(sse(`{"choices":[{"delta":{"content":"a"}}]}`, `{"choices":[{"delta":{"content":"b"}}]}`, `[DONE]`))),
		func(providers.Chunk) bool { n++; return false })
	if !errors.Is(err, errStopped) || n != 1 {
		t.Fatalf("err %v after %d chunks", err, n)
	}
}

// longStream builds a realistic long answer: reasoning and text a few
// characters per chunk, then a call with arguments in small pieces.
func longStream(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "data: {\"id\":\"5d1c\",\"object\":\"chat.completion.chunk\",\"created\":1747300001,\"model\":\"deepseek-reasoner\",\"choices\":[{\"index\":0,\"delta\":{\"content\":null,\"reasoning_content\":\" token%d\"},\"logprobs\":null,\"finish_reason\":null}]}\n\n", i)
	}
	for i := range n {
		fmt.Fprintf(&b, "data: {\"id\":\"5d1c\",\"object\":\"chat.completion.chunk\",\"created\":1747300001,\"model\":\"deepseek-reasoner\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" word%d\",\"reasoning_content\":null},\"logprobs\":null,\"finish_reason\":null}]}\n\n", i)
	}
	b.WriteString("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"write_file\",\"arguments\":\"\"}}]}}]}\n\n")
	for range n {
		b.WriteString("data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\"abc\\\"d\"}}]}}]}\n\n")
	}
	b.WriteString("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":20,\"prompt_cache_hit_tokens\":5,\"prompt_cache_miss_tokens\":5}}\n\ndata: [DONE]\n\n")
	return b.String()
}

func BenchmarkDecodeLongStream(b *testing.B) {
	in := longStream(1000)
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	r := strings.NewReader(in)
	br := bufio.NewReaderSize(r, 32<<10)
	for b.Loop() {
		r.Reset(in)
		br.Reset(r)
		d := decoder{provider: "bench"}
		if err := d.readStream(br, func(providers.Chunk) bool { return true }); err != nil {
			b.Fatal(err)
		}
	}
}

func TestTrailingDataRejected(t *testing.T) {
	r := decodeString(sse(`{"choices":[{"delta":{"content":"a"}}]} {"choices":[]}`, `{"choices":[{"delta":{"content":"b"}}]}`, `[DONE]`))
	if r.err == nil || !strings.Contains(r.err.Error(), "trailing data") {
		t.Fatalf("err %v", r.err)
	}
}
