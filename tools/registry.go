package tools

import (
	"encoding/json"
	"slices"
	"sort"

	"github.com/reasonix/reasonix/providers"
)

// catalogue is the init-time registry of built-in tools. Built-in packages
// add to it from init; nothing writes to it afterwards. A slice, not a map:
// it starts as nothing the program has to build, and a dozen names are
// found as fast by a scan.
var catalogue []Tool

// Register adds built-in tools; a later tool of the same name replaces an
// earlier one. Call it from init.
func Register(ts ...Tool) {
	for _, t := range ts {
		if i := builtinIndex(t.Name()); i >= 0 {
			catalogue[i] = t
			continue
		}
		catalogue = append(catalogue, t)
	}
}

func builtinIndex(name string) int {
	for i, t := range catalogue {
		if t.Name() == name {
			return i
		}
	}
	return -1
}

// Builtin returns the registered built-in tool with that name.
func Builtin(name string) (Tool, bool) {
	if i := builtinIndex(name); i >= 0 {
		return catalogue[i], true
	}
	return nil, false
}

// BuiltinNames lists registered built-in tools, sorted.
func BuiltinNames() []string {
	out := make([]string, 0, len(catalogue))
	for _, t := range catalogue {
		out = append(out, t.Name())
	}
	sort.Strings(out)
	return out
}

// Registry is the set of tools offered in one session, sorted by name so the
// schema bytes are identical from turn to turn.
type Registry struct {
	byName map[string]Tool
	names  []string
}

// NewRegistry builds a registry from tools; later duplicates win.
func NewRegistry(ts ...Tool) *Registry {
	r := &Registry{byName: make(map[string]Tool, len(ts)), names: make([]string, 0, len(ts))}
	for _, t := range ts {
		r.Add(t)
	}
	return r
}

// Add inserts or replaces a tool.
func (r *Registry) Add(t Tool) {
	name := t.Name()
	if _, ok := r.byName[name]; !ok {
		// Kept sorted by inserting in place: sessions build several
		// registries of twenty tools on the way to the first request.
		i := sort.SearchStrings(r.names, name)
		r.names = slices.Insert(r.names, i, name)
	}
	r.byName[name] = t
}

// Get returns the tool named name.
func (r *Registry) Get(name string) (Tool, bool) {
	t, ok := r.byName[name]
	return t, ok
}

// Names returns the sorted tool names.
func (r *Registry) Names() []string { return append([]string(nil), r.names...) }

// Filter returns a registry holding only the tools keep accepts.
func (r *Registry) Filter(keep func(Tool) bool) *Registry {
	out := &Registry{byName: make(map[string]Tool, len(r.names)), names: make([]string, 0, len(r.names))}
	for _, n := range r.names {
		if t := r.byName[n]; keep(t) {
			out.Add(t)
		}
	}
	return out
}

// Specs returns the schemas of all tools, sorted by name.
func (r *Registry) Specs() []providers.ToolSpec {
	out := make([]providers.ToolSpec, 0, len(r.names))
	for _, n := range r.names {
		t := r.byName[n]
		out = append(out, providers.ToolSpec{Name: n, Description: t.Description(), Parameters: t.Schema()})
	}
	return out
}

// EncodedSpecs returns the tools array serialised once, or nil when empty.
func (r *Registry) EncodedSpecs() (json.RawMessage, error) {
	if len(r.names) == 0 {
		return nil, nil
	}
	return providers.EncodeTools(r.Specs())
}
