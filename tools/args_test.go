package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestInt(t *testing.T) {
	cases := []struct {
		in   string
		want Int
		err  bool
	}{
		{`12`, 12, false},
		{`"12"`, 12, false},
		{`" 7 "`, 7, false},
		{`-3`, -3, false},
		{`"-3"`, -3, false},
		{`30.0`, 30, false},
		{`"30.0"`, 30, false},
		{`1e2`, 100, false},
		{`null`, 0, false},
		{`""`, 0, false},
		{`3.5`, 0, true},
		{`"3.5"`, 0, true},
		{`"ten"`, 0, true},
		{`true`, 0, true},
		{`[1]`, 0, true},
	}
	for _, c := range cases {
		var v struct {
			N Int `json:"n"`
		}
		err := json.Unmarshal([]byte(`{"n":`+c.in+`}`), &v)
		if (err != nil) != c.err {
			t.Errorf("%s: err = %v, want error %v", c.in, err, c.err)
			continue
		}
		if !c.err && v.N != c.want {
			t.Errorf("%s: got %d, want %d", c.in, v.N, c.want)
		}
	}
}

func TestBool(t *testing.T) {
	cases := []struct {
		in   string
		want Bool
		err  bool
	}{
		{`true`, true, false},
		{`false`, false, false},
		{`"true"`, true, false},
		{`"True"`, true, false},
		{`"FALSE"`, false, false},
		{`1`, true, false},
		{`"1"`, true, false},
		{`0`, false, false},
		{`"0"`, false, false},
		{`null`, false, false},
		{`""`, false, false},
		{`"yes please"`, false, true},
		{`"maybe"`, false, true},
		{`2`, false, true},
		{`{}`, false, true},
	}
	for _, c := range cases {
		var v struct {
			B Bool `json:"b"`
		}
		err := json.Unmarshal([]byte(`{"b":`+c.in+`}`), &v)
		if (err != nil) != c.err {
			t.Errorf("%s: err = %v, want error %v", c.in, err, c.err)
			continue
		}
		if !c.err && v.B != c.want {
			t.Errorf("%s: got %v, want %v", c.in, v.B, c.want)
		}
	}
}

type strictInner struct {
	Path     string `json:"path"`
	FilePath string `json:"file_path"`
}

type strictArgs struct {
	strictInner
	Limit   Int    `json:"limit,omitempty"`
	Flag    Bool   `json:"-i"`
	Skipped string `json:"-"`
	Plain   string
	//lint:ignore U1000 present to show that unexported fields are not arguments
	hidden string // unexported fields are not arguments
}

func TestDecodeStrict(t *testing.T) {
	cases := []struct {
		name  string
		raw   string
		known []string
		want  string // substrings of the error; "" for success
	}{
		{"empty", ``, nil, ""},
		{"empty object", `{}`, nil, ""},
		{"all known", `{"path":"a","file_path":"b","limit":"3","-i":"true","Plain":"x"}`, nil, ""},
		{"unknown", `{"path":"a","limt":3}`, nil,
			"unknown argument(s) limt; expected path, file_path, limit, -i, Plain"},
		{"several unknown sorted", `{"zz":1,"aa":2}`, nil, "unknown argument(s) aa, zz"},
		{"tag dash is not an argument", `{"Skipped":"x"}`, nil, "unknown argument(s) Skipped"},
		{"unexported is not an argument", `{"hidden":"x"}`, nil, "unknown argument(s) hidden"},
		{"explicit names win", `{"path":"a","limit":1}`, []string{"path"}, "unknown argument(s) limit; expected path"},
		{"bad value", `{"limit":"x"}`, nil, "invalid arguments"},
		{"not json", `nope`, nil, "invalid arguments"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var a strictArgs
			err := DecodeStrict(json.RawMessage(c.raw), &a, c.known...)
			if c.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("expected an error containing %q", c.want)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %q does not contain %q", err, c.want)
			}
		})
	}
	var a strictArgs
	if err := DecodeStrict(json.RawMessage(`{"path":"p","limit":"7","-i":1}`), &a); err != nil ||
		a.Path != "p" || a.Limit != 7 || !bool(a.Flag) {
		t.Fatalf("decoded %+v, %v", a, err)
	}
	var none struct{}
	if err := DecodeStrict(json.RawMessage(`{"x":1}`), &none); err == nil ||
		!strings.Contains(err.Error(), "expected no arguments") {
		t.Fatalf("a tool without arguments: %v", err)
	}
}
