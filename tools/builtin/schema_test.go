package builtin

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/reasonix/reasonix/tools"
	"github.com/reasonix/reasonix/tools/schemagen"
	"github.com/reasonix/reasonix/tools/schematest"
)

// schemaSpecs are the argument structs the built-in tools' schemas are
// generated from, with the edits tags cannot express, in the order of
// schemas_gen.go.
var schemaSpecs = []schemagen.Spec{
	// bash advertises timeout as an integer, as it always has; the decoder
	// also takes fractions.
	schemagen.For[askArgs]("askSchema", "ask"),
	schemagen.For[bashArgs]("bashSchema", "bash", schemagen.WithType("timeout", "integer")),
	schemagen.For[editArgs]("editFileSchema", "edit_file"),
	schemagen.For[globArgs]("globSchema", "glob"),
	schemagen.For[grepArgs]("grepSchema", "grep", schemagen.WithEnum("output_mode", modeFiles, modeContent, modeCount)),
	schemagen.For[jobArgs]("jobSchema", JobTool, schemagen.WithType("wait_seconds", "integer")),
	schemagen.For[lsArgs]("lsSchema", "ls"),
	schemagen.For[moveArgs]("moveFileSchema", "move_file"),
	schemagen.For[multiEditArgs]("multiEditSchema", "multi_edit", schemagen.WithMinItems("edits", 1)),
	schemagen.For[patchArgs]("patchSchema", "patch"),
	schemagen.For[readArgs]("readFileSchema", "read_file", schemagen.WithMinimum("offset", 1), schemagen.WithMinimum("limit", 1)),
	schemagen.For[struct{}]("todoReadSchema", "todo_read"),
	schemagen.For[webFetchArgs]("webFetchSchema", "web_fetch", schemagen.WithMinimum("max_bytes", 1)),
	schemagen.For[todoWriteArgs]("todoWriteSchema", "todo_write",
		schemagen.WithDescription("todos.content", "imperative, e.g. Run tests"),
		schemagen.WithDescription("todos.activeForm", "present continuous, e.g. Running tests"),
		schemagen.WithEnum("todos.status", TodoPending, TodoInProgress, TodoCompleted),
	),
	schemagen.For[writeArgs]("writeFileSchema", "write_file"),
}

// TestSchemasGenerated checks schemas_gen.go is what the specs generate
// today; go generate runs it with -update to rewrite the file. The file is
// the golden file: the schemas are part of the cached prompt prefix, so
// its diff must be reviewed.
func TestSchemasGenerated(t *testing.T) {
	schematest.Generated(t, "builtin", schemaSpecs)
}

// builtinSchemas returns every built-in tool's schema, sorted by name.
func builtinSchemas() []schematest.Entry {
	var out []schematest.Entry
	for _, n := range tools.BuiltinNames() {
		tool, _ := tools.Builtin(n)
		out = append(out, schematest.Entry{Name: n, Schema: tool.Schema()})
	}
	return out
}

// TestSchemas checks every built-in tool returns the schema generated from
// its spec, and that each is a closed object a provider accepts.
func TestSchemas(t *testing.T) {
	entries := builtinSchemas()
	schematest.Check(t, entries)
	specs := map[string]schemagen.Spec{}
	for _, s := range schemaSpecs {
		specs[s.Tool] = s
	}
	for _, e := range entries {
		s, ok := specs[e.Name]
		if !ok {
			t.Errorf("%s: add its argument struct to schemaSpecs", e.Name)
			continue
		}
		want, err := s.Build()
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(e.Schema, want) {
			t.Errorf("%s: Schema returns\n%s\nnot the schema of %s\n%s", e.Name, e.Schema, s.Type, want)
		}
		tool, _ := tools.Builtin(e.Name)
		if again := tool.Schema(); !bytes.Equal(again, e.Schema) {
			t.Errorf("%s: schema changed between calls", e.Name)
		}
		delete(specs, e.Name)
	}
	for name := range specs {
		t.Errorf("spec of %s names no built-in tool", name)
	}
}

func TestSchemasStableAcrossProcesses(t *testing.T) {
	schematest.StableAcrossProcesses(t, func() []byte {
		src, err := schemagen.Source("builtin", "test", schemaSpecs)
		if err != nil {
			t.Fatal(err)
		}
		return src
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
	"ask":        decodeInto[askArgs],
	"job":        decodeInto[jobArgs],
	"web_fetch":  decodeInto[webFetchArgs],
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
	for _, e := range builtinSchemas() {
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
