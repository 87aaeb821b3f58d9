package openai

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"

	"github.com/reasonix/reasonix/providers"
)

// EncodeBody builds the JSON body of a streamed /chat/completions request.
// The model is req.Model, else cfg's default model. Pre-encoded messages
// and tools (req.Encoded, req.EncodedTools) are copied verbatim so that
// the prompt prefix stays byte-identical across a session's requests.
func EncodeBody(req providers.Request, cfg providers.Config) ([]byte, error) {
	model := req.Model
	if model == "" {
		model = cfg.DefaultModel
	}
	if model == "" && len(cfg.Models) > 0 {
		model = cfg.Models[0]
	}
	if model == "" {
		return nil, fmt.Errorf("encode request: no model")
	}
	if len(req.Encoded) > 0 && len(req.Messages) > 0 && len(req.Encoded) != len(req.Messages) {
		return nil, fmt.Errorf("encode request: %d encoded messages for %d messages", len(req.Encoded), len(req.Messages))
	}

	size := 256 + len(req.EncodedTools)
	for _, m := range req.Encoded {
		size += len(m) + 1
	}
	var b bytes.Buffer
	b.Grow(size)
	b.WriteString(`{"model":`)
	writeJSON(&b, model)
	b.WriteString(`,"messages":[`)
	if len(req.Encoded) > 0 {
		for i, m := range req.Encoded {
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(m)
		}
	} else {
		for i, m := range req.Messages {
			raw, err := providers.EncodeMessage(m)
			if err != nil {
				return nil, fmt.Errorf("encode request: message %d: %w", i, err)
			}
			if i > 0 {
				b.WriteByte(',')
			}
			b.Write(raw)
		}
	}
	b.WriteByte(']')
	switch {
	case len(req.EncodedTools) > 0:
		b.WriteString(`,"tools":`)
		b.Write(req.EncodedTools)
	case len(req.Tools) > 0:
		raw, err := json.Marshal(req.Tools)
		if err != nil {
			return nil, fmt.Errorf("encode request: tools: %w", err)
		}
		b.WriteString(`,"tools":`)
		b.Write(raw)
	}
	b.WriteString(`,"stream":true,"stream_options":{"include_usage":true}`)
	if req.MaxTokens > 0 {
		fmt.Fprintf(&b, `,"max_tokens":%d`, req.MaxTokens)
	}
	if req.Temperature != nil {
		raw, err := json.Marshal(*req.Temperature)
		if err != nil {
			return nil, fmt.Errorf("encode request: temperature: %w", err)
		}
		b.WriteString(`,"temperature":`)
		b.Write(raw)
	}
	if cfg.Thinking != "" {
		b.WriteString(`,"thinking":{"type":`)
		writeJSON(&b, cfg.Thinking)
		b.WriteByte('}')
	}
	if effort := cmp.Or(req.Effort, cfg.ReasoningEffort); effort != "" {
		b.WriteString(`,"reasoning_effort":`)
		writeJSON(&b, effort)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// writeJSON writes a string as a JSON string; marshalling a string cannot
// fail.
func writeJSON(b *bytes.Buffer, s string) {
	raw := providers.QuoteJSON(s)
	b.Write(raw)
}
