package builtin

import (
	"strings"
	"testing"
)

const ftGoSource = `package demo

func add(a, b int) int {
	return a + b
}

func sub(a, b int) int {
	return a - b
}
`

func TestEditFile(t *testing.T) {
	cases := []struct {
		name    string
		content string
		args    map[string]any
		want    string
		result  string
	}{
		{"unique", ftGoSource,
			map[string]any{"path": "f.go", "old_string": "return a + b", "new_string": "return b + a"},
			strings.Replace(ftGoSource, "return a + b", "return b + a", 1), "edited f.go (+1 -1)"},
		{"replace_all", ftGoSource,
			map[string]any{"path": "f.go", "old_string": "a, b int", "new_string": "x, y int", "replace_all": true},
			strings.ReplaceAll(ftGoSource, "a, b int", "x, y int"), "edited f.go (+2 -2); replace_all changed 2 occurrence(s)"},
		{"multi-line with deletion", ftGoSource,
			map[string]any{"path": "f.go", "old_string": "\nfunc sub(a, b int) int {\n\treturn a - b\n}\n", "new_string": ""},
			"package demo\n\nfunc add(a, b int) int {\n\treturn a + b\n}\n", "edited f.go (+0 -4)"},
		{"file_path alias", "x\n", map[string]any{"file_path": "f.go", "old_string": "x", "new_string": "y"}, "y\n", "edited f.go"},
		{"crlf file, lf old_string", "one\r\ntwo\r\nthree\r\n",
			map[string]any{"path": "f.go", "old_string": "one\ntwo\n", "new_string": "1\n2\n"},
			"1\r\n2\r\nthree\r\n", "edited f.go (+2 -2)"},
		{"create with empty old_string", "",
			map[string]any{"path": "new.go", "old_string": "", "new_string": "package x\n"}, "package x\n", "created new.go (+1 -0)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			files := map[string]string{}
			if c.content != "" {
				files["f.go"] = c.content
			}
			env := ftWorkspace(t, files)
			res := ftMust(t, env, "edit_file", c.args)
			if !strings.HasPrefix(res.Content, c.result) {
				t.Errorf("result %q, want prefix %q", res.Content, c.result)
			}
			p, _ := c.args["path"].(string)
			if p == "" {
				p, _ = c.args["file_path"].(string)
			}
			if got := ftGet(t, env, p); got != c.want {
				t.Errorf("content:\n%q\nwant:\n%q", got, c.want)
			}
		})
	}
}

func TestEditFileErrors(t *testing.T) {
	cases := []struct {
		name  string
		args  map[string]any
		wants []string
	}{
		{"not found shows closest lines with whitespace hint",
			map[string]any{"path": "f.go", "old_string": "func sub(a, b int) int {\n    return a - b\n}", "new_string": "x"},
			[]string{"old_string was not found in f.go", "Lines 7-9 match except for whitespace", "     8\t\treturn a - b"}},
		{"not found shows similar text",
			map[string]any{"path": "f.go", "old_string": "return a * b", "new_string": "x"},
			[]string{"not found", "closest text is at line 4 (", "     4\t\treturn a + b"}},
		{"not found, nothing similar",
			map[string]any{"path": "f.go", "old_string": "zzzzqqqq", "new_string": "x"},
			[]string{"not found", "No similar text"}},
		{"multiple matches",
			map[string]any{"path": "f.go", "old_string": "(a, b int) int {", "new_string": "x"},
			[]string{"matches 2 places", "lines 3, 7", "replace_all"}},
		{"identical strings",
			map[string]any{"path": "f.go", "old_string": "package demo", "new_string": "package demo"},
			[]string{"identical"}},
		{"missing file",
			map[string]any{"path": "nope.go", "old_string": "a", "new_string": "b"},
			[]string{"file not found: nope.go"}},
		{"empty old_string on non-empty file",
			map[string]any{"path": "f.go", "old_string": "", "new_string": "b"},
			[]string{"old_string is empty", "already has content"}},
		{"missing new_string",
			map[string]any{"path": "f.go", "old_string": "package demo"},
			[]string{`missing required argument "new_string"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := ftWorkspace(t, map[string]string{"f.go": ftGoSource})
			ftFail(t, env, "edit_file", c.args, c.wants...)
			if got := ftGet(t, env, "f.go"); got != ftGoSource {
				t.Errorf("file changed after a failed edit")
			}
		})
	}
}

func TestEditFileBinaryRefused(t *testing.T) {
	env := ftWorkspace(t, map[string]string{"b.bin": "ab\x00cd"})
	ftFail(t, env, "edit_file", map[string]any{"path": "b.bin", "old_string": "ab", "new_string": "x"}, "binary")
}

func TestEditFilePreview(t *testing.T) {
	env := ftWorkspace(t, map[string]string{"f.go": ftGoSource})
	pv, err := ftPreview(t, env, "edit_file", map[string]any{"path": "f.go", "old_string": "a - b", "new_string": "a - b - 0"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pv) != 1 || pv[0].Operation != "update" || pv[0].Added != 1 || pv[0].Removed != 1 ||
		!strings.Contains(pv[0].Diff, "-\treturn a - b\n+\treturn a - b - 0\n") {
		t.Errorf("preview = %+v", pv)
	}
	if got := ftGet(t, env, "f.go"); got != ftGoSource {
		t.Error("preview changed the file")
	}
	if _, err := ftPreview(t, env, "edit_file", map[string]any{"path": "f.go", "old_string": "missing", "new_string": "x"}); err == nil ||
		!strings.Contains(err.Error(), "not found") {
		t.Errorf("preview of a failing edit: %v", err)
	}
}
