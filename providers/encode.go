package providers

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
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
//
// Rules are session state and never sent. Otherwise the bytes are
// encoding/json's for Message with HTML escaping off (a test holds them
// equal), written without reflection: the first message of a
// process is its system prompt, on the way to the first request, and
// building encoding/json's reflected encoder for these types and growing
// its buffer cost more than the rest of the encoding.
func EncodeMessage(m Message) (json.RawMessage, error) {
	if m.ReasoningContent != "" && (m.Role != RoleAssistant || len(m.ToolCalls) == 0) {
		m.ReasoningContent = ""
	}
	n := 64 + len(m.Role) + len(m.Content) + len(m.ReasoningContent) + len(m.ToolCallID) + len(m.Name)
	for _, c := range m.ToolCalls {
		n += 64 + len(c.ID) + len(c.Type) + len(c.Function.Name) + len(c.Function.Arguments)
	}
	var b bytes.Buffer
	b.Grow(n + n/16)
	// Code is full of <, > and &; escaping them would only make the
	// history longer and harder to read in captures.
	field := func(name, v string, first bool) {
		if !first {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(name)
		b.WriteString(`":`)
		writeJSONString(&b, v, false)
	}
	b.WriteByte('{')
	field("role", m.Role, true)
	field("content", m.Content, false)
	if m.ReasoningContent != "" {
		field("reasoning_content", m.ReasoningContent, false)
	}
	if len(m.ToolCalls) > 0 {
		b.WriteString(`,"tool_calls":[`)
		for i, c := range m.ToolCalls {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('{')
			field("id", c.ID, true)
			field("type", c.Type, false)
			b.WriteString(`,"function":{`)
			field("name", c.Function.Name, true)
			field("arguments", c.Function.Arguments, false)
			b.WriteString("}}")
		}
		b.WriteByte(']')
	}
	if m.ToolCallID != "" {
		field("tool_call_id", m.ToolCallID, false)
	}
	if m.Name != "" {
		field("name", m.Name, false)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// writeJSONString writes s as encoding/json encodes a string, with or
// without its HTML escaping of <, > and &. Plain printable ASCII, most of
// a prompt, is copied in runs; anything else goes through encoding/json
// so the bytes stay exactly its own (invalid UTF-8, U+2028, control
// characters).
func writeJSONString(b *bytes.Buffer, s string, escapeHTML bool) {
	b.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= utf8.RuneSelf:
			// Valid UTF-8 other than U+2028 and U+2029 is written as is.
			r, size := utf8.DecodeRuneInString(s[i:])
			if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
				b.WriteString(s[start:i])
				b.Write(quoted(s[i:i+size], escapeHTML))
				start = i + size
			}
			i += size - 1
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			b.WriteString(s[start:i])
			b.WriteString(shortEscape[c])
			start = i + 1
		case escapeHTML && (c == '<' || c == '>' || c == '&'):
			b.WriteString(s[start:i])
			b.WriteString(htmlEscape[c])
			start = i + 1
		case c < 0x20:
			b.WriteString(s[start:i])
			b.Write(quoted(s[i:i+1], escapeHTML))
			start = i + 1
		}
	}
	b.WriteString(s[start:])
	b.WriteByte('"')
}

// quoted is encoding/json's encoding of a short piece of a string,
// without its quotes.
func quoted(s string, escapeHTML bool) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(escapeHTML)
	_ = enc.Encode(s) // a string always encodes
	out := bytes.TrimRight(buf.Bytes(), "\n")
	return out[1 : len(out)-1]
}

// shortEscape is encoding/json's escape of the characters every prompt is
// full of.
var shortEscape = [...]string{'"': `\"`, '\\': `\\`, '\n': `\n`, '\r': `\r`, '\t': `\t`}

// htmlEscape is encoding/json's escape of <, > and & when it escapes HTML.
var htmlEscape = [...]string{'<': `\u003c`, '>': `\u003e`, '&': `\u0026`}

// QuoteJSON returns the bytes json.Marshal(s) returns (HTML escaped),
// without reflection: the code that builds a request never needs
// encoding/json's reflected encoder, whose first use in a process costs
// more than the encoding.
func QuoteJSON(s string) []byte {
	var b bytes.Buffer
	b.Grow(len(s) + 2 + len(s)/16)
	writeJSONString(&b, s, true)
	return b.Bytes()
}
