package builtin

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestMoveFile(t *testing.T) {
	cases := []struct {
		name     string
		src, dst string
		check    string // a file that must exist afterwards, with content "x"
	}{
		{"rename", "a.txt", "b.txt", "b.txt"},
		{"into new directories", "a.txt", "deep/er/c.txt", "deep/er/c.txt"},
		{"directory", "dir", "moved", "moved/in.txt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := ftWorkspace(t, map[string]string{"a.txt": "x", "dir/in.txt": "x"})
			res := ftMust(t, env, "move_file", map[string]any{"source": c.src, "destination": c.dst})
			if res.Content != "moved "+c.src+" to "+c.dst {
				t.Errorf("result = %q", res.Content)
			}
			if ftExists(env, c.src) {
				t.Error("source still exists")
			}
			if got := ftGet(t, env, c.check); got != "x" {
				t.Errorf("%s = %q", c.check, got)
			}
		})
	}
}

func TestMoveFileCarriesReadMark(t *testing.T) {
	env := ftWorkspace(t, map[string]string{"a.txt": "x"})
	ftMust(t, env, "read_file", map[string]any{"path": "a.txt"})
	ftMust(t, env, "move_file", map[string]any{"source": "a.txt", "destination": "b.txt"})
	if !env.Reads.Has(filepath.Join(env.Root, "b.txt")) {
		t.Error("moved file lost its read mark, so write_file would refuse it")
	}
}

func TestMoveFileErrors(t *testing.T) {
	cases := []struct {
		name     string
		src, dst string
		wants    []string
	}{
		{"destination exists", "a.txt", "b.txt", []string{"destination b.txt already exists", "never overwrites"}},
		{"missing source", "nope.txt", "c.txt", []string{"source not found: nope.txt"}},
		{"same path", "a.txt", "./a.txt", []string{"same path"}},
		{"into itself", "dir", "dir/sub", []string{"into itself"}},
		{"missing destination", "a.txt", "", []string{"required"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := ftWorkspace(t, map[string]string{"a.txt": "a", "b.txt": "b", "dir/in.txt": "x"})
			before := ftSnapshot(t, env.Root)
			ftFail(t, env, "move_file", map[string]any{"source": c.src, "destination": c.dst}, c.wants...)
			ftSameTree(t, env.Root, before)
		})
	}
}

func TestMoveFilePreview(t *testing.T) {
	env := ftWorkspace(t, map[string]string{"a.txt": "a"})
	pv, err := ftPreview(t, env, "move_file", map[string]any{"source": "a.txt", "destination": "x/b.txt"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pv) != 1 || pv[0].Operation != "move" || !strings.Contains(pv[0].Diff, "rename from a.txt\nrename to x/b.txt") {
		t.Errorf("preview = %+v", pv)
	}
	if !ftExists(env, "a.txt") || ftExists(env, "x") {
		t.Error("preview moved something")
	}
}
