// Package llmtest serves a script as an OpenAI-compatible chat completions
// endpoint over real HTTP, so provider and end-to-end tests exercise the
// same bytes, framing and failures a DeepSeek, OpenAI or vLLM server
// produces, without touching the network.
package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/providers/scripted"
)

// Received is one chat completions request as the server saw it.
type Received struct {
	Body   []byte
	Header http.Header
	At     time.Time
}

// Server is a scripted OpenAI-compatible server. Each POST to
// /v1/chat/completions consumes the next eligible turn of the script (see
// scripted.Queue.Next); a request whose body is not JSON gets a 400 and
// consumes nothing.
type Server struct {
	srv *httptest.Server
	q   *scripted.Queue

	mu    sync.Mutex
	reqs  []Received
	delay time.Duration
}

// SetDelay makes the server answer every request d after it arrives,
// unless its turn sets its own delay_ms: a stand-in for a real model's
// latency, so tests can measure what runs in parallel.
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	s.delay = d
	s.mu.Unlock()
}

// New starts a server for script. Close it when done.
func New(script *scripted.Script) *Server {
	s := &Server{q: scripted.NewQueue(script)}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.models)
	s.srv = httptest.NewServer(mux)
	return s
}

// Start is New with Close registered as tb's cleanup.
func Start(tb testing.TB, script *scripted.Script) *Server {
	tb.Helper()
	s := New(script)
	tb.Cleanup(s.Close)
	return s
}

// URL returns the base URL, ending in /v1, to configure as a provider's
// base_url.
func (s *Server) URL() string { return s.srv.URL + "/v1" }

// Close shuts the server down, breaking any stream still open.
func (s *Server) Close() {
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Queue exposes the turn queue, e.g. to check Remaining or Exhausted.
func (s *Server) Queue() *scripted.Queue { return s.q }

// Requests returns a copy of the body of every chat completions request
// received, in arrival order.
func (s *Server) Requests() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]byte, len(s.reqs))
	for i, r := range s.reqs {
		out[i] = bytes.Clone(r.Body)
	}
	return out
}

// Received returns every chat completions request received, with headers
// and arrival times, in arrival order.
func (s *Server) Received() []Received {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Received, len(s.reqs))
	for i, r := range s.reqs {
		out[i] = Received{Body: bytes.Clone(r.Body), Header: r.Header.Clone(), At: r.At}
	}
	return out
}

// models lists the one scripted model as vLLM does, with its context
// window (max_model_len).
func (s *Server) models(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"object":"list","data":[{"id":"scripted","object":"model","owned_by":"llmtest","max_model_len":32768}]}`)
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	s.mu.Lock()
	s.reqs = append(s.reqs, Received{Body: body, Header: r.Header.Clone(), At: time.Now()})
	delay := s.delay
	s.mu.Unlock()

	var head struct {
		Model string `json:"model"`
	}
	if err := json.Unmarshal(body, &head); err != nil {
		writeError(w, http.StatusBadRequest, "", "invalid JSON body: "+err.Error())
		return
	}
	turn, _ := s.q.Next(body)
	if turn.DelayMS > 0 {
		delay = time.Duration(turn.DelayMS) * time.Millisecond
	}
	if delay > 0 && !sleep(r.Context(), delay) {
		return
	}
	if turn.Status != 0 {
		writeError(w, turn.Status, turn.RetryAfter, turn.ErrorBody)
		return
	}
	st := &streamer{
		ctx:   r.Context(),
		w:     w,
		turn:  turn,
		model: head.Model,
		nl:    "\n",
	}
	if turn.Wire != nil {
		st.wire = *turn.Wire
	}
	if st.wire.CRLF {
		st.nl = "\r\n"
	}
	st.run()
}

// writeError sends an error response in the OpenAI shape; msg starting
// with '{' is sent verbatim so scripts can reproduce odd error bodies.
func writeError(w http.ResponseWriter, status int, retryAfter, msg string) {
	if retryAfter != "" {
		w.Header().Set("Retry-After", retryAfter)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if strings.HasPrefix(msg, "{") {
		_, _ = io.WriteString(w, msg)
		return
	}
	if msg == "" {
		msg = http.StatusText(status)
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": msg,
		"type":    errorType(status),
		"code":    nil,
	}})
	_, _ = w.Write(b)
}

func errorType(status int) string {
	switch {
	case status == http.StatusUnauthorized:
		return "authentication_error"
	case status == http.StatusTooManyRequests:
		return "rate_limit_error"
	case status >= 500:
		return "server_error"
	default:
		return "invalid_request_error"
	}
}

// streamer writes one turn as an SSE stream.
type streamer struct {
	ctx   context.Context
	w     http.ResponseWriter
	turn  scripted.Turn
	wire  scripted.Wire
	model string
	nl    string

	written int // chunks written, for delays
	content int // content chunks written, for CutAfter and running usage
}

// errStop ends a stream early: the client went away.
type errStop struct{}

func (st *streamer) run() {
	h := st.w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	st.w.WriteHeader(http.StatusOK)
	defer func() {
		if v := recover(); v != nil {
			if _, ok := v.(errStop); !ok {
				panic(v)
			}
		}
	}()
	t := st.turn
	if st.wire.EmptyFirstChunk {
		st.chunk(nil, nil, false)
	}
	st.chunk(map[string]any{"role": "assistant", "content": ""}, nil, false)
	rfield := st.wire.ReasoningField
	if rfield == "" {
		rfield = "reasoning_content"
	}
	for _, p := range scripted.Pieces(t.Reasoning, t.ChunkSize) {
		d := map[string]any{rfield: p, "content": nil}
		if st.wire.EmptyToolCalls {
			d["tool_calls"] = []any{}
		}
		st.chunk(d, nil, true)
	}
	for _, p := range scripted.Pieces(t.Text, t.ChunkSize) {
		var c any = p
		if st.wire.ContentParts {
			c = []any{map[string]any{"type": "text", "text": p}}
		}
		st.chunk(map[string]any{"content": c}, nil, true)
	}
	st.toolCalls()
	finish := "stop"
	if len(t.ToolCalls) > 0 {
		finish = "tool_calls"
	}
	if t.FinishReason != "" {
		finish = t.FinishReason
	}
	var final *wireUsage
	if t.Usage != nil {
		final = toWire(*t.Usage)
	}
	if st.wire.UsageWithFinish {
		st.write(st.envelope(map[string]any{}, &finish, final))
	} else {
		st.chunk(map[string]any{}, &finish, false)
		if final != nil {
			st.write(st.envelope(nil, nil, final))
		}
	}
	if !st.wire.NoDone {
		st.line("data: [DONE]")
	}
}

// toolCalls writes each call's header delta (index, id, name) and then its
// argument pieces, either call after call or, with Interleave, all
// headers first and then the pieces of every call in turn.
func (st *streamer) toolCalls() {
	t := st.turn
	pieces := make([][]string, len(t.ToolCalls))
	for i, c := range t.ToolCalls {
		pieces[i] = scripted.Pieces(c.Arguments, t.ChunkSize)
	}
	header := func(i int) {
		c := t.ToolCalls[i]
		fn := map[string]any{"name": c.Name}
		if !st.wire.NameWithoutArguments {
			fn["arguments"] = ""
		}
		st.chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": i + st.wire.IndexBase, "id": c.ID, "type": "function", "function": fn,
		}}}, nil, true)
	}
	piece := func(i int, p string) {
		st.chunk(map[string]any{"tool_calls": []any{map[string]any{
			"index": i + st.wire.IndexBase, "function": map[string]any{"arguments": p},
		}}}, nil, true)
	}
	if !t.Interleave {
		for i := range t.ToolCalls {
			header(i)
			for _, p := range pieces[i] {
				piece(i, p)
			}
		}
		return
	}
	for i := range t.ToolCalls {
		header(i)
	}
	for k := 0; ; k++ {
		more := false
		for i := range pieces {
			if k < len(pieces[i]) {
				piece(i, pieces[i][k])
				more = true
			}
		}
		if !more {
			return
		}
	}
}

type wireChunk struct {
	ID      string       `json:"id"`
	Object  string       `json:"object"`
	Created int64        `json:"created"`
	Model   string       `json:"model"`
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage,omitempty"`
}

type wireChoice struct {
	Index        int            `json:"index"`
	Delta        map[string]any `json:"delta"`
	Logprobs     any            `json:"logprobs"`
	FinishReason *string        `json:"finish_reason"`
}

type wireUsage struct {
	PromptTokens            int            `json:"prompt_tokens"`
	CompletionTokens        int            `json:"completion_tokens"`
	TotalTokens             int            `json:"total_tokens"`
	PromptCacheHitTokens    int            `json:"prompt_cache_hit_tokens"`
	PromptCacheMissTokens   int            `json:"prompt_cache_miss_tokens"`
	PromptTokensDetails     map[string]int `json:"prompt_tokens_details"`
	CompletionTokensDetails map[string]int `json:"completion_tokens_details,omitempty"`
}

func toWire(u providers.Usage) *wireUsage {
	w := &wireUsage{
		PromptTokens:          u.PromptTokens,
		CompletionTokens:      u.CompletionTokens,
		TotalTokens:           u.PromptTokens + u.CompletionTokens,
		PromptCacheHitTokens:  u.CacheHitTokens,
		PromptCacheMissTokens: u.CacheMissTokens,
		PromptTokensDetails:   map[string]int{"cached_tokens": u.CacheHitTokens},
	}
	if u.ReasoningTokens > 0 {
		w.CompletionTokensDetails = map[string]int{"reasoning_tokens": u.ReasoningTokens}
	}
	return w
}

// envelope wraps a delta in a chunk; a nil delta makes a chunk with no
// choices, as the trailing usage chunk and the Azure preamble have.
func (st *streamer) envelope(delta map[string]any, finish *string, usage *wireUsage) wireChunk {
	c := wireChunk{
		ID:      "chatcmpl-llmtest",
		Object:  "chat.completion.chunk",
		Created: 1700000000,
		Model:   st.model,
		Choices: []wireChoice{},
		Usage:   usage,
	}
	if delta != nil {
		c.Choices = append(c.Choices, wireChoice{Delta: delta, FinishReason: finish})
	}
	return c
}

// chunk writes one delta; content marks chunks that count for CutAfter.
func (st *streamer) chunk(delta map[string]any, finish *string, content bool) {
	c := st.envelope(delta, finish, nil)
	if content {
		st.content++
	}
	if st.wire.UsageEveryChunk {
		var u providers.Usage
		if st.turn.Usage != nil {
			u = *st.turn.Usage
		}
		// A running count, as vLLM reports it: the prompt is known, the
		// completion grows; only the last usage seen is the total.
		u.CompletionTokens = st.content
		c.Usage = toWire(u)
	}
	st.write(c)
	if content && st.turn.CutAfter > 0 && st.content == st.turn.CutAfter {
		// Abort without the terminating chunk of the chunked encoding, so
		// the client sees the connection break mid-stream.
		panic(http.ErrAbortHandler)
	}
}

func (st *streamer) write(c wireChunk) {
	if st.written > 0 && st.turn.ChunkDelayMS > 0 {
		if !sleep(st.ctx, time.Duration(st.turn.ChunkDelayMS)*time.Millisecond) {
			panic(errStop{})
		}
	}
	st.written++
	b, err := json.Marshal(c)
	if err != nil {
		panic(fmt.Sprintf("llmtest: encode chunk: %v", err))
	}
	if st.wire.Keepalive {
		st.line(": keep-alive")
	}
	st.line("data: " + string(b))
}

// line writes one SSE event line followed by the blank line ending it.
func (st *streamer) line(s string) {
	if _, err := io.WriteString(st.w, s+st.nl+st.nl); err != nil {
		panic(errStop{})
	}
	if f, ok := st.w.(http.Flusher); ok {
		f.Flush()
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
