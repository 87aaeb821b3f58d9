package builtin

import (
	"os"
	"path/filepath"
	"runtime"
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

// evalGuard resolves symlinks like the permission package's confiner.
type evalGuard struct{ root string }

func (g evalGuard) Resolve(p string, _ bool) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(g.root, p)
	}
	if real, err := filepath.EvalSymlinks(p); err == nil {
		return real, nil
	}
	return filepath.Clean(p), nil
}

// A guard that resolves symlinks must not make move_file relocate a
// link's target and leave the link dangling.
func TestMoveFileMovesSymlinkItself(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	env := ftWorkspace(t, map[string]string{"target.txt": "x"})
	env.Root, _ = filepath.EvalSymlinks(env.Root)
	env.Guard = evalGuard{root: env.Root}
	if err := os.Symlink("target.txt", filepath.Join(env.Root, "link")); err != nil {
		t.Fatal(err)
	}
	ftMust(t, env, "move_file", map[string]any{"source": "link", "destination": "renamed"})
	if got := ftGet(t, env, "target.txt"); got != "x" {
		t.Fatalf("target.txt = %q; the link's target was moved", got)
	}
	if dest, err := os.Readlink(filepath.Join(env.Root, "renamed")); err != nil || dest != "target.txt" {
		t.Fatalf("renamed is not the moved link: %q %v", dest, err)
	}
	// An existing link as destination is an existing entry, dangling or not.
	if err := os.Symlink("missing.txt", filepath.Join(env.Root, "dangling")); err != nil {
		t.Fatal(err)
	}
	ftFail(t, env, "move_file", map[string]any{"source": "target.txt", "destination": "dangling"}, "already exists")
}
