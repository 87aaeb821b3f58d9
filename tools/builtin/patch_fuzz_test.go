package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/reasonix/reasonix/tools"
)

// Fuzz targets for the patch tool. Run one with
//
//	go test -run '^$' -fuzz '^FuzzPatchAccess$' -fuzztime 30s ./tools/builtin
//
// (make fuzz runs every target for a short while).

// recordingGuard confines paths lexically to root, like the default guard,
// and remembers every name the tool asked it to resolve: those are the
// files the tool reads or writes.
type recordingGuard struct {
	root  string
	names []string
}

func (g *recordingGuard) Resolve(p string, write bool) (string, error) {
	g.names = append(g.names, p)
	if p == "" {
		return "", fmt.Errorf("path is empty")
	}
	abs := fzAbs(g.root, p)
	rel, err := filepath.Rel(g.root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q is outside the workspace %s", p, g.root)
	}
	return abs, nil
}

// fzAbs is the file a path names, relative paths taken from root.
func fzAbs(root, p string) string {
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, p)
	}
	return filepath.Clean(p)
}

// fzPatchFiles is the workspace every FuzzPatchAccess input runs against;
// a.txt takes the fuzzed content.
var fzPatchFiles = map[string]string{
	"main.go":        ftHello,
	"old.txt":        "bye\n",
	"gone.txt":       "g\n",
	"from.txt":       "f1\nf2\n",
	"n.txt":          ftLines(30),
	"docs/readme.md": "x\n",
	"c.txt":          "a\r\nb\r\n",
	"e.txt":          "a\nb",
}

// FuzzPatchAccess checks the patch tool's description of a call against
// what applying the patch really does. The gate only sees Access: every
// file the application reads or writes, even on the way to an error, must
// be listed there, or a patch could touch a file no rule was asked about.
// It also checks that application never panics, that a failed patch
// changes nothing, and that a successful one changes only listed files.
func FuzzPatchAccess(f *testing.F) {
	for _, seed := range []struct{ patch, content string }{
		{ftHelloPatch, "1\n2\n3\n"},
		{"--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n 1\n-2\n+two\n 3\n", "1\n2\n3\n"},
		{"```diff\n--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-x\n+y\n```", "x\n"},
		{"--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n a1\n-a2\n+A2\n" +
			"--- /dev/null\n+++ b/sub/new.txt\n@@ -0,0 +1,2 @@\n+n1\n+n2\n" +
			"--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n", "a1\na2\n"},
		{"diff --git a/made.txt b/made.txt\nnew file mode 100755\n--- /dev/null\n+++ b/made.txt\n@@ -0,0 +1 @@\n+#!/bin/sh\n" +
			"diff --git a/from.txt b/to.txt\nsimilarity index 50%\nrename from from.txt\nrename to to.txt\n--- a/from.txt\n+++ b/to.txt\n@@ -1,2 +1,2 @@\n f1\n-f2\n+F2\n", ""},
		{"diff --git a/from.txt b/copy.txt\nsimilarity index 100%\ncopy from from.txt\ncopy to copy.txt\n", ""},
		{"diff --git a/from.txt b/moved.txt\nsimilarity index 100%\nrename from from.txt\nrename to moved.txt\n", ""},
		{"diff --git a/old.txt b/old.txt\ndeleted file mode 100644\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n", ""},
		{"--- n.txt\n+++ n.txt\n@@ -2,3 +2,5 @@\n line 2\n+new a\n+new b\n line 3\n line 4\n@@ -20,3 +22,2 @@\n line 20\n-line 21\n line 22\n", ""},
		{"--- a.txt\n+++ a.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n", "a  \nb\nc\n"},
		{"--- c.txt\n+++ c.txt\n@@ -1,2 +1,3 @@\n a\n+mid\n b\n", ""},
		{"--- e.txt\n+++ e.txt\n@@ -1,2 +1,3 @@\n a\n b\n+c\n", ""},
		{"--- n.txt\n+++ n.txt\n@@ @@\n line 7\n-line 8\n+eight\n", ""},
		{"--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-1\n+one\n--- a.txt\n+++ a.txt\n@@ -3 +3 @@\n-3\n+three\n", "1\n2\n3\n"},
		{"--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+x\n", "a\n"},
		{"--- a/missing.txt\n+++ b/missing.txt\n@@ -1 +1 @@\n-x\n+y\n", ""},
		{"--- a/gone.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-g\n-h\n", ""},
		{"please change line 3", ""},
		{"--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-qqqqqqqq\n+z\n", "a\n"},
		{"--- a/docs/readme.md\n+++ b/docs/readme.md\n@@ -1 +1 @@\n-x\n+y\n--- a/src/b.go\n+++ b/src/b.go\n", ""},
		{"--- /dev/null\n+++ b/x/.env\n", ""},
		{"--- a/docs/../../x\n+++ b/docs/../../x\n@@ -1 +1 @@\n-x\n+y\n", ""},
		{"--- a/a.txt\n+++ b/main.go\n@@ -1 +1 @@\n-x\n+y\n", "x\n"},
		{"--- old.txt\n+++ new.txt\n@@ -1 +1 @@\n-bye\n+hi\n", ""},
		{"--- \"a/a b.txt\"\n+++ \"b/a b.txt\"\n@@ -1 +1 @@\n-x\n+y\n", ""},
		{"--- a/a.txt\t2024-01-01 00:00:00\n+++ b/a.txt\t2024-01-02 00:00:00\n@@ -1 +1 @@\n-x\n+y\n", "x\n"},
		{"diff --git a/a.txt b/a.txt\nindex 1234567..89abcde 100644\n--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\n", "x\n"},
		{"diff --git a/a.txt b/a.txt\nGIT binary patch\nliteral 0\nHcmV?d00001\n\n", "x\n"},
		{"*** Begin Patch\n*** Update File: a.txt\n@@\n-x\n+y\n*** End Patch\n", "x\n"},
		{"--- /abs/path\n+++ /abs/path\n@@ -1 +1 @@\n-x\n+y\n", ""},
		{"--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n-- x\n+++ y\n", "-- x\n"},
	} {
		f.Add(seed.patch, seed.content)
	}
	f.Fuzz(func(t *testing.T, patch, content string) {
		if len(patch) > 1<<14 || len(content) > 1<<14 {
			return
		}
		raw, err := json.Marshal(map[string]string{"patch": patch})
		if err != nil {
			t.Fatal(err)
		}
		root := t.TempDir()
		files := map[string]string{"a.txt": content}
		for name, c := range fzPatchFiles {
			files[name] = c
		}
		for name, c := range files {
			ftPut(t, filepath.Join(root, name), c)
		}
		acc, accErr := patchTool{}.Access(raw)
		listed := map[string]bool{}
		if accErr == nil {
			if acc.Kind != tools.KindWrite {
				t.Errorf("Access kind = %q, want write", acc.Kind)
			}
			if len(acc.Writes) == 0 {
				t.Errorf("Access lists no files for a patch it accepts")
			}
			for _, p := range acc.Paths() {
				listed[fzAbs(root, p)] = true
			}
		}

		g := &recordingGuard{root: root}
		env := tools.NewEnv(root)
		env.Guard = g
		before := ftSnapshot(t, root)
		_, execErr := patchTool{}.Execute(context.Background(), env, raw)
		after := ftSnapshot(t, root)

		if execErr == nil && accErr != nil {
			t.Fatalf("the patch applied but Access refused it: %v", accErr)
		}
		if accErr != nil {
			return // the gate refuses the call before it runs
		}
		for _, name := range g.names {
			if !listed[fzAbs(root, name)] {
				t.Errorf("applying the patch resolved %q, which Access does not list (it lists %q)", name, acc.Paths())
			}
		}
		if execErr != nil {
			for p, c := range before {
				if a, ok := after[p]; !ok || a != c {
					t.Errorf("a failed patch (%v) changed %s", execErr, p)
				}
			}
			for p := range after {
				if _, ok := before[p]; !ok {
					t.Errorf("a failed patch (%v) created %s", execErr, p)
				}
			}
			return
		}
		for p, c := range after {
			if b, ok := before[p]; (!ok || b != c) && !listed[p] {
				t.Errorf("the patch wrote %s, which Access does not list (it lists %q)", p, acc.Paths())
			}
		}
		for p := range before {
			if _, ok := after[p]; !ok && !listed[p] {
				t.Errorf("the patch deleted %s, which Access does not list (it lists %q)", p, acc.Paths())
			}
		}
	})
}

// FuzzPatchRoundTrip checks that a unified diff from a to b, as
// UnifiedDiff (go-udiff) writes it for previews, applies to a and gives
// exactly b: the patch tool must take back any diff Reasonix itself shows.
// When ops is not empty, b is instead an edit of a (see fzEdit) that takes
// new lines from b, so the two texts share the context a real edit has.
func FuzzPatchRoundTrip(f *testing.F) {
	for _, seed := range [][2]string{
		{ftHello, strings.Replace(ftHello, "\"hello\")\n", "\"hello\")\n\tfmt.Println(\"world\")\n", 1)},
		{"1\n2\n3\n", "1\ntwo\n3\n"},
		{"x\n", "y\n"},
		{"a1\na2\n", "a1\nA2\n"},
		{ftLines(30), strings.Replace(strings.Replace(ftLines(30), "line 2\n", "line 2\nnew a\nnew b\n", 1), "line 21\n", "", 1)},
		{"a  \nb\nc\n", "a  \nB\nc\n"},
		{"a\r\nb\r\n", "a\r\nmid\r\nb\r\n"},
		{"a\nb", "a\nb\nc\n"},
		{"a\nb\n", "a\nb"},
		{"", "x\n"},
		{"x\n", ""},
		{"x", ""},
		{"", "no newline"},
		{"-- x\n", "++ y\n"},
		{"--- a\n+++ b\n", "--- c\n+++ d\n@@ -1 +1 @@\n"},
		{"@@ -1 +1 @@\n", "@@ @@\n"},
		{"\\ No newline at end of file\n", "x\n\\ No newline at end of file"},
		{"diff --git a/x b/x\n", "diff --git a/y b/y\n"},
		{"```\nx\n```\n", "```diff\ny\n```\n"},
		{"\n\n\n", "\n\nx\n\n"},
		{"a\n\nb\n\nc\n", "a\n\nc\n"},
		{"-- \n2.40.0\n", "-- \n2.41.0\n"},
		{"a\rb\n", "a\rc\n"},
	} {
		f.Add(seed[0], seed[1], []byte(nil))
	}
	f.Add(ftLines(12), "new\n", []byte{0, 0, 2, 0, 1, 1, 0, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2})
	f.Add("x\ny\nx\ny\nx\ny\n", "z\n", []byte{0, 0, 0, 1, 0, 0, 2})
	f.Add("}\n\n}\n\n}\n", "\t}\n", []byte{0, 3, 0, 0, 2, 0, 1})
	f.Add("a\nb", "c", []byte{0, 2})
	root := f.TempDir()
	f.Fuzz(func(t *testing.T, a, b string, ops []byte) {
		if len(ops) > 0 {
			b = fzEdit(a, b, ops)
		}
		// JSON cannot carry invalid UTF-8, binary files are refused, and
		// the diff algorithm is quadratic: keep to texts a model edits.
		if a == b || len(a) > 4096 || len(b) > 4096 || !utf8.ValidString(a) || !utf8.ValidString(b) ||
			looksBinary([]byte(a)) || looksBinary([]byte(b)) {
			return
		}
		if usesCRLF(a) {
			// Lines added to a CRLF file get CRLF endings, by design.
			b = strings.ReplaceAll(strings.ReplaceAll(b, "\r\n", "\n"), "\n", "\r\n")
			if a == b {
				return
			}
		}
		diff, _, _ := UnifiedDiff("a.txt", a, b)
		if diff == "" {
			t.Fatalf("UnifiedDiff gave no diff for different texts")
		}
		path := filepath.Join(root, "a.txt")
		if err := os.WriteFile(path, []byte(a), 0o644); err != nil {
			t.Fatal(err)
		}
		raw, err := json.Marshal(map[string]string{"patch": diff})
		if err != nil {
			t.Fatal(err)
		}
		env := tools.NewEnv(root)
		if _, err := (patchTool{}).Execute(context.Background(), env, raw); err != nil {
			t.Fatalf("the diff does not apply: %v\ndiff:\n%s", err, diff)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != b {
			t.Fatalf("applying the diff gave\n%q\nwant\n%q\ndiff:\n%s", got, b, diff)
		}
		acc, err := patchTool{}.Access(raw)
		if err != nil || len(acc.Writes) != 1 || acc.Writes[0] != "a.txt" {
			t.Errorf("Access = %+v, %v; want a.txt written", acc, err)
		}
	})
}

// fzEdit edits the lines of a by ops, one byte per step: keep the next
// line, drop it, insert a line taken (in turn) from pool, or replace the
// next line with one from pool. The lines left over are kept.
func fzEdit(a, pool string, ops []byte) string {
	have, fresh := splitLines(a), splitLines(pool)
	if len(fresh) == 0 {
		fresh = []string{"\n"}
	}
	var out []string
	i, j := 0, 0
	take := func() string {
		s := fresh[j%len(fresh)]
		j++
		return s
	}
	for _, op := range ops {
		switch op % 4 {
		case 0:
			if i < len(have) {
				out = append(out, have[i])
				i++
			}
		case 1:
			i++
		case 2:
			out = append(out, take())
		case 3:
			i++
			out = append(out, take())
		}
	}
	if i < len(have) {
		out = append(out, have[i:]...)
	}
	return strings.Join(out, "")
}

// TestPatchHunkLongerThanFile is the first FuzzPatchAccess find: a hunk
// with more old lines than the file made the mismatch report index past
// the end of the file.
func TestPatchHunkLongerThanFile(t *testing.T) {
	env := ftWorkspace(t, map[string]string{"gone.txt": "g\n"})
	ftFail(t, env, "patch", map[string]any{"patch": "--- a/gone.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-g\n-h\n"},
		"hunk #1", "expects 2 lines there but the file has only 1", "nothing was changed")
}
