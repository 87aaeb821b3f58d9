// Package scripted replays scripted model turns. The same script format
// drives the in-process "scripted" provider (tests, demos, bug
// reproductions) and the OpenAI-compatible HTTP test server in
// internal/llmtest, so one script can exercise a session either way.
package scripted

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"sync"

	"github.com/reasonix/reasonix/providers"
)

// ExhaustedText is the answer served once every turn of a script has been
// consumed; a session seeing it knows the script was too short.
const ExhaustedText = "(script exhausted)"

// Call is one tool call a turn asks for.
type Call struct {
	ID        string `json:"id,omitempty"`
	Name      string `json:"name"`
	Arguments string `json:"arguments,omitempty"`
}

// Turn is one scripted model response.
type Turn struct {
	// Match, when set, reserves the turn for requests whose body contains
	// this substring, so concurrent sessions each get their own turns.
	// In-process the body is the JSON encoding of the messages, so pick
	// substrings without characters JSON escapes (quotes, <, >, &).
	Match     string `json:"match,omitempty"`
	Text      string `json:"text,omitempty"`
	Reasoning string `json:"reasoning,omitempty"`
	ToolCalls []Call `json:"tool_calls,omitempty"`
	// Status makes the turn an HTTP error (429, 500, 400...) instead of a
	// stream. RetryAfter is the Retry-After header sent with it. ErrorBody
	// is the error message, or the whole response body when it starts
	// with '{'.
	Status     int    `json:"status,omitempty"`
	RetryAfter string `json:"retry_after,omitempty"`
	ErrorBody  string `json:"error_body,omitempty"`
	// DelayMS waits before responding; ChunkDelayMS waits between chunks.
	DelayMS      int `json:"delay_ms,omitempty"`
	ChunkDelayMS int `json:"chunk_delay_ms,omitempty"`
	// CutAfter breaks the stream after that many content chunks (chunks
	// carrying reasoning, text or tool-call pieces); 0 never breaks.
	CutAfter int `json:"cut_after,omitempty"`
	// ChunkSize splits reasoning, text and arguments into pieces of this
	// many runes; 0 sends each whole.
	ChunkSize int `json:"chunk_size,omitempty"`
	// Interleave alternates the argument pieces of parallel tool calls.
	Interleave bool             `json:"interleave,omitempty"`
	Usage      *providers.Usage `json:"usage,omitempty"`
	// FinishReason overrides the finish reason sent ("stop", or
	// "tool_calls" for a turn with calls): "length" reproduces an answer
	// or arguments cut by the output token limit.
	FinishReason string `json:"finish_reason,omitempty"`
	// Wire holds quirks of real servers that only the HTTP test server
	// reproduces; the in-process provider ignores it.
	Wire *Wire `json:"wire,omitempty"`
}

// Wire selects server quirks for the HTTP test server, so the openai
// provider can be tested against each of them over a real connection.
type Wire struct {
	// EmptyFirstChunk sends a first chunk with no choices (Azure-style
	// prompt-filter preamble).
	EmptyFirstChunk bool `json:"empty_first_chunk,omitempty"`
	// IndexBase is added to every tool_calls index (1 reproduces servers
	// that count from one).
	IndexBase int `json:"index_base,omitempty"`
	// EmptyToolCalls adds "tool_calls": [] beside reasoning_content.
	EmptyToolCalls bool `json:"empty_tool_calls,omitempty"`
	// NameWithoutArguments omits the arguments field from the delta that
	// carries a call's id and name.
	NameWithoutArguments bool `json:"name_without_arguments,omitempty"`
	// UsageEveryChunk attaches a running usage object to every chunk, as
	// vLLM does with continuous usage stats.
	UsageEveryChunk bool `json:"usage_every_chunk,omitempty"`
	// ContentParts sends content as an array of typed parts
	// ([{"type":"text","text":...}]) instead of a string.
	ContentParts bool `json:"content_parts,omitempty"`
	// ReasoningField names the reasoning delta field (default
	// "reasoning_content"; vLLM and OpenRouter use "reasoning").
	ReasoningField string `json:"reasoning_field,omitempty"`
	// UsageWithFinish puts usage in the chunk carrying finish_reason
	// (DeepSeek) instead of a trailing chunk with no choices (OpenAI).
	UsageWithFinish bool `json:"usage_with_finish,omitempty"`
	// NoDone ends the stream after finish_reason without "data: [DONE]".
	NoDone bool `json:"no_done,omitempty"`
	// CRLF ends lines with \r\n.
	CRLF bool `json:"crlf,omitempty"`
	// Keepalive sends an SSE comment (": keep-alive") before each chunk.
	Keepalive bool `json:"keepalive,omitempty"`
}

// Script is an ordered list of turns.
type Script struct {
	Turns []Turn `json:"turns"`
}

// Load reads and parses a script file.
func Load(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("load script: %w", err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("load script %s: %w", path, err)
	}
	return s, nil
}

// Parse decodes a script: either {"turns":[...]} or a bare array of turns.
// Unknown fields are rejected because a misspelt knob in a test script
// would otherwise silently do nothing.
func Parse(data []byte) (*Script, error) {
	data = bytes.TrimSpace(data)
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	s := &Script{}
	var err error
	if len(data) > 0 && data[0] == '[' {
		err = dec.Decode(&s.Turns)
	} else {
		err = dec.Decode(s)
	}
	if err != nil {
		return nil, fmt.Errorf("parse script: %w", err)
	}
	for i, t := range s.Turns {
		if t.Status != 0 && (t.Status < 100 || t.Status > 599) {
			return nil, fmt.Errorf("parse script: turn %d: invalid status %d", i, t.Status)
		}
		if t.ChunkSize < 0 || t.CutAfter < 0 || t.DelayMS < 0 || t.ChunkDelayMS < 0 {
			return nil, fmt.Errorf("parse script: turn %d: negative size or delay", i)
		}
		for j, c := range t.ToolCalls {
			if c.Name == "" {
				return nil, fmt.Errorf("parse script: turn %d: tool call %d has no name", i, j)
			}
		}
	}
	return s, nil
}

// Queue hands out a script's turns to concurrent consumers. Each turn is
// served at most once.
type Queue struct {
	mu    sync.Mutex
	turns []Turn
	used  []bool
	first int // every turn before first is used
	left  int
	// matched counts unused turns with a Match, so callers can skip
	// building a request body when nothing needs it.
	matched   int
	exhausted int
}

// NewQueue returns a queue over a copy of the script's turns.
func NewQueue(s *Script) *Queue {
	q := &Queue{}
	if s != nil {
		q.turns = append([]Turn(nil), s.Turns...)
	}
	q.used = make([]bool, len(q.turns))
	q.left = len(q.turns)
	for _, t := range q.turns {
		if t.Match != "" {
			q.matched++
		}
	}
	return q
}

// Next consumes and returns the first unused turn that is eligible for
// body: turns are scanned in order and a turn whose Match is set but not
// contained in body is skipped. When no turn is eligible it returns a text
// turn saying ExhaustedText and false. Calls without an id get
// "call_<turn>_<call>", from their position in the script.
func (q *Queue) Next(body []byte) (Turn, bool) {
	return q.next(func() []byte { return body })
}

// next is Next with a lazily built body: the body is only requested when
// an unused turn has a Match.
func (q *Queue) next(body func() []byte) (Turn, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	var b []byte
	haveBody := false
	for i := q.first; i < len(q.turns); i++ {
		if q.used[i] {
			continue
		}
		t := q.turns[i]
		if t.Match != "" {
			if !haveBody {
				b, haveBody = body(), true
			}
			if !bytes.Contains(b, []byte(t.Match)) {
				continue
			}
			q.matched--
		}
		q.used[i] = true
		q.left--
		t.ToolCalls = withIDs(t.ToolCalls, i)
		for q.first < len(q.used) && q.used[q.first] {
			q.first++
		}
		return t, true
	}
	q.exhausted++
	return Turn{Text: ExhaustedText}, false
}

// NeedsBody reports whether an unused turn has a Match, i.e. whether the
// next call to Next looks at its body.
func (q *Queue) NeedsBody() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.matched > 0
}

// Remaining returns how many turns have not been served.
func (q *Queue) Remaining() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.left
}

// Exhausted returns how many requests found no eligible turn.
func (q *Queue) Exhausted() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.exhausted
}

// Pieces splits s into pieces of n runes; n <= 0 keeps s whole. An empty s
// yields no pieces.
func Pieces(s string, n int) []string {
	if s == "" {
		return nil
	}
	if n <= 0 {
		return []string{s}
	}
	out := make([]string, 0, len(s)/n+1)
	start, count := 0, 0
	for i := range s {
		if count == n {
			out = append(out, s[start:i])
			start, count = i, 0
		}
		count++
	}
	return append(out, s[start:])
}

// withIDs gives every call without an id one derived from its position in
// the script, so ids are stable across runs and unique within a session
// (front ends and stores key tool calls by id).
func withIDs(calls []Call, turn int) []Call {
	missing := false
	for _, c := range calls {
		missing = missing || c.ID == ""
	}
	if !missing {
		return calls
	}
	out := make([]Call, len(calls))
	for j, c := range calls {
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%d_%d", turn, j)
		}
		out[j] = c
	}
	return out
}

// CallArguments returns the arguments a call is sent with; an empty
// argument string becomes "{}" because tools expect a JSON object.
func CallArguments(c Call) string {
	if c.Arguments == "" {
		return "{}"
	}
	return c.Arguments
}
