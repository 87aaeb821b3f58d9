package openai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"unicode/utf8"

	"github.com/reasonix/reasonix/providers"
)

// errStopped reports that the consumer stopped accepting chunks.
var errStopped = errors.New("consumer stopped")

// wireChunk is the part of a chat.completion.chunk this provider reads;
// everything else (ids, logprobs, vendor extensions) is skipped by the
// decoder without being stored.
type wireChunk struct {
	Choices []wireChoice `json:"choices"`
	Usage   *wireUsage   `json:"usage"`
	Error   *wireError   `json:"error"`
}

type wireChoice struct {
	Index        int       `json:"index"`
	Delta        wireDelta `json:"delta"`
	FinishReason *string   `json:"finish_reason"`
}

type wireDelta struct {
	Content          text            `json:"content"`
	ReasoningContent text            `json:"reasoning_content"`
	Reasoning        text            `json:"reasoning"`
	ToolCalls        []wireToolDelta `json:"tool_calls"`
}

type wireToolDelta struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments text   `json:"arguments"`
	} `json:"function"`
}

type wireUsage struct {
	PromptTokens          int  `json:"prompt_tokens"`
	CompletionTokens      int  `json:"completion_tokens"`
	PromptCacheHitTokens  *int `json:"prompt_cache_hit_tokens"`
	PromptCacheMissTokens *int `json:"prompt_cache_miss_tokens"`
	PromptTokensDetails   *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// usage maps the wire usage onto providers.Usage. DeepSeek reports cache
// hits and misses directly; OpenAI-style servers report cached prompt
// tokens, and everything else in the prompt was a miss.
func (w *wireUsage) usage() providers.Usage {
	u := providers.Usage{PromptTokens: w.PromptTokens, CompletionTokens: w.CompletionTokens}
	switch {
	case w.PromptCacheHitTokens != nil || w.PromptCacheMissTokens != nil:
		if w.PromptCacheHitTokens != nil {
			u.CacheHitTokens = *w.PromptCacheHitTokens
		}
		if w.PromptCacheMissTokens != nil {
			u.CacheMissTokens = *w.PromptCacheMissTokens
		} else {
			u.CacheMissTokens = max(0, u.PromptTokens-u.CacheHitTokens)
		}
	case w.PromptTokensDetails != nil:
		u.CacheHitTokens = w.PromptTokensDetails.CachedTokens
		u.CacheMissTokens = max(0, u.PromptTokens-u.CacheHitTokens)
	default:
		u.CacheMissTokens = u.PromptTokens
	}
	if w.CompletionTokensDetails != nil {
		u.ReasoningTokens = w.CompletionTokensDetails.ReasoningTokens
	}
	return u
}

type wireError struct {
	Message string `json:"message"`
	Type    string `json:"type"`
	Code    any    `json:"code"`
}

// text is a content field that servers send as a string, as null, or as
// an array of typed parts ([{"type":"text","text":"..."}]); it decodes
// all three to the plain text.
type text string

// UnmarshalJSON implements json.Unmarshaler.
func (t *text) UnmarshalJSON(data []byte) error {
	switch {
	case len(data) == 0 || data[0] == 'n':
		*t = ""
		return nil
	case data[0] == '"':
		// Most deltas have no escapes; slicing the quotes off avoids the
		// general string decoder on the hot path.
		if len(data) >= 2 && bytes.IndexByte(data, '\\') < 0 && utf8.Valid(data) {
			*t = text(data[1 : len(data)-1])
			return nil
		}
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*t = text(s)
		return nil
	case data[0] == '[':
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		if err := json.Unmarshal(data, &parts); err != nil {
			return err
		}
		var s []byte
		for _, p := range parts {
			if p.Type == "" || p.Type == "text" || p.Type == "output_text" {
				s = append(s, p.Text...)
			}
		}
		*t = text(s)
		return nil
	default:
		// A number or object where text belongs: keep its JSON rather
		// than failing the whole stream.
		*t = text(data)
		return nil
	}
}

// call accumulates one tool call's deltas.
type call struct {
	index int
	id    string
	name  string
	args  []byte
}

// decoder turns an SSE byte stream into chunks. It is not safe for
// concurrent use; one decoder serves one stream.
type decoder struct {
	provider string
	calls    []call
	usage    *providers.Usage
	finish   string
	done     bool
	answered int // bytes of reasoning, text and arguments received
	line     []byte

	// One json.Decoder is reused for every payload: unlike
	// json.Unmarshal it keeps its scanner state and buffer between
	// values, which halves the allocations per chunk.
	payload bytes.Reader
	json    *json.Decoder
	fed     int64 // payload bytes given to json
}

// readStream decodes r until [DONE] or the end of the stream, sending the
// answer through emit, which reports false when the consumer has gone.
// The last emitted chunk carries the complete tool calls, usage and finish
// reason. An error means the stream failed; everything emitted before it
// is the partial answer.
func (d *decoder) readStream(r *bufio.Reader, emit func(providers.Chunk) bool) error {
	for !d.done {
		line, err := d.readLine(r)
		if len(line) > 0 {
			if perr := d.handleLine(line, emit); perr != nil {
				return perr
			}
		}
		if err != nil {
			if d.done || (err == io.EOF && d.finish != "") {
				break
			}
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return &StreamError{Provider: d.provider, Bytes: d.answered, Err: err}
		}
	}
	return d.final(emit)
}

// readLine returns the next line without its line ending. The returned
// slice is only valid until the next call.
func (d *decoder) readLine(r *bufio.Reader) ([]byte, error) {
	line, err := r.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		// A line longer than the buffer (a large argument delta):
		// assemble it in the decoder's own, reused buffer.
		d.line = append(d.line[:0], line...)
		for err == bufio.ErrBufferFull {
			line, err = r.ReadSlice('\n')
			d.line = append(d.line, line...)
		}
		line = d.line
	}
	for len(line) > 0 && (line[len(line)-1] == '\n' || line[len(line)-1] == '\r') {
		line = line[:len(line)-1]
	}
	return line, err
}

var (
	dataPrefix = []byte("data:")
	doneMarker = []byte("[DONE]")
)

func (d *decoder) handleLine(line []byte, emit func(providers.Chunk) bool) error {
	// SSE comments (": keep-alive", ": ping") and the event:, id: and
	// retry: fields carry nothing for chat completions.
	payload, ok := bytes.CutPrefix(line, dataPrefix)
	if !ok {
		return nil
	}
	payload = bytes.TrimSpace(payload)
	if len(payload) == 0 {
		return nil
	}
	if bytes.Equal(payload, doneMarker) {
		d.done = true
		return nil
	}
	if d.json == nil {
		d.json = json.NewDecoder(&d.payload)
	}
	d.payload.Reset(payload)
	var c wireChunk
	d.fed += int64(len(payload))
	err := d.json.Decode(&c)
	if err == nil && d.json.InputOffset() != d.fed {
		// The payload was trimmed, so the value must end it; leftovers
		// would be glued to the next payload.
		err = errors.New("trailing data")
	}
	if err != nil {
		return &StreamError{Provider: d.provider, Bytes: d.answered, Err: fmt.Errorf("malformed chunk %.200q: %w", payload, err)}
	}
	return d.apply(&c, emit)
}

func (d *decoder) apply(c *wireChunk, emit func(providers.Chunk) bool) error {
	if c.Error != nil {
		msg := c.Error.Message
		if msg == "" {
			msg = c.Error.Type
		}
		return &StreamError{Provider: d.provider, Bytes: d.answered, Err: fmt.Errorf("server error: %s", msg)}
	}
	if c.Usage != nil {
		// Servers with continuous usage stats send it on every chunk;
		// the last one is the total.
		u := c.Usage.usage()
		d.usage = &u
	}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.Index != 0 {
			continue
		}
		reasoning := string(ch.Delta.ReasoningContent)
		if reasoning == "" {
			reasoning = string(ch.Delta.Reasoning)
		}
		content := string(ch.Delta.Content)
		for _, tc := range ch.Delta.ToolCalls {
			d.addCall(tc)
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			d.finish = *ch.FinishReason
		}
		if reasoning != "" || content != "" {
			d.answered += len(reasoning) + len(content)
			if !emit(providers.Chunk{Reasoning: reasoning, Text: content}) {
				return errStopped
			}
		}
	}
	return nil
}

// addCall folds one tool-call delta into its call, found by index. A
// delta without an index continues the latest call unless it brings a new
// id, which some servers use instead of indexes.
func (d *decoder) addCall(tc wireToolDelta) {
	var c *call
	switch {
	case tc.Index != nil:
		for i := range d.calls {
			if d.calls[i].index == *tc.Index {
				c = &d.calls[i]
				break
			}
		}
		if c == nil {
			d.calls = append(d.calls, call{index: *tc.Index})
			c = &d.calls[len(d.calls)-1]
		}
	case len(d.calls) > 0 && (tc.ID == "" || tc.ID == d.calls[len(d.calls)-1].id):
		c = &d.calls[len(d.calls)-1]
	default:
		next := 0
		if n := len(d.calls); n > 0 {
			next = d.calls[n-1].index + 1
		}
		d.calls = append(d.calls, call{index: next})
		c = &d.calls[len(d.calls)-1]
	}
	if c.id == "" {
		c.id = tc.ID
	}
	// Names normally come whole in the first delta; a server that
	// repeats the name on later deltas must not double it.
	if n := tc.Function.Name; n != "" && n != c.name {
		c.name += n
	}
	c.args = append(c.args, tc.Function.Arguments...)
	d.answered += len(tc.Function.Arguments)
}

// final emits the closing chunk: the complete calls in index order, the
// last usage seen and the finish reason.
func (d *decoder) final(emit func(providers.Chunk) bool) error {
	out := providers.Chunk{Usage: d.usage, FinishReason: d.finish}
	if len(d.calls) > 0 {
		sort.SliceStable(d.calls, func(i, j int) bool { return d.calls[i].index < d.calls[j].index })
		out.ToolCalls = make([]providers.ToolCall, 0, len(d.calls))
		for _, c := range d.calls {
			if c.name == "" {
				// A call with no name cannot be executed or answered;
				// dropping it beats sending the model an unanswerable id.
				continue
			}
			args := string(bytes.TrimSpace(c.args))
			if args == "" {
				args = "{}"
			}
			id := c.id
			if id == "" {
				id = "call_" + strconv.Itoa(c.index)
			}
			out.ToolCalls = append(out.ToolCalls, providers.ToolCall{
				ID: id, Type: "function",
				Function: providers.FunctionCall{Name: c.name, Arguments: args},
			})
		}
	}
	if out.FinishReason == "" {
		out.FinishReason = "stop"
		if len(out.ToolCalls) > 0 {
			out.FinishReason = "tool_calls"
		}
	}
	if !emit(out) {
		return errStopped
	}
	return nil
}
