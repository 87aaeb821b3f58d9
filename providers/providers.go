// Package providers defines the model-facing contract of Reasonix: the wire
// types every provider speaks, the Provider interface, a kind→factory
// registry, and resolution of model references against configured providers.
package providers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Message roles.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one chat message in OpenAI-compatible form. Content is always
// a plain string on the way out; providers normalise typed content parts on
// the way in.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	// ReasoningContent is the model's thinking text. It is stored on the
	// assistant message and sent back on assistant messages that carry tool
	// calls, which DeepSeek's thinking mode requires.
	ReasoningContent string     `json:"reasoning_content,omitempty"`
	ToolCalls        []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID       string     `json:"tool_call_id,omitempty"`
	Name             string     `json:"name,omitempty"`
	// Rules, on a tool result, are the rules files Reasonix attached to
	// it (a subfolder's CLAUDE.md, agents.NestedRules), as absolute
	// paths. Session state, not wire: the session file keeps them, so a
	// resumed session knows which rules its history holds without
	// trusting the result's text (a file the model read may imitate an
	// attachment); EncodeMessage leaves them out.
	Rules []string `json:"rules,omitempty"`
}

// ToolCall is one complete function call requested by the model.
type ToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function FunctionCall `json:"function"`
}

// FunctionCall names the function and carries its raw JSON arguments.
type FunctionCall struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolSpec is a function schema offered to the model.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// MarshalJSON encodes the spec in the OpenAI `{"type":"function",...}` form.
func (t ToolSpec) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := t.encode(&b); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// encode writes the spec as MarshalJSON's bytes, without reflection: the
// tools array is built at every session start, on the way to the first
// request.
func (t ToolSpec) encode(b *bytes.Buffer) error {
	b.WriteString(`{"type":"function","function":{"name":`)
	if err := writeString(b, t.Name); err != nil {
		return err
	}
	b.WriteString(`,"description":`)
	if err := writeString(b, t.Description); err != nil {
		return err
	}
	b.WriteString(`,"parameters":`)
	if len(t.Parameters) == 0 {
		b.WriteString("null")
	} else if err := json.Compact(b, t.Parameters); err != nil {
		return fmt.Errorf("tool %s: parameters: %w", t.Name, err)
	}
	b.WriteString("}}")
	return nil
}

// writeString writes s as json.Marshal does (HTML escaped).
func writeString(b *bytes.Buffer, s string) error {
	writeJSONString(b, s, true)
	return nil
}

// EncodeTools serialises specs as the request's tools array.
func EncodeTools(specs []ToolSpec) (json.RawMessage, error) {
	// Sized once: growing by doubling copies the array several times
	// over, in fresh memory, on the way to the first request.
	n := 2
	for _, t := range specs {
		n += 64 + len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	var b bytes.Buffer
	b.Grow(n + n/16)
	b.WriteByte('[')
	for i, t := range specs {
		if i > 0 {
			b.WriteByte(',')
		}
		if err := t.encode(&b); err != nil {
			return nil, err
		}
	}
	b.WriteByte(']')
	return b.Bytes(), nil
}

// Request is one streamed completion request. Encoded, when set, holds the
// wire bytes of each message (same length as Messages); providers send
// those bytes verbatim so a session serialises each message exactly once
// and every request extends the previous one byte for byte. EncodedTools
// likewise holds the pre-serialised tools array.
type Request struct {
	Model        string
	Messages     []Message
	Encoded      []json.RawMessage
	Tools        []ToolSpec
	EncodedTools json.RawMessage
	MaxTokens    int
	Temperature  *float64
	// Effort, when set, is sent as reasoning_effort instead of the
	// provider's configured one (a person's /effort).
	Effort string
}

// Usage is token accounting for one request.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	CacheHitTokens   int `json:"cache_hit_tokens"`
	CacheMissTokens  int `json:"cache_miss_tokens"`
	ReasoningTokens  int `json:"reasoning_tokens,omitempty"`
	// Cost is what the tokens cost in Currency, when the model's price
	// is known (Price.Cost); sessions fill it in, providers do not.
	Cost     float64 `json:"cost,omitempty"`
	Currency string  `json:"currency,omitempty"`
}

// Add accumulates u2 into u.
func (u *Usage) Add(u2 Usage) {
	u.PromptTokens += u2.PromptTokens
	u.CompletionTokens += u2.CompletionTokens
	u.CacheHitTokens += u2.CacheHitTokens
	u.CacheMissTokens += u2.CacheMissTokens
	u.ReasoningTokens += u2.ReasoningTokens
	u.Cost += u2.Cost
	if u.Currency == "" {
		u.Currency = u2.Currency
	}
}

// Chunk is one piece of a streamed response. A stream ends when the channel
// closes; if the last chunk has Err set, the stream failed and everything
// delivered before it is the partial answer.
type Chunk struct {
	Text         string
	Reasoning    string
	ToolCalls    []ToolCall // complete calls only
	Usage        *Usage
	FinishReason string
	Err          error
}

// Provider streams completions from one configured endpoint. Its errors,
// returned or carried by the final chunk, begin with the provider's name so
// callers can show them as they are.
type Provider interface {
	Name() string
	Stream(ctx context.Context, req Request) (<-chan Chunk, error)
}

// Config is one configured provider instance, already merged and expanded.
type Config struct {
	Name         string
	Kind         string // "openai" (default) or "scripted"
	BaseURL      string
	APIKey       string
	APIKeyEnv    string
	Models       []string
	DefaultModel string
	Headers      map[string]string
	Timeout      time.Duration
	// ConnectTimeout bounds connecting (TCP and TLS), FirstByteTimeout
	// the wait from sending a request to the first byte of the answer,
	// IdleTimeout silence inside a stream; zero means the provider's
	// default (openai: 10s, 60s, 120s).
	ConnectTimeout   time.Duration
	FirstByteTimeout time.Duration
	IdleTimeout      time.Duration
	// ContextWindow is the configured context size in tokens: > 0 set, 0
	// not configured (the model's known size applies, see WindowFor), < 0
	// configured as 0 (no window: no compaction, no size check).
	ContextWindow int
	// Thinking is "enabled", "disabled" or empty (not sent).
	Thinking        string
	ReasoningEffort string
	// MaxAttempts bounds retries (default 4). RetryBaseDelay and
	// RetryMaxDelay shape the backoff; zero means the provider default.
	MaxAttempts    int
	RetryBaseDelay time.Duration
	RetryMaxDelay  time.Duration
	// Script is the path of a scripted-provider script (kind "scripted").
	Script string
	// Price, when set, is what every model of the provider costs;
	// ModelPrices overrides it per model (PriceFor).
	Price       *Price
	ModelPrices map[string]Price
	// FlattenSchemas says whether deep tool schemas are advertised
	// flattened (nil: on for DeepSeek's API, off elsewhere).
	FlattenSchemas *bool
}
