package providers

import (
	"encoding/json"
	"testing"
)

func TestEncodeMessage(t *testing.T) {
	call := []ToolCall{{ID: "c1", Type: "function", Function: FunctionCall{Name: "read_file", Arguments: `{"path":"a.go"}`}}}
	cases := []struct {
		name string
		in   Message
		want string
	}{
		{
			name: "assistant with tool calls keeps reasoning",
			in:   Message{Role: RoleAssistant, ReasoningContent: "look first", ToolCalls: call},
			want: `{"role":"assistant","content":"","reasoning_content":"look first","tool_calls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.go\"}"}}]}`,
		},
		{
			name: "final assistant answer drops reasoning",
			in:   Message{Role: RoleAssistant, Content: "done", ReasoningContent: "thinking"},
			want: `{"role":"assistant","content":"done"}`,
		},
		{
			// Only assistants carry reasoning on the wire, whatever else
			// a malformed message holds.
			name: "non-assistant with tool calls drops reasoning",
			in:   Message{Role: RoleUser, Content: "hi", ReasoningContent: "x", ToolCalls: call},
			want: `{"role":"user","content":"hi","tool_calls":[{"id":"c1","type":"function","function":{"name":"read_file","arguments":"{\"path\":\"a.go\"}"}}]}`,
		},
		{
			name: "no HTML escaping",
			in:   Message{Role: RoleUser, Content: "if a < b && c > d {}"},
			want: `{"role":"user","content":"if a < b && c > d {}"}`,
		},
		{
			name: "tool result",
			in:   Message{Role: RoleTool, ToolCallID: "c1", Content: "ok\n"},
			want: `{"role":"tool","content":"ok\n","tool_call_id":"c1"}`,
		},
		{
			name: "empty content is still sent",
			in:   Message{Role: RoleSystem},
			want: `{"role":"system","content":""}`,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			orig := c.in
			got, err := EncodeMessage(c.in)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Fatalf("got  %s\nwant %s", got, c.want)
			}
			if !json.Valid(got) {
				t.Fatalf("invalid JSON %s", got)
			}
			// Dropping reasoning must not reach the caller's message:
			// the session keeps it for the transcript.
			if c.in.ReasoningContent != orig.ReasoningContent {
				t.Fatal("caller's message was modified")
			}
			again, _ := EncodeMessage(c.in)
			if string(again) != string(got) {
				t.Fatalf("second encoding differs: %s", again)
			}
		})
	}
}
