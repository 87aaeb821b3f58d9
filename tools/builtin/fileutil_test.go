package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/reasonix/reasonix/tools"
)

// Helpers are prefixed ft (file tools) so they cannot collide with helpers
// of the other tool tests in this package.

// ftWorkspace returns an env rooted in a fresh directory holding files.
func ftWorkspace(t *testing.T, files map[string]string) *tools.Env {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		ftPut(t, filepath.Join(dir, name), content)
	}
	return tools.NewEnv(dir)
}

func ftPut(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func ftGet(t *testing.T, env *tools.Env, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(env.Root, name))
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	return string(b)
}

func ftExists(env *tools.Env, name string) bool {
	_, err := os.Lstat(filepath.Join(env.Root, name))
	return err == nil
}

// ftArgs encodes v as tool arguments.
func ftArgs(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// ftRun executes the registered tool name.
func ftRun(t *testing.T, env *tools.Env, name string, args any) (tools.Result, error) {
	t.Helper()
	tool, ok := tools.Builtin(name)
	if !ok {
		t.Fatalf("tool %s is not registered", name)
	}
	return tool.Execute(context.Background(), env, ftArgs(t, args))
}

func ftMust(t *testing.T, env *tools.Env, name string, args any) tools.Result {
	t.Helper()
	res, err := ftRun(t, env, name, args)
	if err != nil {
		t.Fatalf("%s: unexpected error: %v", name, err)
	}
	return res
}

func ftFail(t *testing.T, env *tools.Env, name string, args any, wants ...string) string {
	t.Helper()
	_, err := ftRun(t, env, name, args)
	if err == nil {
		t.Fatalf("%s: expected an error", name)
	}
	for _, w := range wants {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error %q does not contain %q", name, err, w)
		}
	}
	return err.Error()
}

func ftPreview(t *testing.T, env *tools.Env, name string, args any) ([]tools.Preview, error) {
	t.Helper()
	tool, _ := tools.Builtin(name)
	pv, ok := tool.(tools.Previewer)
	if !ok {
		t.Fatalf("%s does not implement tools.Previewer", name)
	}
	return pv.Preview(context.Background(), env, ftArgs(t, args))
}

// ftSnapshot captures every file under root so tests can prove nothing
// changed.
func ftSnapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	m := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		m[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func ftSameTree(t *testing.T, root string, before map[string]string) {
	t.Helper()
	after := ftSnapshot(t, root)
	if len(after) != len(before) {
		t.Errorf("file count changed: %d -> %d", len(before), len(after))
	}
	for p, c := range before {
		if after[p] != c {
			t.Errorf("%s changed", p)
		}
	}
}

var fileToolNames = []string{"read_file", "write_file", "edit_file", "multi_edit", "move_file", "patch"}

func TestFileToolSchemas(t *testing.T) {
	for _, name := range fileToolNames {
		tool, ok := tools.Builtin(name)
		if !ok {
			t.Fatalf("%s not registered", name)
		}
		schema := tool.Schema()
		var compact bytes.Buffer
		if err := json.Compact(&compact, schema); err != nil {
			t.Fatalf("%s: schema is not valid JSON: %v", name, err)
		}
		if compact.String() != string(schema) {
			t.Errorf("%s: schema is not compact", name)
		}
		var s struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
			AddProps   *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(schema, &s); err != nil {
			t.Fatal(err)
		}
		if s.Type != "object" || len(s.Required) == 0 || s.AddProps == nil || *s.AddProps {
			t.Errorf("%s: schema must be a closed object with required fields: %s", name, schema)
		}
		for _, r := range s.Required {
			if _, ok := s.Properties[r]; !ok {
				t.Errorf("%s: required %q is not a property", name, r)
			}
		}
		if size := len(tool.Description()) + len(schema); size > 700 {
			t.Errorf("%s: description+schema is %d bytes, budget 700", name, size)
		}
		_, isPreviewer := tool.(tools.Previewer)
		if isPreviewer == tool.ReadOnly() {
			t.Errorf("%s: writing tools must preview, read-only tools need not (ReadOnly=%v, Previewer=%v)", name, tool.ReadOnly(), isPreviewer)
		}
	}
}

func TestPathEscapeRefused(t *testing.T) {
	cases := []struct {
		tool string
		args map[string]any
	}{
		{"read_file", map[string]any{"path": "../x"}},
		{"write_file", map[string]any{"path": "../x", "content": "hi"}},
		{"edit_file", map[string]any{"path": "../x", "old_string": "", "new_string": "hi"}},
		{"multi_edit", map[string]any{"path": "../x", "edits": []map[string]any{{"old_string": "", "new_string": "hi"}}}},
		{"move_file", map[string]any{"source": "a.txt", "destination": "../x"}},
		{"move_file", map[string]any{"source": "../x", "destination": "b.txt"}},
		{"patch", map[string]any{"patch": "--- /dev/null\n+++ ../x\n@@ -0,0 +1 @@\n+hi\n"}},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			parent := t.TempDir()
			root := filepath.Join(parent, "ws")
			ftPut(t, filepath.Join(root, "a.txt"), "a\n")
			ftPut(t, filepath.Join(parent, "x"), "outside\n")
			env := tools.NewEnv(root)
			env.Reads.Add(filepath.Join(parent, "x"))
			ftFail(t, env, c.tool, c.args, "outside the workspace")
			if b, _ := os.ReadFile(filepath.Join(parent, "x")); string(b) != "outside\n" {
				t.Errorf("file outside the workspace was changed: %q", b)
			}
		})
	}
}

func TestUnknownArgumentRejected(t *testing.T) {
	env := ftWorkspace(t, map[string]string{"a.txt": "a\n"})
	ftFail(t, env, "edit_file", map[string]any{"path": "a.txt", "old_str": "a", "new_string": "b"}, "unknown argument(s) old_str")
	if got := ftGet(t, env, "a.txt"); got != "a\n" {
		t.Errorf("file changed: %q", got)
	}
}

func TestUnifiedDiff(t *testing.T) {
	cases := []struct {
		name, old, new string
		add, del       int
		contains       []string
	}{
		{"identical", "a\n", "a\n", 0, 0, nil},
		{"change", "a\nb\nc\n", "a\nB\nc\n", 1, 1, []string{"--- a/f.go", "+++ b/f.go", "-b\n", "+B\n", " a\n"}},
		{"create", "", "x\ny\n", 2, 0, []string{"+x\n", "+y\n"}},
		{"delete all", "x\ny\n", "", 0, 2, []string{"-x\n", "-y\n"}},
		{"no final newline", "a\n", "a\nb", 1, 0, []string{"+b\n\\ No newline at end of file"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			diff, add, del := UnifiedDiff("f.go", c.old, c.new)
			if add != c.add || del != c.del {
				t.Errorf("counts = +%d -%d, want +%d -%d", add, del, c.add, c.del)
			}
			if c.add+c.del == 0 && diff != "" {
				t.Errorf("expected empty diff, got %q", diff)
			}
			for _, w := range c.contains {
				if !strings.Contains(diff, w) {
					t.Errorf("diff lacks %q:\n%s", w, diff)
				}
			}
		})
	}
}

func TestIsBinary(t *testing.T) {
	cases := []struct {
		name string
		data []byte
		want bool
	}{
		{"text", []byte("package main\n\nfunc main() {}\n"), false},
		{"utf8", []byte("héllo wörld — ✓\n"), false},
		{"nul", []byte("abc\x00def"), true},
		{"png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), true},
		{"noise", bytes.Repeat([]byte{0xff, 0xfe, 0x81, 0x02}, 100), true},
		{"empty", nil, false},
	}
	for _, c := range cases {
		if got := looksBinary(c.data); got != c.want {
			t.Errorf("%s: looksBinary = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestClosestLines(t *testing.T) {
	have := splitLines("func a() {\n\treturn 1\n}\n\nfunc b() {\n\treturn 2\n}\n")
	m, ok := closestLines(context.Background(), have, splitLines("func b() {\n    return 2\n}\n"))
	if !ok || m.start != 4 || m.end != 7 || !m.wsOnly {
		t.Errorf("got %+v ok=%v, want lines 5-7 differing only in whitespace", m, ok)
	}
	m, ok = closestLines(context.Background(), have, splitLines("func b() {\n\treturn 3\n}\n"))
	if !ok || m.start != 4 || m.wsOnly || m.score >= 1 {
		t.Errorf("got %+v ok=%v, want a near match at line 5", m, ok)
	}
}

// ftGuard records every resolution and denies paths containing "secret".
type ftGuard struct {
	root  string
	mu    sync.Mutex
	calls []string
}

func (g *ftGuard) Resolve(p string, write bool) (string, error) {
	g.mu.Lock()
	g.calls = append(g.calls, fmt.Sprintf("%s:%v", p, write))
	g.mu.Unlock()
	if strings.Contains(p, "secret") {
		return "", fmt.Errorf("access to %s denied by policy", p)
	}
	return filepath.Join(g.root, p), nil
}

func TestToolsResolveThroughGuard(t *testing.T) {
	cases := []struct {
		tool  string
		args  map[string]any
		calls []string
	}{
		{"read_file", map[string]any{"path": "a.txt"}, []string{"a.txt:false"}},
		{"write_file", map[string]any{"path": "n.txt", "content": "x"}, []string{"n.txt:true"}},
		{"edit_file", map[string]any{"path": "a.txt", "old_string": "a", "new_string": "b"}, []string{"a.txt:true"}},
		{"multi_edit", map[string]any{"path": "a.txt", "edits": []map[string]any{{"old_string": "a", "new_string": "b"}}}, []string{"a.txt:true"}},
		{"move_file", map[string]any{"source": "a.txt", "destination": "b.txt"}, []string{"a.txt:true", "b.txt:true"}},
		{"patch", map[string]any{"patch": "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n"}, []string{"a.txt:true"}},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			env := ftWorkspace(t, map[string]string{"a.txt": "a\n"})
			g := &ftGuard{root: env.Root}
			env.Guard = g
			ftMust(t, env, c.tool, c.args)
			if strings.Join(g.calls, " ") != strings.Join(c.calls, " ") {
				t.Errorf("guard calls = %v, want %v", g.calls, c.calls)
			}
		})
	}
}

func TestGuardDenialChangesNothing(t *testing.T) {
	env := ftWorkspace(t, map[string]string{"a.txt": "a\n"})
	env.Guard = &ftGuard{root: env.Root}
	before := ftSnapshot(t, env.Root)
	ftFail(t, env, "patch", map[string]any{"patch": "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n--- /dev/null\n+++ b/secret.txt\n@@ -0,0 +1 @@\n+s\n"}, "denied by policy")
	ftFail(t, env, "move_file", map[string]any{"source": "a.txt", "destination": "secret.txt"}, "denied by policy")
	ftSameTree(t, env.Root, before)
}
