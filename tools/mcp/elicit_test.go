package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reasonix/reasonix/tools"
)

// Whatever schema a server sends, reading it never panics, and the form
// it gives checks its own defaults without panicking either.
func FuzzParseElicitation(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":"string","enum":["x","y"],"enumNames":["X"]}},"required":["a"]}`,
		`{"properties":{"l":{"type":"array","items":{"anyOf":[{"const":"p","title":"P"}]}},"n":{"type":"integer","minimum":1,"default":0}}}`,
		`{"properties":{"o":{"type":"string","oneOf":[{"const":1}]},"b":{"type":"boolean","default":"yes"}}}`,
		`{"properties":{"x":{"type":"object","properties":{}}}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var schema any
		if json.Unmarshal([]byte(s), &schema) != nil {
			return
		}
		e, _, err := parseElicitation("s", &sdk.ElicitParams{Message: "m", RequestedSchema: schema})
		if err != nil {
			return
		}
		_, _ = e.Check(e.Defaults())
	})
}

func TestWithholdSecrets(t *testing.T) {
	t.Parallel()
	s := tools.NewSecrets(nil, []string{"sk-0123456789"})
	if err := withholdSecrets(map[string]any{"name": "ann", "n": 3.0, "tags": []any{"a"}}, s); err != nil {
		t.Errorf("plain answer refused: %v", err)
	}
	for _, c := range []map[string]any{{"key": "sk-0123456789"}, {"key": "Bearer sk-0123456789\n"}, {"tags": []any{"x", "sk-0123456789"}}} {
		if err := withholdSecrets(c, s); err == nil || !strings.Contains(err.Error(), "API key") {
			t.Errorf("%v: %v", c, err)
		}
	}
	if err := withholdSecrets(map[string]any{"key": "sk-0123456789"}, nil); err != nil {
		t.Errorf("no secrets: %v", err)
	}
}
