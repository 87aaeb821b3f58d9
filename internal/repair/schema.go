package repair

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Schema is the part of JSON Schema tool parameters use: types,
// properties, required names, closed objects, array items and enums.
type Schema struct {
	Type                 any                `json:"type,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	AdditionalProperties any                `json:"additionalProperties,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	Enum                 []any              `json:"enum,omitempty"`
	Description          string             `json:"description,omitempty"`
}

// ParseSchema decodes a tool's parameters schema.
func ParseSchema(raw json.RawMessage) (*Schema, error) {
	var s Schema
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return &s, nil
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("tool schema: %w", err)
	}
	return &s, nil
}

// Validate checks args (a JSON object) against the tool's parameters
// schema. It is as lenient as the built-in tools' decoders: numbers and
// booleans sent as strings pass, because the tools accept them.
func Validate(schema json.RawMessage, args string) error {
	s, err := ParseSchema(schema)
	if err != nil {
		return err
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(args))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("arguments are not valid JSON: %w", err)
	}
	if _, ok := v.(map[string]any); !ok {
		return fmt.Errorf("arguments must be a JSON object")
	}
	return s.check("", v)
}

func (s *Schema) types() []string {
	switch t := s.Type.(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if str, ok := x.(string); ok {
				out = append(out, str)
			}
		}
		return out
	}
	return nil
}

func (s *Schema) check(path string, v any) error {
	if s == nil {
		return nil
	}
	name := path
	if name == "" {
		name = "arguments"
	}
	if len(s.Enum) > 0 && !inEnum(s.Enum, v) {
		return fmt.Errorf("%s: %s is not one of the allowed values", name, short(v))
	}
	types := s.types()
	if len(types) > 0 && !slices.ContainsFunc(types, func(t string) bool { return hasType(t, v) }) {
		return fmt.Errorf("%s: expected %s, got %s", name, strings.Join(types, " or "), short(v))
	}
	switch x := v.(type) {
	case map[string]any:
		for _, r := range s.Required {
			if _, ok := x[r]; !ok {
				return fmt.Errorf("%s: missing required %q", name, r)
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p, ok := s.Properties[k]
			if !ok {
				if b, isBool := s.AdditionalProperties.(bool); isBool && !b {
					return fmt.Errorf("%s: unknown property %q", name, k)
				}
				continue
			}
			if err := p.check(join(path, k), x[k]); err != nil {
				return err
			}
		}
	case []any:
		for i, e := range x {
			if err := s.Items.check(fmt.Sprintf("%s[%d]", name, i), e); err != nil {
				return err
			}
		}
	}
	return nil
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}

// hasType reports whether v is of JSON Schema type t, accepting what the
// tools' lenient decoders accept (tools.Int, tools.Bool).
func hasType(t string, v any) bool {
	switch t {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "null":
		return v == nil
	case "boolean":
		switch x := v.(type) {
		case bool:
			return true
		case string:
			switch strings.ToLower(strings.TrimSpace(x)) {
			case "true", "false", "1", "0":
				return true
			}
		}
		return false
	case "number", "integer":
		var s string
		switch x := v.(type) {
		case json.Number:
			s = x.String()
		case string:
			s = strings.TrimSpace(x)
		default:
			return false
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return false
		}
		return t == "number" || f == float64(int64(f))
	}
	return true // a type this checker does not know passes
}

func inEnum(enum []any, v any) bool {
	b, _ := json.Marshal(v)
	for _, e := range enum {
		eb, _ := json.Marshal(e)
		if bytes.Equal(b, eb) {
			return true
		}
	}
	return false
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 60 {
		return string(b[:57]) + "..."
	}
	return string(b)
}
