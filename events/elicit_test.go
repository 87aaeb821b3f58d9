package events

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func intp(n int) *int           { return &n }
func floatp(f float64) *float64 { return &f }

// testForm has one field of each kind the MCP form schema allows.
func testForm() *Elicitation {
	return &Elicitation{ID: "el-1", Server: "s", Mode: ElicitForm, Fields: []ElicitField{
		{Name: "name", Type: "string", Required: true, MinLength: intp(2), MaxLength: intp(5)},
		{Name: "age", Type: "integer", Minimum: floatp(18), Maximum: floatp(130)},
		{Name: "ratio", Type: "number", Minimum: floatp(0), Maximum: floatp(1)},
		{Name: "ok", Type: "boolean"},
		{Name: "mail", Type: "string", Format: "email"},
		{Name: "site", Type: "string", Format: "uri"},
		{Name: "born", Type: "string", Format: "date"},
		{Name: "at", Type: "string", Format: "date-time"},
		{Name: "code", Type: "string", Pattern: "^[A-Z]+$"},
		{Name: "color", Type: "string", Options: []ElicitOption{{Value: "r", Title: "Red"}, {Value: "g"}}},
		{Name: "tags", Type: "array", MinItems: intp(1), MaxItems: intp(2), Options: []ElicitOption{{Value: "a"}, {Value: "b"}, {Value: "c"}}},
	}}
}

// Values are checked as the schema would check them; what passes comes
// back as sent over JSON.
func TestElicitationCheck(t *testing.T) {
	for _, c := range []struct {
		name    string
		content string
		want    string // the error, or "" and then out
		out     string
	}{
		{"minimal", `{"name":"Ann"}`, "", `{"name":"Ann"}`},
		{"all", `{"name":"Ann","age":30,"ratio":0.5,"ok":false,"mail":"a@b.io","site":"https://x.io/p","born":"2000-02-29",
			"at":"2020-01-02T03:04:05+08:00","code":"AB","color":"r","tags":["a","c"]}`, "",
			`{"age":30,"at":"2020-01-02T03:04:05+08:00","born":"2000-02-29","code":"AB","color":"r","mail":"a@b.io","name":"Ann","ok":false,"ratio":0.5,"site":"https://x.io/p","tags":["a","c"]}`},
		{"required missing", `{}`, "name: is required", ""},
		{"required empty", `{"name":"  "}`, "name: is required", ""},
		{"required null", `{"name":null}`, "name: is required", ""},
		{"too short (runes)", `{"name":"中"}`, "name: must have at least 2 characters", ""},
		{"too long", `{"name":"abcdef"}`, "name: must have at most 5 characters", ""},
		{"not whole", `{"name":"Ann","age":30.5}`, "age: must be a whole number", ""},
		{"below", `{"name":"Ann","age":17}`, "age: must be at least 18", ""},
		{"above", `{"name":"Ann","ratio":1.5}`, "ratio: must be at most 1", ""},
		{"number as text", `{"name":"Ann","age":"30"}`, "age: must be a number", ""},
		{"bool as text", `{"name":"Ann","ok":"yes"}`, "ok: must be true or false", ""},
		{"mail", `{"name":"Ann","mail":"Ann <a@b.io>"}`, "mail: must be an email address", ""},
		{"uri relative", `{"name":"Ann","site":"/p"}`, "site: must be an absolute address", ""},
		{"date", `{"name":"Ann","born":"2001-02-29"}`, "born: must be a date as YYYY-MM-DD", ""},
		{"date-time", `{"name":"Ann","at":"2020-01-02 03:04"}`, "at: must be a date and time", ""},
		{"pattern", `{"name":"Ann","code":"ab"}`, "code: does not match the pattern ^[A-Z]+$", ""},
		{"not a choice", `{"name":"Ann","color":"Red"}`, `color: "Red" is not one of its choices (r, g)`, ""},
		{"list choice", `{"name":"Ann","tags":["a","x"]}`, `tags: "x" is not one of its choices`, ""},
		{"list twice", `{"name":"Ann","tags":["a","a"]}`, `tags: "a" is picked twice`, ""},
		{"list long", `{"name":"Ann","tags":["a","b","c"]}`, "tags: pick at most 2", ""},
		{"list short", `{"name":"Ann","tags":[]}`, "tags: pick at least 1", ""},
		{"list type", `{"name":"Ann","tags":"a"}`, "tags: must be a list of its choices", ""},
		{"unknown", `{"name":"Ann","password":"x"}`, "password: the form has no such field", ""},
		{"several", `{"age":1,"zz":1}`, "name: is required; age: must be at least 18; zz: the form has no such field", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var content map[string]any
			if err := json.Unmarshal([]byte(c.content), &content); err != nil {
				t.Fatal(err)
			}
			out, err := testForm().Check(content)
			if c.want != "" {
				var ee *ElicitError
				if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &ee) {
					t.Fatalf("err = %v, want %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := json.Marshal(out)
			if string(b) != c.out {
				t.Fatalf("out = %s\nwant  %s", b, c.out)
			}
		})
	}
}

// Values a Go front end builds (ints, []string) pass as JSON ones do.
func TestElicitationCheckGoValues(t *testing.T) {
	out, err := testForm().Check(map[string]any{"name": "Ann", "age": 40, "tags": []string{"b"}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(out, map[string]any{"name": "Ann", "age": 40.0, "tags": []any{"b"}}) {
		t.Fatalf("out = %#v", out)
	}
}

func TestElicitFieldHint(t *testing.T) {
	f := testForm().Fields
	for i, want := range map[int]string{0: "2 to 5 characters", 1: "a whole number from 18 to 130", 4: "an email address",
		10: "pick 1 to 2", 3: ""} {
		if got := f[i].Hint(); got != want {
			t.Errorf("%s: hint %q, want %q", f[i].Name, got, want)
		}
	}
}

// Whatever a client sends as content, Check answers without panicking,
// and what it passes passes again unchanged.
func FuzzElicitationCheck(f *testing.F) {
	for _, s := range []string{`{"name":"Ann"}`, `{"tags":["a","a"]}`, `{"age":1e308,"ratio":-0}`, `{"site":"http://[::1"}`, `{"at":"2020-13-01T00:00:00Z"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var content map[string]any
		if json.Unmarshal([]byte(s), &content) != nil {
			return
		}
		out, err := testForm().Check(content)
		if err != nil {
			return
		}
		again, err := testForm().Check(out)
		if err != nil || !reflect.DeepEqual(again, out) {
			t.Fatalf("checked %v, then %v (%v)", out, again, err)
		}
	})
}
