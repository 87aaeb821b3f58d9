package repair

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCloseJSON(t *testing.T) {
	cases := []struct {
		in, want string
		ok       bool
	}{
		{`{"path": "a.go"`, `{"path": "a.go"}`, true},
		{`{"path": "a.g`, `{"path": "a.g"}`, true},
		{`{"a": {"b": [1, 2`, `{"a": {"b": [1, 2]}}`, true},
		{`{"a": 1, "b"`, `{"a": 1}`, true},
		{`{"a": 1, "b":`, `{"a": 1}`, true},
		{`{"a": 1,`, `{"a": 1}`, true},
		{`{"a": tru`, `{}`, true},
		{`{"a": true`, `{"a": true}`, true},
		{`{"a": 12`, `{"a": 12}`, true},
		{`{"a": 1.`, `{}`, true},
		{`{"s": "x\`, `{"s": "x"}`, true},
		{`{"s": "x\\`, `{"s": "x\\"}`, true},
		{`{"s": "x\u00`, `{"s": "x"}`, true},
		{`{"s": "line\n`, `{"s": "line\n"}`, true},
		{"{\"s\": \"caf\xc3", `{"s": "caf"}`, true},
		{`{"a": [{"b": "c"}, {"d"`, `{"a": [{"b": "c"}, {}]}`, true},
		{`{`, `{}`, true},
		// Not truncations.
		{`{"a": 1}`, `{"a": 1}`, false},
		{`[1, 2`, `[1, 2`, false},
		{`{"a": 1}}`, `{"a": 1}}`, false},
		{`{"a": x.txt}`, `{"a": x.txt}`, false},
		{`{"a" 1`, `{"a" 1`, false},
		{``, ``, false},
	}
	for _, c := range cases {
		got, ok := CloseJSON(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("CloseJSON(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func FuzzCloseJSON(f *testing.F) {
	for _, s := range []string{`{"path": "a.go"`, `{"a": {"b": [1, 2`, `{"s": "x\u00`, `{"a": 1, "b":`, `{"x": [true, null, -1e`, "{\"s\": \"\xe4\xb8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out, ok := CloseJSON(s)
		if !ok {
			if out != s {
				t.Fatalf("not repaired but changed: %q -> %q", s, out)
			}
			return
		}
		if !json.Valid([]byte(out)) {
			t.Fatalf("repaired %q into invalid JSON %q", s, out)
		}
		// The result is a prefix of the input (less a dangling escape or
		// partial rune) followed only by closers.
		body := strings.TrimRight(out, `"}]`)
		if !strings.HasPrefix(s, body) && !strings.HasPrefix(s, strings.TrimRight(body, "\\")) {
			t.Fatalf("repair of %q invented content: %q", s, out)
		}
		var m map[string]any
		if json.Unmarshal([]byte(out), &m) != nil {
			t.Fatalf("repair of %q is not an object: %q", s, out)
		}
	})
}

const readSchema = `{"type":"object","properties":{"path":{"type":"string"},"offset":{"type":"integer"},"mode":{"type":"string","enum":["a","b"]},"deep":{"type":"object","properties":{"n":{"type":"number"}},"additionalProperties":false}},"required":["path"],"additionalProperties":false}`

func TestValidate(t *testing.T) {
	cases := []struct {
		args, err string
	}{
		{`{"path":"a"}`, ""},
		{`{"path":"a","offset":3}`, ""},
		{`{"path":"a","offset":"3"}`, ""}, // quoted numbers pass, as tools.Int takes them
		{`{"path":"a","offset":1.5}`, "expected integer"},
		{`{}`, `missing required "path"`},
		{`{"path":42}`, "expected string"},
		{`{"path":"a","bogus":1}`, `unknown property "bogus"`},
		{`{"path":"a","mode":"c"}`, "not one of the allowed"},
		{`{"path":"a","deep":{"n":"x"}}`, "deep.n: expected number"},
		{`[1]`, "must be a JSON object"},
		{`{"path":`, "not valid JSON"},
	}
	for _, c := range cases {
		err := Validate(json.RawMessage(readSchema), c.args)
		switch {
		case c.err == "" && err != nil:
			t.Errorf("Validate(%s) = %v", c.args, err)
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("Validate(%s) = %v, want %q", c.args, err, c.err)
		}
	}
}

// acceptRead accepts read_file calls whose arguments validate.
func acceptRead(name, args string) bool {
	return name == "read_file" && Validate(json.RawMessage(readSchema), args) == nil
}

func TestScavenge(t *testing.T) {
	cases := []struct {
		name, text string
		calls      []Call
		left       string
	}{
		{"dsml params", "Let me look.\n\n<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"read_file\">\n<｜DSML｜parameter name=\"path\" string=\"true\">a.go</｜DSML｜parameter>\n<｜DSML｜parameter name=\"offset\" string=\"false\">3</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>",
			[]Call{{"read_file", `{"offset":3,"path":"a.go"}`}}, "Let me look."},
		{"dsml v4 json body ascii bars", "<|DSML|tool_calls>\n<|DSML|invoke name=\"read_file\">\n{\"path\": \"b.go\"}\n</|DSML|invoke>\n</|DSML|tool_calls>\nDone.",
			[]Call{{"read_file", `{"path":"b.go"}`}}, "Done."},
		{"dsml cut before its end", "x <｜DSML｜function_calls><｜DSML｜invoke name=\"read_file\">{\"path\": \"c.go\"",
			[]Call{{"read_file", `{"path":"c.go"}`}}, "x"},
		{"dsml unknown tool stays", "<｜DSML｜function_calls><｜DSML｜invoke name=\"rm\">{}</｜DSML｜invoke></｜DSML｜function_calls>",
			nil, "<｜DSML｜function_calls><｜DSML｜invoke name=\"rm\">{}</｜DSML｜invoke></｜DSML｜function_calls>"},
		{"tool_call block", "ok <tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"d.go\"}}\n</tool_call>",
			[]Call{{"read_file", `{"path":"d.go"}`}}, "ok"},
		{"fenced json", "I will call:\n```json\n{\"name\": \"read_file\", \"arguments\": \"{\\\"path\\\": \\\"e.go\\\"}\"}\n```\n",
			[]Call{{"read_file", `{"path":"e.go"}`}}, "I will call:"},
		{"bare json in reasoning", `I should call {"function": {"name": "read_file", "arguments": {"path": "f.go"}}} now.`,
			[]Call{{"read_file", `{"path":"f.go"}`}}, "I should call  now."},
		{"invalid arguments stay", `{"name": "read_file", "arguments": {"path": 1}}`, nil, `{"name": "read_file", "arguments": {"path": 1}}`},
		{"other json stays", "```json\n{\"name\": \"bob\"}\n```", nil, "```json\n{\"name\": \"bob\"}\n```"},
		{"same call twice counted once", `{"name":"read_file","arguments":{"path":"g"}} and <tool_call>{"name":"read_file","arguments":{"path":"g"}}</tool_call>`,
			[]Call{{"read_file", `{"path":"g"}`}}, "and"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			calls, left := Scavenge(c.text, acceptRead)
			if len(calls) != len(c.calls) {
				t.Fatalf("calls = %v, want %v", calls, c.calls)
			}
			for i := range calls {
				if calls[i] != c.calls[i] {
					t.Errorf("call %d = %v, want %v", i, calls[i], c.calls[i])
				}
			}
			if left != c.left {
				t.Errorf("text left = %q, want %q", left, c.left)
			}
		})
	}
}

func TestHoldback(t *testing.T) {
	cases := []struct {
		text string
		show int
		held bool
	}{
		{"plain answer", 12, false},
		{"a < b", 5, false},
		{"see <", 4, false},
		{"see <｜DS", 4, false},
		{"see <｜DSML｜function_calls>", 4, true},
		{"x <tool_call>{", 2, true},
		{"x <tool", 2, false},
	}
	for _, c := range cases {
		show, held := Holdback(c.text, 0)
		if show != c.show || held != c.held {
			t.Errorf("Holdback(%q) = %d, %v; want %d, %v", c.text, show, held, c.show, c.held)
		}
	}
}

func TestBreaker(t *testing.T) {
	var b Breaker
	read := `{"path":"a.go"}`
	var ran []bool
	for range 5 {
		ran = append(ran, b.Admit("read_file", read, true))
	}
	if want := []bool{true, true, true, false, false}; !equal(ran, want) {
		t.Fatalf("five identical reads: %v, want %v", ran, want)
	}
	// Spacing and key order do not make a call new.
	if b.Admit("read_file", `{ "path" : "a.go" }`, true) {
		t.Error("the same read written differently ran")
	}
	// A write clears the reads: re-reading after an edit is fresh.
	if !b.Admit("edit_file", `{"path":"a.go","old_string":"x","new_string":"y"}`, false) {
		t.Fatal("edit refused")
	}
	if !b.Admit("read_file", read, true) {
		t.Error("re-read after an edit refused")
	}
	// The same write repeated is still a storm.
	edit := `{"command":"make"}`
	for i := range 3 {
		if !b.Admit("bash", edit, false) {
			t.Fatalf("bash run %d refused", i+1)
		}
	}
	if b.Admit("bash", edit, false) {
		t.Error("fourth identical command ran")
	}
	b.Reset()
	if !b.Admit("bash", edit, false) {
		t.Error("a new user turn did not reset the window")
	}
	// The window slides: old repeats fall out.
	b = Breaker{Window: 4, Limit: 1}
	b.Admit("read_file", read, true)
	for i := range 4 {
		b.Admit("read_file", `{"path":"`+string(rune('b'+i))+`"}`, true)
	}
	if !b.Admit("read_file", read, true) {
		t.Error("a call outside the window was refused")
	}
}

func equal(a, b []bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func FuzzScavenge(f *testing.F) {
	for _, s := range []string{
		"<｜DSML｜function_calls><｜DSML｜invoke name=\"read_file\"><｜DSML｜parameter name=\"path\" string=\"true\">a</｜DSML｜parameter></｜DSML｜invoke></｜DSML｜function_calls>",
		`<tool_call>{"name":"read_file","arguments":{"path":"a"}}</tool_call>`,
		"```json\n{\"name\":\"read_file\",\"arguments\":{\"path\":\"a\"}}\n```",
		`x {"function":{"name":"read_file","arguments":"{\"path\":\"a\"}"}} y`,
		"<|DSML|tool_calls><|DSML|invoke name=\"read_file\">{\"path\":",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		calls, left := Scavenge(s, acceptRead)
		if len(calls) == 0 && left != s {
			t.Fatalf("nothing recovered but the text changed: %q -> %q", s, left)
		}
		for _, c := range calls {
			if !acceptRead(c.Name, c.Arguments) {
				t.Fatalf("returned a call the acceptor refuses: %+v", c)
			}
		}
		if len(left) > len(s) {
			t.Fatalf("text grew: %q -> %q", s, left)
		}
	})
}
