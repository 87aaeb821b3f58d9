// Package flatten rewrites deep tool schemas as flat ones, for models that
// drop or misplace arguments nested inside objects (DeepSeek among them):
// every leaf parameter becomes one top-level property named by its
// dot-path ("parent.page_id"), and Nest rebuilds the nested arguments the
// tool expects from what the model sends.
package flatten

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Limits past which a schema with nested objects is flattened: leaves
// deeper than MaxDepth segments, or more than MaxLeaves leaves. A schema
// without nested objects is never rewritten.
const (
	MaxDepth  = 2
	MaxLeaves = 10
)

// node is the part of a JSON Schema flattening looks at; every other
// keyword of a leaf is kept as written.
type node struct {
	Type        any                        `json:"type,omitempty"`
	Description string                     `json:"description,omitempty"`
	Properties  map[string]json.RawMessage `json:"properties,omitempty"`
	Required    []string                   `json:"required,omitempty"`
}

// leaf is one flattened parameter.
type leaf struct {
	path     string
	schema   json.RawMessage
	required bool
}

// isObject reports whether n is an object with named properties, the
// only kind of schema that is flattened into its children.
func (n node) isObject() bool {
	if len(n.Properties) == 0 {
		return false
	}
	switch t := n.Type.(type) {
	case nil:
		return true
	case string:
		return t == "object"
	}
	return false // a union type: keep it whole
}

// Flatten returns the flat form of a tool's parameters schema and true,
// or the schema unchanged and false when it is within the limits or
// cannot be flattened unambiguously (a property name holding a dot).
func Flatten(schema json.RawMessage) (json.RawMessage, bool) {
	var root node
	if json.Unmarshal(schema, &root) != nil || !root.isObject() {
		return schema, false
	}
	var leaves []leaf
	deep := false
	if !walk(root, "", true, &leaves, &deep) {
		return schema, false
	}
	nested := slices.ContainsFunc(leaves, func(l leaf) bool { return strings.Contains(l.path, ".") })
	if !nested || (!deep && len(leaves) <= MaxLeaves) {
		// Nothing to gain: an already flat schema stays as written, even
		// with many parameters.
		return schema, false
	}
	props := map[string]json.RawMessage{}
	var required []string
	for _, l := range leaves {
		props[l.path] = l.schema
		if l.required {
			required = append(required, l.path)
		}
	}
	sort.Strings(required)
	out := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		out["required"] = required
	}
	b, err := marshal(out)
	if err != nil {
		return schema, false
	}
	return b, true
}

// walk collects the leaves under n; false means the schema cannot be
// flattened.
func walk(n node, prefix string, required bool, leaves *[]leaf, deep *bool) bool {
	req := map[string]bool{}
	for _, r := range n.Required {
		req[r] = true
	}
	names := make([]string, 0, len(n.Properties))
	for k := range n.Properties {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if strings.Contains(k, ".") || k == "" {
			return false
		}
		raw := n.Properties[k]
		path := k
		if prefix != "" {
			path = prefix + "." + k
		}
		var child node
		if json.Unmarshal(raw, &child) == nil && child.isObject() {
			if !walk(child, path, required && req[k], leaves, deep) {
				return false
			}
			continue
		}
		if strings.Count(path, ".")+1 > MaxDepth {
			*deep = true
		}
		*leaves = append(*leaves, leaf{path: path, schema: withParent(raw, n.Description, prefix), required: required && req[k]})
	}
	return true
}

// withParent adds the parent's description to a leaf that has none, so
// the model still learns what the group is for.
func withParent(raw json.RawMessage, parentDesc, parent string) json.RawMessage {
	if parentDesc == "" || parent == "" {
		return raw
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return raw
	}
	if d, _ := m["description"].(string); d != "" {
		return raw
	}
	m["description"] = fmt.Sprintf("(part of %s: %s)", parent, parentDesc)
	b, err := marshal(m)
	if err != nil {
		return raw
	}
	return b
}

// Nest turns flat arguments back into the nested object the tool's real
// schema describes: "a.b.c": v becomes {"a": {"b": {"c": v}}}. Keys
// without a dot pass through; a nested object sent as is is merged.
func Nest(args json.RawMessage) (json.RawMessage, error) {
	var flat map[string]json.RawMessage
	if err := json.Unmarshal(args, &flat); err != nil {
		return nil, fmt.Errorf("arguments are not a JSON object: %w", err)
	}
	out := map[string]any{}
	keys := make([]string, 0, len(flat))
	for k := range flat {
		keys = append(keys, k)
	}
	sort.Strings(keys) // parents before their dotted children
	for _, k := range keys {
		parts := strings.Split(k, ".")
		cur := out
		for i, p := range parts[:len(parts)-1] {
			next, ok := cur[p]
			if !ok {
				m := map[string]any{}
				cur[p] = m
				cur = m
				continue
			}
			m, ok := next.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("argument %q conflicts with %q", k, strings.Join(parts[:i+1], "."))
			}
			cur = m
		}
		last := parts[len(parts)-1]
		var v any
		dec := json.NewDecoder(bytes.NewReader(flat[k]))
		dec.UseNumber()
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("argument %q: %w", k, err)
		}
		if existing, ok := cur[last].(map[string]any); ok {
			sub, isMap := v.(map[string]any)
			if !isMap {
				return nil, fmt.Errorf("argument %q conflicts with its nested arguments", k)
			}
			for sk, sv := range sub {
				if _, dup := existing[sk]; !dup {
					existing[sk] = sv
				}
			}
			continue
		}
		cur[last] = v
	}
	return marshal(out)
}

func marshal(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
