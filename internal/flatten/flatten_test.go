package flatten

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/internal/repair"
)

func fixture(t *testing.T, name string) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRoundTrip flattens schemas shaped like real MCP servers' tools,
// sends flat arguments that validate against the flat schema, and checks
// that Nest rebuilds arguments that validate against the original.
func TestRoundTrip(t *testing.T) {
	cases := []struct {
		fixture  string
		flat     bool
		props    []string
		required []string
		args     string // flat arguments, as a model would send them
		nested   string // what the tool must receive
	}{
		{
			fixture:  "notion_post_page.json",
			flat:     true,
			props:    []string{"children", "icon.emoji", "parent.database_id", "parent.page_id", "properties.title.title", "properties.title.type"},
			required: []string{"parent.page_id", "properties.title.title"},
			args:     `{"parent.page_id":"9b1d","properties.title.title":[{"text":{"content":"Notes"}}],"icon.emoji":"📝"}`,
			nested:   `{"icon":{"emoji":"📝"},"parent":{"page_id":"9b1d"},"properties":{"title":{"title":[{"text":{"content":"Notes"}}]}}}`,
		},
		{
			// Depth 2 only, but eleven leaves.
			fixture:  "search_issues_options.json",
			flat:     true,
			props:    []string{"filter.assignee", "filter.author", "filter.labels", "filter.milestone", "filter.state", "page.cursor", "page.page", "page.per_page", "query", "sort.direction", "sort.field"},
			required: []string{"query"},
			args:     `{"query":"panic","filter.state":"open","filter.labels":["bug"],"page.per_page":50,"sort.field":"updated"}`,
			nested:   `{"filter":{"labels":["bug"],"state":"open"},"page":{"per_page":50},"query":"panic","sort":{"field":"updated"}}`,
		},
		{fixture: "get_file_contents.json", flat: false},
		{fixture: "flat_many.json", flat: false},
	}
	for _, c := range cases {
		t.Run(c.fixture, func(t *testing.T) {
			orig := fixture(t, c.fixture)
			flat, ok := Flatten(orig)
			if ok != c.flat {
				t.Fatalf("flattened = %v, want %v", ok, c.flat)
			}
			if !ok {
				if string(flat) != string(orig) {
					t.Error("a schema left alone was changed")
				}
				return
			}
			var s struct {
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			}
			if err := json.Unmarshal(flat, &s); err != nil {
				t.Fatal(err)
			}
			var props []string
			for k := range s.Properties {
				props = append(props, k)
			}
			slices.Sort(props)
			if !reflect.DeepEqual(props, c.props) || !reflect.DeepEqual(s.Required, c.required) {
				t.Errorf("flat properties %v required %v", props, s.Required)
			}
			if err := repair.Validate(flat, c.args); err != nil {
				t.Fatalf("flat arguments do not fit the flat schema: %v", err)
			}
			nested, err := Nest(json.RawMessage(c.args))
			if err != nil {
				t.Fatal(err)
			}
			if string(nested) != c.nested {
				t.Errorf("nested = %s\nwant     %s", nested, c.nested)
			}
			if err := repair.Validate(orig, string(nested)); err != nil {
				t.Errorf("nested arguments do not fit the original schema: %v", err)
			}
		})
	}
}

func TestFlattenKeepsLeafKeywordsAndParentDescription(t *testing.T) {
	flat, ok := Flatten(fixture(t, "notion_post_page.json"))
	if !ok {
		t.Fatal("not flattened")
	}
	var s struct {
		Properties map[string]map[string]any `json:"properties"`
	}
	json.Unmarshal(flat, &s)
	if s.Properties["parent.page_id"]["format"] != "uuid" {
		t.Errorf("leaf keyword lost: %v", s.Properties["parent.page_id"])
	}
	if s.Properties["parent.page_id"]["description"] != "(part of parent: Where the new page goes)" {
		t.Errorf("parent description not carried: %v", s.Properties["parent.page_id"])
	}
}

func TestNest(t *testing.T) {
	cases := []struct{ in, out, err string }{
		{`{"a":1}`, `{"a":1}`, ""},
		{`{"a.b.c":"x","a.d":2}`, `{"a":{"b":{"c":"x"},"d":2}}`, ""},
		{`{"a":{"b":1},"a.c":2}`, `{"a":{"b":1,"c":2}}`, ""}, // a model mixing both forms
		{`{"a":1,"a.b":2}`, "", "conflicts"},
		{`[1]`, "", "not a JSON object"},
		{`{"n.big":12345678901234567890}`, `{"n":{"big":12345678901234567890}}`, ""},
	}
	for _, c := range cases {
		got, err := Nest(json.RawMessage(c.in))
		switch {
		case c.err != "":
			if err == nil || !contains(err.Error(), c.err) {
				t.Errorf("Nest(%s) err = %v, want %q", c.in, err, c.err)
			}
		case err != nil || string(got) != c.out:
			t.Errorf("Nest(%s) = %s, %v; want %s", c.in, got, err, c.out)
		}
	}
}

func TestFlattenRefusesDottedNames(t *testing.T) {
	s := `{"type":"object","properties":{"a.b":{"type":"string"},"c":{"type":"object","properties":{"d":{"type":"object","properties":{"e":{"type":"string"}}}}}}}`
	if _, ok := Flatten(json.RawMessage(s)); ok {
		t.Error("a schema with a dotted property name was flattened")
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func FuzzNest(f *testing.F) {
	for _, s := range []string{`{"a.b.c":1,"a.d":"x"}`, `{"a":{"b":1},"a.c":2}`, `{"a":1,"a.b":2}`, `{"":1,".":2,"a..b":3}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, err := Nest(json.RawMessage(s))
		if err != nil {
			return
		}
		var m map[string]any
		if json.Unmarshal(out, &m) != nil {
			t.Fatalf("Nest(%q) = %q, not an object", s, out)
		}
		for k := range m {
			if strings.Contains(k, ".") {
				t.Fatalf("Nest(%q) left a dotted key %q", s, k)
			}
		}
	})
}
