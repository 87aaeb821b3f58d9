package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"testing"
)

type fakeTool struct {
	name, desc string
	schema     string
	ro         bool
}

func (f fakeTool) Name() string            { return f.name }
func (f fakeTool) Description() string     { return f.desc }
func (f fakeTool) Schema() json.RawMessage { return json.RawMessage(f.schema) }
func (f fakeTool) ReadOnly() bool          { return f.ro }
func (f fakeTool) Execute(context.Context, *Env, json.RawMessage) (Result, error) {
	return Result{Content: f.name}, nil
}

func tool(name string, ro bool) fakeTool {
	return fakeTool{name: name, desc: "does " + name + " <safely>", schema: `{"type":"object","properties":{}}`, ro: ro}
}

func TestRegistrySortedRegardlessOfOrder(t *testing.T) {
	want := []string{"bash", "edit_file", "grep", "mcp__srv__x", "read_file"}
	orders := [][]string{
		{"bash", "edit_file", "grep", "mcp__srv__x", "read_file"},
		{"read_file", "mcp__srv__x", "grep", "edit_file", "bash"},
		{"grep", "bash", "read_file", "edit_file", "mcp__srv__x"},
	}
	var firstSpecs json.RawMessage
	for _, order := range orders {
		var ts []Tool
		for _, n := range order {
			ts = append(ts, tool(n, false))
		}
		// Both construction paths: all at once and one by one.
		r1 := NewRegistry(ts...)
		r2 := NewRegistry()
		for _, tl := range ts {
			r2.Add(tl)
		}
		for _, r := range []*Registry{r1, r2} {
			if got := r.Names(); !slices.Equal(got, want) {
				t.Fatalf("order %v: names %v, want %v", order, got, want)
			}
			var specNames []string
			for _, s := range r.Specs() {
				specNames = append(specNames, s.Name)
			}
			if !slices.Equal(specNames, want) {
				t.Fatalf("order %v: specs %v", order, specNames)
			}
			enc, err := r.EncodedSpecs()
			if err != nil {
				t.Fatal(err)
			}
			again, _ := r.EncodedSpecs()
			if !bytes.Equal(enc, again) {
				t.Fatal("EncodedSpecs differs between calls")
			}
			// The cache-stable prefix depends on this: any insertion
			// order gives the same bytes.
			if firstSpecs == nil {
				firstSpecs = enc
			} else if !bytes.Equal(enc, firstSpecs) {
				t.Fatalf("order %v: specs bytes differ:\n%s\n%s", order, enc, firstSpecs)
			}
		}
	}
	var decoded []map[string]any
	if err := json.Unmarshal(firstSpecs, &decoded); err != nil || len(decoded) != len(want) {
		t.Fatalf("EncodedSpecs is not a %d-element array: %s (%v)", len(want), firstSpecs, err)
	}
	if decoded[0]["type"] != "function" {
		t.Fatalf("spec not in function form: %v", decoded[0])
	}
}

func TestRegistryAddReplaces(t *testing.T) {
	r := NewRegistry(tool("a", false), tool("b", false))
	r.Add(fakeTool{name: "a", desc: "new a", schema: `{}`, ro: true})
	if got := r.Names(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("names %v after replace", got)
	}
	got, ok := r.Get("a")
	if !ok || got.Description() != "new a" || !got.ReadOnly() {
		t.Fatalf("Get(a) = %v %v", got, ok)
	}
	if _, ok := r.Get("missing"); ok {
		t.Fatal("Get(missing) found something")
	}
	// Names returns a copy: callers cannot reorder the registry.
	names := r.Names()
	names[0] = "zzz"
	if r.Names()[0] != "a" {
		t.Fatal("Names exposes internal slice")
	}
	// Later duplicates win in NewRegistry too.
	r2 := NewRegistry(tool("x", false), fakeTool{name: "x", desc: "second", schema: `{}`})
	if x, _ := r2.Get("x"); x.Description() != "second" || len(r2.Names()) != 1 {
		t.Fatalf("duplicate in NewRegistry: %v %v", x.Description(), r2.Names())
	}
}

func TestRegistryFilter(t *testing.T) {
	r := NewRegistry(tool("write", false), tool("read", true), tool("grep", true), tool("bash", false))
	cases := []struct {
		name string
		keep func(Tool) bool
		want []string
	}{
		{"read-only", func(t Tool) bool { return t.ReadOnly() }, []string{"grep", "read"}},
		{"all", func(Tool) bool { return true }, []string{"bash", "grep", "read", "write"}},
		{"none", func(Tool) bool { return false }, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := r.Filter(c.keep)
			if got := f.Names(); !slices.Equal(got, c.want) {
				t.Fatalf("names %v want %v", got, c.want)
			}
			enc, err := f.EncodedSpecs()
			if err != nil {
				t.Fatal(err)
			}
			// An empty registry sends no tools array at all.
			if (enc == nil) != (len(c.want) == 0) {
				t.Fatalf("EncodedSpecs = %s for %v", enc, c.want)
			}
		})
	}
	// Filtering never changes the source registry.
	r.Filter(func(Tool) bool { return false })
	if len(r.Names()) != 4 {
		t.Fatalf("source changed: %v", r.Names())
	}
}

func TestSpecsCarrySchema(t *testing.T) {
	r := NewRegistry(fakeTool{name: "t", desc: "d", schema: `{"type":"object","required":["x"]}`})
	specs := r.Specs()
	if len(specs) != 1 || specs[0].Description != "d" || string(specs[0].Parameters) != `{"type":"object","required":["x"]}` {
		t.Fatalf("specs %+v", specs)
	}
	enc, _ := r.EncodedSpecs()
	if want := `[{"type":"function","function":{"name":"t","description":"d","parameters":{"type":"object","required":["x"]}}}]`; string(enc) != want {
		t.Fatalf("got  %s\nwant %s", enc, want)
	}
}

func TestBuiltinCatalogue(t *testing.T) {
	saved := catalogue
	catalogue = nil
	t.Cleanup(func() { catalogue = saved })

	if got := BuiltinNames(); len(got) != 0 {
		t.Fatalf("empty catalogue lists %v", got)
	}
	Register(tool("write_file", false))
	Register(tool("bash", false))
	Register(tool("glob", true))
	if got := BuiltinNames(); !slices.Equal(got, []string{"bash", "glob", "write_file"}) {
		t.Fatalf("BuiltinNames %v", got)
	}
	if tl, ok := Builtin("glob"); !ok || !tl.ReadOnly() {
		t.Fatalf("Builtin(glob) = %v %v", tl, ok)
	}
	if _, ok := Builtin("nope"); ok {
		t.Fatal("Builtin(nope) found something")
	}
	// A second registration of a name replaces the first.
	Register(tool("glob", false))
	if tl, ok := Builtin("glob"); !ok || tl.ReadOnly() || len(BuiltinNames()) != 3 {
		t.Fatalf("after re-registering glob: %v %v, names %v", tl, ok, BuiltinNames())
	}
}
