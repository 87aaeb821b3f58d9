package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFile(t *testing.T) {
	cases := []struct {
		name    string
		initial map[string]string
		read    bool // mark f.txt read before writing
		args    map[string]any
		result  string
		want    string
	}{
		{"created", nil, false, map[string]any{"path": "f.txt", "content": "a\nb\n"}, "created f.txt (+2)", "a\nb\n"},
		{"created in new dirs", nil, false, map[string]any{"path": "x/y/f.txt", "content": "a\n"}, "created x/y/f.txt (+1)", ""},
		{"updated", map[string]string{"f.txt": "a\nb\nc\n"}, true,
			map[string]any{"path": "f.txt", "content": "a\nB\nc\nd\n"}, "updated f.txt (+2 -1)", "a\nB\nc\nd\n"},
		{"unchanged", map[string]string{"f.txt": "same\n"}, true,
			map[string]any{"path": "f.txt", "content": "same\n"}, "unchanged f.txt", "same\n"},
		{"file_path alias", nil, false, map[string]any{"file_path": "f.txt", "content": "z"}, "created f.txt (+1)", "z"},
		{"empty content", nil, false, map[string]any{"path": "f.txt", "content": ""}, "created f.txt (+0)", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := ftWorkspace(t, c.initial)
			if c.read {
				env.Reads.Add(filepath.Join(env.Root, "f.txt"))
			}
			res := ftMust(t, env, "write_file", c.args)
			if !strings.HasPrefix(res.Content, c.result) || !strings.HasPrefix(res.Summary, c.result) {
				t.Errorf("result %q / summary %q, want prefix %q", res.Content, res.Summary, c.result)
			}
			p, _ := c.args["path"].(string)
			if p == "" {
				p = c.args["file_path"].(string)
			}
			if got := ftGet(t, env, p); got != c.args["content"] {
				t.Errorf("content = %q, want %q", got, c.args["content"])
			}
			if !env.Reads.Has(filepath.Join(env.Root, p)) {
				t.Error("written file not marked read")
			}
		})
	}
}

func TestWriteFileRefusesUnread(t *testing.T) {
	env := ftWorkspace(t, map[string]string{"f.txt": "precious\n"})
	ftFail(t, env, "write_file", map[string]any{"path": "f.txt", "content": "clobber"}, "has not been read", "read_file")
	if got := ftGet(t, env, "f.txt"); got != "precious\n" {
		t.Fatalf("unread file was overwritten: %q", got)
	}
	if _, err := ftPreview(t, env, "write_file", map[string]any{"path": "f.txt", "content": "clobber"}); err == nil {
		t.Error("preview should refuse what execution would refuse")
	}
	ftMust(t, env, "read_file", map[string]any{"path": "f.txt"})
	ftMust(t, env, "write_file", map[string]any{"path": "f.txt", "content": "clobber"})
	if got := ftGet(t, env, "f.txt"); got != "clobber" {
		t.Errorf("after reading, write failed: %q", got)
	}
}

func TestWriteFileErrors(t *testing.T) {
	env := ftWorkspace(t, map[string]string{"d/x.txt": "x"})
	ftFail(t, env, "write_file", map[string]any{"path": "d", "content": "x"}, "is a directory")
	ftFail(t, env, "write_file", map[string]any{"path": "n.txt"}, `missing required argument "content"`)
	ftFail(t, env, "write_file", map[string]any{"content": "x"}, `missing required argument "path"`)
}

func TestWriteFilePreservesModeAndLeavesNoTemp(t *testing.T) {
	env := ftWorkspace(t, map[string]string{"run.sh": "echo a\n"})
	p := filepath.Join(env.Root, "run.sh")
	if err := os.Chmod(p, 0o750); err != nil {
		t.Fatal(err)
	}
	env.Reads.Add(p)
	ftMust(t, env, "write_file", map[string]any{"path": "run.sh", "content": "echo b\n"})
	info, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o750 {
		t.Errorf("mode = %v, want 0750", info.Mode().Perm())
	}
	entries, _ := os.ReadDir(env.Root)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestWriteFilePreview(t *testing.T) {
	env := ftWorkspace(t, map[string]string{"f.txt": "a\nb\n"})
	env.Reads.Add(filepath.Join(env.Root, "f.txt"))
	pv, err := ftPreview(t, env, "write_file", map[string]any{"path": "f.txt", "content": "a\nc\n"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pv) != 1 || pv[0].Operation != "update" || pv[0].Added != 1 || pv[0].Removed != 1 ||
		!strings.Contains(pv[0].Diff, "-b\n+c\n") || pv[0].Path != "f.txt" {
		t.Errorf("preview = %+v", pv)
	}
	if got := ftGet(t, env, "f.txt"); got != "a\nb\n" {
		t.Errorf("preview changed the file: %q", got)
	}
	pv, err = ftPreview(t, env, "write_file", map[string]any{"path": "new/g.txt", "content": "x\n"})
	if err != nil || pv[0].Operation != "create" || pv[0].Added != 1 {
		t.Errorf("create preview = %+v, %v", pv, err)
	}
	if ftExists(env, "new") {
		t.Error("preview created a directory")
	}
}
