package tools

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
)

// Argument schemas are generated from the struct a tool decodes its
// arguments into, with github.com/google/jsonschema-go (the library of
// the official MCP Go SDK), so the schema the model sees and the decoder
// cannot drift apart. The struct's tags say everything about a property:
//
//   - json: the property name; a field without omitempty (or omitzero) is
//     required.
//   - jsonschema: the property's description.
//   - schema:"-": the field is decoded but not advertised, for aliases
//     models trained on other agents send (file_path for path).
//
// What tags cannot say (enums, bounds, minItems, a Go type advertised as
// another JSON type) is set by SchemaFor's edits.
//
// The bytes are part of every request's cached prompt prefix, so they must
// never change between turns or processes: properties keep the struct's
// field order, pointers and slices are advertised without "null" (the
// library's default for them depends on the JSONSCHEMAGODEBUG variable),
// and nothing is generated until a schema is first asked for, so start-up
// does no schema work.

// SchemaFor returns a function that returns the compact JSON schema of the
// arguments object T: type object, properties, required and
// additionalProperties false, with edits applied in order. The schema is
// computed on the first call and the same bytes are returned from then on.
//
// T is a static type, so a schema that cannot be generated is a programming
// error, which the golden schema tests report. At run time the function
// then returns an open object schema with no properties rather than fail a
// session; the tool's own argument checks still guard its calls.
func SchemaFor[T any](edits ...func(*jsonschema.Schema)) func() json.RawMessage {
	return sync.OnceValue(func() json.RawMessage {
		b, err := BuildSchema[T](edits...)
		if err != nil {
			schemaErrs.Lock()
			schemaErrs.list = append(schemaErrs.list, err)
			schemaErrs.Unlock()
			return fallbackSchema
		}
		return b
	})
}

// schemaErrs collects why schemas could not be built, for SchemaErrors.
var schemaErrs struct {
	sync.Mutex
	list []error
}

// SchemaErrors returns the errors of every schema SchemaFor has failed to
// build so far. Tests that ask tools for their schemas check it is empty.
func SchemaErrors() []error {
	schemaErrs.Lock()
	defer schemaErrs.Unlock()
	return slices.Clone(schemaErrs.list)
}

// fallbackSchema is what SchemaFor returns when a schema cannot be built.
var fallbackSchema = json.RawMessage(`{"type":"object","properties":{},"required":[]}`)

// BuildSchema generates the schema SchemaFor returns, every call anew, and
// reports why it cannot. Tools whose schema depends on run-time data (the
// task tool's agent names) use it directly and cache the result themselves.
func BuildSchema[T any](edits ...func(*jsonschema.Schema)) (json.RawMessage, error) {
	t := reflect.TypeFor[T]()
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("schema of %v: arguments must be a struct", t)
	}
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, fmt.Errorf("schema of %v: %w", t, err)
	}
	hideFields(t, s)
	dropNull(s)
	if err := applyEdits(s, edits); err != nil {
		return nil, fmt.Errorf("schema of %v: %w", t, err)
	}
	return encodeSchema(s)
}

// applyEdits runs edits, turning a panic (an edit naming a property that
// does not exist) into an error.
func applyEdits(s *jsonschema.Schema, edits []func(*jsonschema.Schema)) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("edit failed: %v", r)
		}
	}()
	for _, e := range edits {
		e(s)
	}
	return nil
}

// hideFields removes the properties of fields tagged schema:"-" from s,
// the schema of t, and of the structs t holds.
func hideFields(t reflect.Type, s *jsonschema.Schema) {
	for s != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
		if t.Kind() != reflect.Pointer {
			s = s.Items
		}
		t = t.Elem()
	}
	if s == nil || t.Kind() != reflect.Struct {
		return
	}
	for _, f := range reflect.VisibleFields(t) {
		if f.Anonymous || !f.IsExported() {
			continue
		}
		name, ok := jsonName(f)
		if !ok {
			continue
		}
		if f.Tag.Get("schema") == "-" {
			delete(s.Properties, name)
			s.Required = slices.DeleteFunc(s.Required, func(n string) bool { return n == name })
			s.PropertyOrder = slices.DeleteFunc(s.PropertyOrder, func(n string) bool { return n == name })
			continue
		}
		hideFields(f.Type, s.Properties[name])
	}
}

// jsonName is the name encoding/json gives field f; false when f is not
// encoded.
func jsonName(f reflect.StructField) (string, bool) {
	tag, ok := f.Tag.Lookup("json")
	if !ok {
		return f.Name, true
	}
	name, _, found := strings.Cut(tag, ",")
	if name == "-" && !found {
		return "", false
	}
	if name == "" {
		name = f.Name
	}
	return name, true
}

// dropNull advertises pointers and slices as their element's type: a
// missing argument is how a tool is told "none", and the library writes
// ["null","string"] or "string" depending on the environment.
func dropNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) == 2 && s.Types[0] == "null" {
		s.Type, s.Types = s.Types[1], nil
	}
	for _, p := range s.Properties {
		dropNull(p)
	}
	dropNull(s.Items)
}

// encodeSchema writes s compactly. The top level always has properties
// and required, even when empty, as every tool schema always has, so that
// providers that insist on either accept a tool without arguments.
func encodeSchema(s *jsonschema.Schema) (json.RawMessage, error) {
	if s.Type != "object" {
		return nil, fmt.Errorf("schema type is %q, not object", s.Type)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return nil, err
	}
	for k := range top {
		switch k {
		case "type", "properties", "required", "additionalProperties":
		default:
			// Anything else at the top would be lost below.
			return nil, fmt.Errorf("unexpected top-level keyword %q", k)
		}
	}
	if string(top["additionalProperties"]) != "false" {
		return nil, errors.New("arguments object must not allow additional properties")
	}
	props := top["properties"]
	if props == nil {
		props = json.RawMessage(`{}`)
	}
	required := s.Required
	if required == nil {
		required = []string{}
	}
	return json.Marshal(struct {
		Type                 string          `json:"type"`
		Properties           json.RawMessage `json:"properties"`
		Required             []string        `json:"required"`
		AdditionalProperties bool            `json:"additionalProperties"`
	}{"object", props, required, false})
}

// Edits for SchemaFor and BuildSchema. A path names a property; dots step
// into nested objects and through arrays to their items, so
// "todos.status" is the status property of the todos array's items. A
// path that names no property makes the schema fail to build.

// WithEnum restricts the property at path to values.
func WithEnum(path string, values ...string) func(*jsonschema.Schema) {
	return WithProperty(path, func(p *jsonschema.Schema) {
		p.Enum = make([]any, len(values))
		for i, v := range values {
			p.Enum[i] = v
		}
	})
}

// WithMinimum sets the least value of the number at path.
func WithMinimum(path string, min float64) func(*jsonschema.Schema) {
	return WithProperty(path, func(p *jsonschema.Schema) { p.Minimum = &min })
}

// WithMinItems sets the least length of the array at path.
func WithMinItems(path string, n int) func(*jsonschema.Schema) {
	return WithProperty(path, func(p *jsonschema.Schema) { p.MinItems = &n })
}

// WithDescription sets (or, when empty, removes) the description at path,
// for fields of types the tool's package does not own.
func WithDescription(path, text string) func(*jsonschema.Schema) {
	return WithProperty(path, func(p *jsonschema.Schema) { p.Description = text })
}

// WithType advertises the property at path as JSON type typ, for a Go type
// whose own mapping would say less than the tool accepts or means.
func WithType(path, typ string) func(*jsonschema.Schema) {
	return WithProperty(path, func(p *jsonschema.Schema) { p.Type, p.Types = typ, nil })
}

// WithProperty applies edit to the property at path.
func WithProperty(path string, edit func(*jsonschema.Schema)) func(*jsonschema.Schema) {
	return func(s *jsonschema.Schema) {
		for _, name := range strings.Split(path, ".") {
			for s.Items != nil {
				s = s.Items
			}
			p, ok := s.Properties[name]
			if !ok {
				panic(fmt.Sprintf("no property %q", path))
			}
			s = p
		}
		edit(s)
	}
}
