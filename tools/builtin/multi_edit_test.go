package builtin

import (
	"strings"
	"testing"
)

func TestMultiEdit(t *testing.T) {
	env := ftWorkspace(t, map[string]string{"f.go": ftGoSource})
	res := ftMust(t, env, "multi_edit", map[string]any{"path": "f.go", "edits": []map[string]any{
		{"old_string": "func add", "new_string": "func plus"},
		// Sees the result of the first edit.
		{"old_string": "func plus(a, b int) int {\n\treturn a + b", "new_string": "func plus(a, b int) int {\n\treturn b + a"},
		{"old_string": "int", "new_string": "int64", "replace_all": true},
	}})
	want := strings.ReplaceAll(strings.Replace(strings.Replace(ftGoSource, "func add", "func plus", 1), "return a + b", "return b + a", 1), "int", "int64")
	if got := ftGet(t, env, "f.go"); got != want {
		t.Errorf("content:\n%s\nwant:\n%s", got, want)
	}
	if !strings.HasPrefix(res.Summary, "edited f.go with 3 edits (+3 -3)") {
		t.Errorf("summary = %q", res.Summary)
	}
}

func TestMultiEditAllOrNothing(t *testing.T) {
	cases := []struct {
		name  string
		edits []map[string]any
		wants []string
	}{
		{"second edit not found", []map[string]any{
			{"old_string": "func add", "new_string": "func plus"},
			{"old_string": "func add", "new_string": "func again"}, // consumed by the first edit
			{"old_string": "func sub", "new_string": "func minus"},
		}, []string{"edits[1] (edit 2 of 3) failed", "no edits were applied", "not found"}},
		{"third edit ambiguous", []map[string]any{
			{"old_string": "package demo", "new_string": "package demo2"},
			{"old_string": "a - b", "new_string": "b - a"},
			{"old_string": "int {", "new_string": "int64 {"},
		}, []string{"edits[2] (edit 3 of 3)", "matches 2 places"}},
		{"no-op edit", []map[string]any{
			{"old_string": "a", "new_string": "a"},
		}, []string{"edits[0]", "identical"}},
		{"empty list", []map[string]any{}, []string{"edits is empty"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := ftWorkspace(t, map[string]string{"f.go": ftGoSource})
			ftFail(t, env, "multi_edit", map[string]any{"path": "f.go", "edits": c.edits}, c.wants...)
			if got := ftGet(t, env, "f.go"); got != ftGoSource {
				t.Errorf("file changed although an edit failed:\n%s", got)
			}
		})
	}
}

func TestMultiEditCreatesAndPreviews(t *testing.T) {
	env := ftWorkspace(t, nil)
	args := map[string]any{"file_path": "n.txt", "edits": []map[string]any{
		{"old_string": "", "new_string": "hello world\n"},
		{"old_string": "world", "new_string": "there"},
	}}
	pv, err := ftPreview(t, env, "multi_edit", args)
	if err != nil {
		t.Fatal(err)
	}
	if len(pv) != 1 || pv[0].Operation != "create" || !strings.Contains(pv[0].Diff, "+hello there\n") {
		t.Errorf("preview = %+v", pv)
	}
	if ftExists(env, "n.txt") {
		t.Fatal("preview created the file")
	}
	ftMust(t, env, "multi_edit", args)
	if got := ftGet(t, env, "n.txt"); got != "hello there\n" {
		t.Errorf("content = %q", got)
	}
}
