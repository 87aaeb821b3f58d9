package builtin

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"

	"github.com/reasonix/reasonix/tools"
	"github.com/reasonix/reasonix/tools/schematest"
)

// builtinSchemas returns every built-in tool's schema, sorted by name. With
// reversed set the schemas are first built in reverse order.
func builtinSchemas(t *testing.T, reversed bool) []schematest.Entry {
	t.Helper()
	names := tools.BuiltinNames()
	if reversed {
		for _, n := range slices.Backward(names) {
			tool, _ := tools.Builtin(n)
			tool.Schema()
		}
	}
	var out []schematest.Entry
	for _, n := range names {
		tool, _ := tools.Builtin(n)
		out = append(out, schematest.Entry{Name: n, Schema: tool.Schema()})
	}
	return out
}

// TestSchemasGolden pins the exact bytes of every built-in tool's schema:
// they are part of the cached prompt prefix, so any change must be
// deliberate. Regenerate with go test ./tools/builtin -run Golden -update.
func TestSchemasGolden(t *testing.T) {
	entries := builtinSchemas(t, false)
	schematest.Check(t, entries)
	schematest.Golden(t, "testdata/schemas.golden", schematest.Format(entries))
	for _, e := range entries {
		tool, _ := tools.Builtin(e.Name)
		if again := tool.Schema(); !bytes.Equal(again, e.Schema) {
			t.Errorf("%s: schema changed between calls", e.Name)
		}
	}
}

func TestSchemasStableAcrossProcesses(t *testing.T) {
	schematest.StableAcrossProcesses(t, func(other bool) []byte {
		return schematest.Format(builtinSchemas(t, other))
	})
}

// decoders decode a built-in tool's arguments as its Execute does.
var decoders = map[string]func(json.RawMessage) error{
	"read_file":  decodeInto[readArgs],
	"write_file": decodeInto[writeArgs],
	"edit_file":  decodeInto[editArgs],
	"multi_edit": decodeInto[multiEditArgs],
	"move_file":  decodeInto[moveArgs],
	"patch":      decodeInto[patchArgs],
	"bash":       decodeInto[bashArgs],
	"glob":       decodeInto[globArgs],
	"grep":       decodeInto[grepArgs],
	"ls":         decodeInto[lsArgs],
	"todo_write": decodeInto[todoWriteArgs],
	"todo_read":  decodeInto[struct{}],
}

// decodeInto decodes raw as the tools do, and again rejecting unknown
// names at every level, not only the top one DecodeStrict checks.
func decodeInto[T any](raw json.RawMessage) error {
	var a T
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var b T
	return dec.Decode(&b)
}

// TestArgsAcceptAdvertisedProperties checks that each tool's decoder takes
// every property its schema advertises, nested ones included, and that the
// hidden aliases are accepted but not advertised.
func TestArgsAcceptAdvertisedProperties(t *testing.T) {
	for _, e := range builtinSchemas(t, false) {
		decode, ok := decoders[e.Name]
		if !ok {
			t.Errorf("%s: add its argument struct to decoders", e.Name)
			continue
		}
		var s map[string]any
		if err := json.Unmarshal(e.Schema, &s); err != nil {
			t.Fatal(err)
		}
		args, _ := json.Marshal(example(s))
		if err := decode(args); err != nil {
			t.Errorf("%s: advertised arguments %s rejected: %v", e.Name, args, err)
		}
	}
	aliases := []struct{ tool, args, hidden string }{
		{"read_file", `{"file_path":"a"}`, "file_path"},
		{"write_file", `{"file_path":"a","content":""}`, "file_path"},
		{"edit_file", `{"file_path":"a","old_string":"x","new_string":"y"}`, "file_path"},
		{"multi_edit", `{"file_path":"a","edits":[]}`, "file_path"},
		{"grep", `{"pattern":"x","-i":true}`, "-i"},
		{"grep", `{"pattern":"x","-C":1}`, "-C"},
		{"grep", `{"pattern":"x","-B":1}`, "-B"},
		{"grep", `{"pattern":"x","-A":1}`, "-A"},
		{"grep", `{"pattern":"x","-n":true}`, "-n"},
	}
	for _, a := range aliases {
		if err := decoders[a.tool](json.RawMessage(a.args)); err != nil {
			t.Errorf("%s: alias %s rejected: %v", a.tool, a.hidden, err)
		}
		tool, _ := tools.Builtin(a.tool)
		var s struct {
			Properties map[string]any `json:"properties"`
		}
		if err := json.Unmarshal(tool.Schema(), &s); err != nil {
			t.Fatal(err)
		}
		if _, ok := s.Properties[a.hidden]; ok {
			t.Errorf("%s: alias %s is advertised", a.tool, a.hidden)
		}
	}
}

// example is a value that matches schema s, with every property set.
func example(s map[string]any) any {
	if enum, ok := s["enum"].([]any); ok && len(enum) > 0 {
		return enum[0]
	}
	switch s["type"] {
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		for name, p := range props {
			out[name] = example(p.(map[string]any))
		}
		return out
	case "array":
		return []any{example(s["items"].(map[string]any))}
	case "integer", "number":
		return 1
	case "boolean":
		return true
	}
	return "x"
}
