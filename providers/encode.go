package providers

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// EncodeMessage serialises one message exactly as it goes on the wire.
// Sessions use it to fill Request.Encoded and OpenAI-compatible providers
// use it for messages that arrive unencoded, so both produce the same bytes
// and each request extends the previous one byte for byte.
//
// ReasoningContent is kept only on assistant messages that carry tool
// calls: DeepSeek's thinking mode requires the reasoning back within a tool
// loop, while other servers reject it on ordinary turns, and resending it
// on final answers would only grow the prompt. The stored message (and the
// transcript) keeps the reasoning; only the wire form drops it.
func EncodeMessage(m Message) (json.RawMessage, error) {
	if m.ReasoningContent != "" && (m.Role != RoleAssistant || len(m.ToolCalls) == 0) {
		m.ReasoningContent = ""
	}
	// Code is full of <, > and &; escaping them would only make the
	// history longer and harder to read in captures.
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("encode %s message: %w", m.Role, err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}
