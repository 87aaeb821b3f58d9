package mcp

import (
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
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
