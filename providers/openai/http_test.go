package openai_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/internal/llmtest"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/providers/openai"
	"github.com/reasonix/reasonix/providers/scripted"
)

func newProvider(t *testing.T, url string, mod func(*providers.Config)) providers.Provider {
	t.Helper()
	cfg := providers.Config{
		Name:           "deepseek",
		BaseURL:        url,
		APIKey:         "sk-test",
		DefaultModel:   "deepseek-chat",
		RetryBaseDelay: time.Millisecond,
		RetryMaxDelay:  20 * time.Millisecond,
	}
	if mod != nil {
		mod(&cfg)
	}
	p, err := providers.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type answer struct {
	text, reasoning string
	final           providers.Chunk
	err             error
}

func drain(ch <-chan providers.Chunk) answer {
	var a answer
	for c := range ch {
		a.text += c.Text
		a.reasoning += c.Reasoning
		if c.Err != nil {
			a.err = c.Err
		}
		if c.FinishReason != "" {
			a.final = c
		}
	}
	return a
}

func userReq(s string) providers.Request {
	return providers.Request{Messages: []providers.Message{{Role: providers.RoleUser, Content: s}}}
}

func TestRetryAfterHonoured(t *testing.T) {
	srv := llmtest.Start(t, &scripted.Script{Turns: []scripted.Turn{
		{Status: 429, RetryAfter: "0.3", ErrorBody: "rate limited"},
		{Text: "ok"},
	}})
	p := newProvider(t, srv.URL(), func(c *providers.Config) { c.RetryMaxDelay = 5 * time.Second })
	start := time.Now()
	ch, err := p.Stream(context.Background(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if a := drain(ch); a.err != nil || a.text != "ok" {
		t.Fatalf("answer %+v", a)
	}
	got := srv.Received()
	if len(got) != 2 {
		t.Fatalf("%d requests, want 2", len(got))
	}
	if gap := got[1].At.Sub(got[0].At); gap < 300*time.Millisecond {
		t.Fatalf("retried after %v, Retry-After asked for 300ms", gap)
	}
	if time.Since(start) > 3*time.Second {
		t.Fatal("retry waited far longer than asked")
	}
}

func TestRetryAfterCapped(t *testing.T) {
	srv := llmtest.Start(t, &scripted.Script{Turns: []scripted.Turn{
		{Status: 429, RetryAfter: "30"},
		{Text: "ok"},
	}})
	p := newProvider(t, srv.URL(), func(c *providers.Config) { c.RetryMaxDelay = 50 * time.Millisecond })
	start := time.Now()
	ch, err := p.Stream(context.Background(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	drain(ch)
	if d := time.Since(start); d < 50*time.Millisecond || d > 5*time.Second {
		t.Fatalf("took %v; want the 50ms cap, not 30s", d)
	}
}

func TestServerErrorThenSuccess(t *testing.T) {
	srv := llmtest.Start(t, &scripted.Script{Turns: []scripted.Turn{
		{Status: 500, ErrorBody: "boom"},
		{Status: 408},
		{Text: "recovered"},
	}})
	p := newProvider(t, srv.URL(), nil)
	ch, err := p.Stream(context.Background(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if a := drain(ch); a.text != "recovered" {
		t.Fatalf("answer %+v", a)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
}

func TestClientErrorNotRetried(t *testing.T) {
	srv := llmtest.Start(t, &scripted.Script{Turns: []scripted.Turn{
		{Status: 401, ErrorBody: "invalid api key"},
		{Text: "must not be served"},
	}})
	p := newProvider(t, srv.URL(), nil)
	_, err := p.Stream(context.Background(), userReq("hi"))
	var se *openai.StatusError
	if !errors.As(err, &se) || se.Status != 401 {
		t.Fatalf("err %v", err)
	}
	if err.Error() != "deepseek: HTTP 401: invalid api key" {
		t.Fatalf("message %q", err.Error())
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}

func TestBadRequestNotRetried(t *testing.T) {
	srv := llmtest.Start(t, &scripted.Script{Turns: []scripted.Turn{
		{Status: 400, ErrorBody: `{"error":{"message":"Missing reasoning_content field","type":"invalid_request_error"}}`},
		{Text: "must not be served"},
	}})
	p := newProvider(t, srv.URL(), nil)
	_, err := p.Stream(context.Background(), userReq("hi"))
	var sc interface{ StatusCode() int }
	if !errors.As(err, &sc) || sc.StatusCode() != 400 || !strings.Contains(err.Error(), "Missing reasoning_content field") {
		t.Fatalf("err %v", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}

func TestMaxAttempts(t *testing.T) {
	turns := make([]scripted.Turn, 5)
	for i := range turns {
		turns[i] = scripted.Turn{Status: 503, ErrorBody: "overloaded"}
	}
	srv := llmtest.Start(t, &scripted.Script{Turns: turns})
	p := newProvider(t, srv.URL(), func(c *providers.Config) { c.MaxAttempts = 3 })
	_, err := p.Stream(context.Background(), userReq("hi"))
	var se *openai.StatusError
	if !errors.As(err, &se) || se.Status != 503 || se.Attempts != 3 {
		t.Fatalf("err %v", err)
	}
	if !strings.Contains(err.Error(), "gave up after 3 attempts") {
		t.Fatalf("message %q", err.Error())
	}
	if n := len(srv.Requests()); n != 3 {
		t.Fatalf("%d requests, want 3", n)
	}
}

func TestDefaultMaxAttempts(t *testing.T) {
	turns := make([]scripted.Turn, 6)
	for i := range turns {
		turns[i] = scripted.Turn{Status: 502}
	}
	srv := llmtest.Start(t, &scripted.Script{Turns: turns})
	p := newProvider(t, srv.URL(), nil)
	if _, err := p.Stream(context.Background(), userReq("hi")); err == nil {
		t.Fatal("no error")
	}
	if n := len(srv.Requests()); n != openai.DefaultMaxAttempts {
		t.Fatalf("%d requests, want %d", n, openai.DefaultMaxAttempts)
	}
}

func TestConnectionFailureRetried(t *testing.T) {
	// A listener that accepts and immediately closes: the request fails
	// before any byte of a response.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	p := newProvider(t, "http://"+ln.Addr().String()+"/v1", func(c *providers.Config) { c.MaxAttempts = 3 })
	_, err = p.Stream(context.Background(), userReq("hi"))
	if err == nil || !strings.Contains(err.Error(), "gave up after 3 attempts") {
		t.Fatalf("err %v", err)
	}
	if n := len(accepted); n != 3 {
		t.Fatalf("%d connections, want 3", n)
	}
}

func TestEmptyOKResponseRetried(t *testing.T) {
	calls := 0
	srv := llmtest.Start(t, &scripted.Script{Turns: []scripted.Turn{{Text: "second try"}}})
	front := http.NewServeMux()
	front.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		calls++
		if calls == 1 {
			w.WriteHeader(http.StatusOK) // and no body at all
			return
		}
		proxy(t, w, r, srv.URL())
	})
	hs := &http.Server{Handler: front}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	p := newProvider(t, "http://"+ln.Addr().String()+"/v1", nil)
	ch, err := p.Stream(context.Background(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if a := drain(ch); a.text != "second try" || calls != 2 {
		t.Fatalf("answer %+v after %d calls", a, calls)
	}
}

// proxy forwards one request to the llmtest server and copies the answer.
func proxy(t *testing.T, w http.ResponseWriter, r *http.Request, base string) {
	var body bytes.Buffer
	_, _ = body.ReadFrom(r.Body)
	resp, err := http.Post(base+"/chat/completions", "application/json", &body)
	if err != nil {
		t.Error(err)
		return
	}
	defer resp.Body.Close()
	w.WriteHeader(resp.StatusCode)
	_, _ = body.ReadFrom(resp.Body)
	_, _ = w.Write(body.Bytes())
}

func TestCancelNotRetried(t *testing.T) {
	srv := llmtest.Start(t, &scripted.Script{Turns: []scripted.Turn{
		{Text: "slow", DelayMS: 5000},
		{Text: "must not be served"},
	}})
	p := newProvider(t, srv.URL(), nil)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := p.Stream(ctx, userReq("hi"))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if time.Since(start) > 3*time.Second {
		t.Fatal("cancel did not stop the request")
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}

func TestCancelDuringBackoff(t *testing.T) {
	srv := llmtest.Start(t, &scripted.Script{Turns: []scripted.Turn{
		{Status: 429, RetryAfter: "10"},
		{Text: "must not be served"},
	}})
	p := newProvider(t, srv.URL(), func(c *providers.Config) { c.RetryMaxDelay = 10 * time.Second })
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := p.Stream(ctx, userReq("hi"))
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err %v", err)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d requests, want 1", n)
	}
}

func TestStreamCutMidAnswer(t *testing.T) {
	srv := llmtest.Start(t, &scripted.Script{Turns: []scripted.Turn{
		{Text: "partial answer here", ChunkSize: 4, CutAfter: 2},
		{Text: "must not be served"},
	}})
	p := newProvider(t, srv.URL(), nil)
	ch, err := p.Stream(context.Background(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	a := drain(ch)
	if a.text != "partial " {
		t.Fatalf("partial text %q", a.text)
	}
	var se *openai.StreamError
	if !errors.As(a.err, &se) || se.Bytes != 8 {
		t.Fatalf("err %v", a.err)
	}
	if !strings.Contains(a.err.Error(), "deepseek: stream broken after 8 bytes of answer") {
		t.Fatalf("message %q", a.err.Error())
	}
	if a.final.FinishReason != "" {
		t.Fatalf("broken stream reported finish %q", a.final.FinishReason)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("a started stream was retried: %d requests", n)
	}
}

func TestTimeout(t *testing.T) {
	srv := llmtest.Start(t, &scripted.Script{Turns: []scripted.Turn{
		{Text: "abcdef", ChunkSize: 1, ChunkDelayMS: 200},
	}})
	p := newProvider(t, srv.URL(), func(c *providers.Config) { c.Timeout = 300 * time.Millisecond })
	ch, err := p.Stream(context.Background(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	a := drain(ch)
	if !errors.Is(a.err, context.DeadlineExceeded) || !strings.Contains(a.err.Error(), "timed out after 300ms") {
		t.Fatalf("err %v", a.err)
	}
	if a.text == "" || a.text == "abcdef" {
		t.Fatalf("text %q; want a partial answer", a.text)
	}
}

func TestWireQuirksOverHTTP(t *testing.T) {
	usage := &providers.Usage{PromptTokens: 50, CompletionTokens: 9, CacheHitTokens: 32, CacheMissTokens: 18}
	calls := []scripted.Call{{ID: "a", Name: "read", Arguments: `{"path":"x.go"}`}, {ID: "b", Name: "list"}}
	wires := map[string]*scripted.Wire{
		"plain":             nil,
		"empty first chunk": {EmptyFirstChunk: true},
		"index base 1":      {IndexBase: 1},
		"empty tool_calls":  {EmptyToolCalls: true},
		"name without args": {NameWithoutArguments: true},
		"usage every chunk": {UsageEveryChunk: true},
		"content parts":     {ContentParts: true},
		"reasoning field":   {ReasoningField: "reasoning"},
		"usage with finish": {UsageWithFinish: true},
		"no done, crlf":     {NoDone: true, CRLF: true, Keepalive: true},
	}
	for name, w := range wires {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.Start(t, &scripted.Script{Turns: []scripted.Turn{{
				Reasoning: "plan it", Text: "Reading.", ToolCalls: calls,
				ChunkSize: 1, Interleave: true, Usage: usage, Wire: w,
			}}})
			p := newProvider(t, srv.URL(), nil)
			ch, err := p.Stream(context.Background(), userReq("hi"))
			if err != nil {
				t.Fatal(err)
			}
			a := drain(ch)
			if a.err != nil {
				t.Fatal(a.err)
			}
			if a.text != "Reading." || a.reasoning != "plan it" {
				t.Fatalf("text %q reasoning %q", a.text, a.reasoning)
			}
			tc := a.final.ToolCalls
			if len(tc) != 2 || tc[0].ID != "a" || tc[0].Function.Arguments != `{"path":"x.go"}` || tc[1].Function.Name != "list" || tc[1].Function.Arguments != "{}" {
				t.Fatalf("calls %+v", tc)
			}
			if a.final.FinishReason != "tool_calls" {
				t.Fatalf("finish %q", a.final.FinishReason)
			}
			if a.final.Usage == nil || *a.final.Usage != *usage {
				t.Fatalf("usage %+v", a.final.Usage)
			}
		})
	}
}

func decodeBody(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("body is not JSON: %v\n%s", err, raw)
	}
	return m
}

func TestReasoningRoundTrip(t *testing.T) {
	srv := llmtest.Start(t, &scripted.Script{Turns: []scripted.Turn{
		{Reasoning: "need the file", ToolCalls: []scripted.Call{{ID: "c1", Name: "read", Arguments: `{"path":"a"}`}}},
		{Reasoning: "now answer", Text: "done"},
		{Text: "bye"},
	}})
	p := newProvider(t, srv.URL(), func(c *providers.Config) { c.Thinking = "enabled"; c.ReasoningEffort = "high" })
	msgs := []providers.Message{{Role: providers.RoleUser, Content: "read a"}}
	for range 2 {
		ch, err := p.Stream(context.Background(), providers.Request{Messages: msgs})
		if err != nil {
			t.Fatal(err)
		}
		a := drain(ch)
		msgs = append(msgs, providers.Message{Role: providers.RoleAssistant, Content: a.text, ReasoningContent: a.reasoning, ToolCalls: a.final.ToolCalls})
		for _, c := range a.final.ToolCalls {
			msgs = append(msgs, providers.Message{Role: providers.RoleTool, ToolCallID: c.ID, Content: "contents"})
		}
	}
	msgs = append(msgs, providers.Message{Role: providers.RoleUser, Content: "thanks"})
	ch, err := p.Stream(context.Background(), providers.Request{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	drain(ch)

	reqs := srv.Requests()
	body := decodeBody(t, reqs[2])
	sent := body["messages"].([]any)
	if len(sent) != 5 {
		t.Fatalf("%d messages sent", len(sent))
	}
	callMsg := sent[1].(map[string]any)
	if callMsg["reasoning_content"] != "need the file" || callMsg["tool_calls"] == nil {
		t.Fatalf("assistant tool-call message lost its reasoning: %v", callMsg)
	}
	if tool := sent[2].(map[string]any); tool["tool_call_id"] != "c1" {
		t.Fatalf("tool message %v", tool)
	}
	if plain := sent[3].(map[string]any); plain["reasoning_content"] != nil || plain["content"] != "done" {
		t.Fatalf("plain assistant message should not carry reasoning: %v", plain)
	}
	if th, _ := body["thinking"].(map[string]any); th["type"] != "enabled" || body["reasoning_effort"] != "high" {
		t.Fatalf("thinking options: %v %v", body["thinking"], body["reasoning_effort"])
	}
	if so, _ := body["stream_options"].(map[string]any); body["stream"] != true || so["include_usage"] != true {
		t.Fatalf("stream options: %v %v", body["stream"], body["stream_options"])
	}
	if body["model"] != "deepseek-chat" {
		t.Fatalf("model %v", body["model"])
	}
	// Each request's messages extend the previous request's byte for byte.
	prefix := func(raw []byte) []byte {
		i := bytes.Index(raw, []byte(`"messages":[`))
		j := bytes.Index(raw, []byte(`],"stream"`))
		return raw[i:j]
	}
	for i := 1; i < len(reqs); i++ {
		if !bytes.HasPrefix(prefix(reqs[i]), prefix(reqs[i-1])) {
			t.Fatalf("request %d does not extend request %d:\n%s\n%s", i, i-1, prefix(reqs[i-1]), prefix(reqs[i]))
		}
	}
}

func TestHeadersAndEncodedVerbatim(t *testing.T) {
	srv := llmtest.Start(t, &scripted.Script{Turns: []scripted.Turn{{Text: "ok"}}})
	p := newProvider(t, srv.URL(), func(c *providers.Config) {
		c.Headers = map[string]string{"X-Project": "reasonix"}
	})
	temp := 0.2
	enc := []json.RawMessage{
		json.RawMessage(`{"role":"system",  "content":"odd spacing kept"}`),
		json.RawMessage(`{"content":"hi","role":"user"}`),
	}
	tools := json.RawMessage(`[{"type":"function","function":{"name":"read","description":"r","parameters":{"type":"object"}}}]`)
	ch, err := p.Stream(context.Background(), providers.Request{
		Model:        "deepseek-reasoner",
		Messages:     []providers.Message{{Role: "system", Content: "ignored"}, {Role: "user", Content: "ignored"}},
		Encoded:      enc,
		EncodedTools: tools,
		MaxTokens:    100,
		Temperature:  &temp,
	})
	if err != nil {
		t.Fatal(err)
	}
	drain(ch)
	got := srv.Received()[0]
	if !bytes.Contains(got.Body, []byte(`"messages":[{"role":"system",  "content":"odd spacing kept"},{"content":"hi","role":"user"}]`)) {
		t.Fatalf("encoded messages not verbatim: %s", got.Body)
	}
	if !bytes.Contains(got.Body, []byte(`"tools":`+string(tools))) {
		t.Fatalf("encoded tools not verbatim: %s", got.Body)
	}
	body := decodeBody(t, got.Body)
	if body["model"] != "deepseek-reasoner" || body["max_tokens"] != 100.0 || body["temperature"] != 0.2 {
		t.Fatalf("body %v", body)
	}
	if _, ok := body["thinking"]; ok {
		t.Fatal("thinking sent though not configured")
	}
	if got.Header.Get("Authorization") != "Bearer sk-test" || got.Header.Get("X-Project") != "reasonix" {
		t.Fatalf("headers %v", got.Header)
	}
}

func TestAPIKeyFromEnv(t *testing.T) {
	t.Setenv("REASONIX_TEST_KEY", "sk-env")
	srv := llmtest.Start(t, &scripted.Script{Turns: []scripted.Turn{{Text: "ok"}}})
	p := newProvider(t, srv.URL(), func(c *providers.Config) { c.APIKey = ""; c.APIKeyEnv = "REASONIX_TEST_KEY" })
	ch, err := p.Stream(context.Background(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	drain(ch)
	if h := srv.Received()[0].Header.Get("Authorization"); h != "Bearer sk-env" {
		t.Fatalf("authorization %q", h)
	}
}

func TestNonStreamedAnswer(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/chat/completions", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":"whole","reasoning_content":"r","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}`))
	})
	hs := &http.Server{Handler: mux}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	p := newProvider(t, "http://"+ln.Addr().String()+"/v1", nil)
	ch, err := p.Stream(context.Background(), userReq("hi"))
	if err != nil {
		t.Fatal(err)
	}
	a := drain(ch)
	if a.err != nil || a.text != "whole" || a.reasoning != "r" || len(a.final.ToolCalls) != 1 || a.final.Usage.PromptTokens != 3 {
		t.Fatalf("answer %+v", a)
	}
}

func TestNewValidates(t *testing.T) {
	if _, err := providers.New(providers.Config{Name: "x", BaseURL: "localhost:8000"}); err == nil {
		t.Fatal("accepted a base URL without scheme")
	}
	p, err := providers.New(providers.Config{Name: "x", BaseURL: "http://localhost:8000/v1/"})
	if err != nil || p.Name() != "x" {
		t.Fatalf("%v %v", p, err)
	}
	if _, err := p.Stream(context.Background(), userReq("hi")); err == nil || !strings.Contains(err.Error(), "no model") {
		t.Fatalf("err %v", err)
	}
}
