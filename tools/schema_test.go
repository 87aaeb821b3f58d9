package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

type schemaInner struct {
	Path  string `json:"path" jsonschema:"where"`
	Alias string `json:"file_path" schema:"-"`
}

type schemaItem struct {
	Name   string  `json:"name"`
	Old    *string `json:"old,omitempty" schema:"-"`
	Weight *Int    `json:"weight,omitempty"`
}

type schemaArgs struct {
	schemaInner
	Count   Int          `json:"count,omitempty" jsonschema:"how many"`
	Flag    Bool         `json:"flag,omitempty"`
	Text    *string      `json:"text"`
	Items   []schemaItem `json:"items,omitempty"`
	Tags    []string     `json:"tags,omitempty"`
	Mode    string       `json:"mode,omitempty"`
	Skipped string       `json:"-"`
	//lint:ignore U1000 present to show that unexported fields are not arguments
	hidden string // unexported fields are not arguments
}

const schemaArgsWant = `{"type":"object","properties":{` +
	`"path":{"type":"string","description":"where"},` +
	`"count":{"type":"integer","description":"how many","minimum":1},` +
	`"flag":{"type":"boolean"},` +
	`"text":{"type":"string"},` +
	`"items":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"weight":{"type":"integer"}},"required":["name"],"additionalProperties":false},"minItems":1},` +
	`"tags":{"type":"array","items":{"type":"string"}},` +
	`"mode":{"type":"string","enum":["a","b"]}` +
	`},"required":["path","text"],"additionalProperties":false}`

func schemaArgsEdits() []func(*jsonschema.Schema) {
	return []func(*jsonschema.Schema){
		WithMinimum("count", 1), WithMinItems("items", 1), WithEnum("mode", "a", "b"),
	}
}

func TestBuildSchema(t *testing.T) {
	got, err := BuildSchema[schemaArgs](schemaArgsEdits()...)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != schemaArgsWant {
		t.Fatalf("got  %s\nwant %s", got, schemaArgsWant)
	}
	// The decoder still takes the hidden names.
	var a schemaArgs
	if err := DecodeStrict(json.RawMessage(`{"file_path":"x","text":"t","items":[{"name":"n","old":"o"}]}`), &a); err != nil {
		t.Fatal(err)
	}
	if a.Alias != "x" || a.Items[0].Old == nil {
		t.Fatalf("aliases not decoded: %+v", a)
	}
}

func TestBuildSchemaIgnoresGeneratorDebugSetting(t *testing.T) {
	t.Setenv("JSONSCHEMAGODEBUG", "typeschemasnull=1")
	got, err := BuildSchema[schemaArgs](schemaArgsEdits()...)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != schemaArgsWant {
		t.Fatalf("got  %s\nwant %s", got, schemaArgsWant)
	}
}

func TestBuildSchemaNoArguments(t *testing.T) {
	got, err := BuildSchema[struct{}]()
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"type":"object","properties":{},"required":[],"additionalProperties":false}`; string(got) != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestSchemaForIsLazyAndCached(t *testing.T) {
	calls := 0
	f := SchemaFor[schemaArgs](func(*jsonschema.Schema) { calls++ })
	if calls != 0 {
		t.Fatal("SchemaFor built the schema before it was asked for")
	}
	a, b := f(), f()
	if calls != 1 || string(a) != string(b) {
		t.Fatalf("built %d times; %s vs %s", calls, a, b)
	}
}

func TestSchemaFailures(t *testing.T) {
	cases := []struct {
		name  string
		build func() (json.RawMessage, error)
		want  string
	}{
		{"not a struct", func() (json.RawMessage, error) { return BuildSchema[[]string]() }, "must be a struct"},
		{"unsupported field", func() (json.RawMessage, error) {
			return BuildSchema[struct {
				F func() `json:"f"`
			}]()
		}, "unsupported"},
		{"edit names no property", func() (json.RawMessage, error) {
			return BuildSchema[schemaArgs](WithEnum("items.nope", "x"))
		}, `no property "items.nope"`},
		{"top-level keyword lost", func() (json.RawMessage, error) {
			return BuildSchema[schemaArgs](func(s *jsonschema.Schema) { s.Description = "d" })
		}, "unexpected top-level keyword"},
		{"open object", func() (json.RawMessage, error) {
			return BuildSchema[schemaArgs](func(s *jsonschema.Schema) { s.AdditionalProperties = nil })
		}, "additional properties"},
	}
	for _, c := range cases {
		_, err := c.build()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	before := len(SchemaErrors())
	got := SchemaFor[schemaArgs](WithEnum("nope"))()
	if string(got) != string(fallbackSchema) {
		t.Fatalf("failed schema is %s, want the fallback", got)
	}
	if errs := SchemaErrors(); len(errs) != before+1 || !strings.Contains(errs[len(errs)-1].Error(), "nope") {
		t.Fatalf("SchemaErrors = %v", errs)
	}
}
