package providers

import (
	"encoding/json"
	"testing"
)

// TestEncodeToolsMatchesEncodingJSON: the hand-built tools array is the
// bytes encoding/json produces for the same specs, HTML escapes and all,
// so cached prefixes do not move.
func TestEncodeToolsMatchesEncodingJSON(t *testing.T) {
	specs := []ToolSpec{
		{Name: "bash", Description: `Run a <command> & "quote" it; ünïcode 中文`, Parameters: json.RawMessage(`{"type": "object",
  "properties": {"command": {"type": "string"}}}`)},
		{Name: "todo_read", Description: "", Parameters: json.RawMessage(`{"type":"object","properties":{},"required":[],"additionalProperties":false}`)},
	}
	got, err := EncodeTools(specs)
	if err != nil {
		t.Fatal(err)
	}
	type fn ToolSpec
	var want []byte
	var wrapped []any
	for _, s := range specs {
		wrapped = append(wrapped, struct {
			Type     string `json:"type"`
			Function fn     `json:"function"`
		}{"function", fn(s)})
	}
	want, err = json.Marshal(wrapped)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if one, _ := json.Marshal(specs[0]); string(one) != string(want[1:len(one)+1]) {
		t.Fatalf("MarshalJSON %s", one)
	}
	if _, err := EncodeTools([]ToolSpec{{Name: "x", Parameters: json.RawMessage(`{bad`)}}); err == nil {
		t.Fatal("invalid parameters accepted")
	}
}
