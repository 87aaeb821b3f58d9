package builtin

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const ftHello = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hello\")\n}\n"

const ftHelloPatch = `diff --git a/main.go b/main.go
--- a/main.go
+++ b/main.go
@@ -5,3 +5,4 @@ import "fmt"
 func main() {
 	fmt.Println("hello")
+	fmt.Println("world")
 }
`

func TestPatch(t *testing.T) {
	cases := []struct {
		name   string
		files  map[string]string
		patch  string
		want   map[string]string // "" means the file must not exist
		result []string
	}{
		{"exact", map[string]string{"main.go": ftHello}, ftHelloPatch,
			map[string]string{"main.go": strings.Replace(ftHello, "\"hello\")\n", "\"hello\")\n\tfmt.Println(\"world\")\n", 1)},
			[]string{"patched 1 file(s)", "updated main.go (+1 -0)"}},
		{"offset: lines inserted above the hunk", map[string]string{"main.go": strings.Replace(ftHello, "import \"fmt\"\n", "import \"fmt\"\n\n// one\n// two\n// three\n", 1)},
			ftHelloPatch,
			map[string]string{"main.go": strings.Replace(strings.Replace(ftHello, "import \"fmt\"\n", "import \"fmt\"\n\n// one\n// two\n// three\n", 1), "\"hello\")\n", "\"hello\")\n\tfmt.Println(\"world\")\n", 1)},
			[]string{"hunk #1 applied at line 9 (offset +4)"}},
		{"offset: lines removed above the hunk", map[string]string{"main.go": strings.Replace(ftHello, "package main\n\n", "", 1)},
			ftHelloPatch,
			map[string]string{"main.go": strings.Replace(strings.Replace(ftHello, "package main\n\n", "", 1), "\"hello\")\n", "\"hello\")\n\tfmt.Println(\"world\")\n", 1)},
			[]string{"offset -2"}},
		{"plain diff with a/ b/ prefixes and wrong counts", map[string]string{"a.txt": "1\n2\n3\n"},
			"--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n 1\n-2\n+two\n 3\n",
			map[string]string{"a.txt": "1\ntwo\n3\n"}, []string{"updated a.txt (+1 -1)"}},
		{"markdown fence and no final newline", map[string]string{"a.txt": "x\n"},
			"```diff\n--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-x\n+y\n```",
			map[string]string{"a.txt": "y\n"}, nil},
		{"multi-file with new and deleted files", map[string]string{"a.txt": "a1\na2\n", "old.txt": "bye\n"},
			"--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n a1\n-a2\n+A2\n" +
				"--- /dev/null\n+++ b/sub/new.txt\n@@ -0,0 +1,2 @@\n+n1\n+n2\n" +
				"--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-bye\n",
			map[string]string{"a.txt": "a1\nA2\n", "sub/new.txt": "n1\nn2\n", "old.txt": ""},
			[]string{"patched 3 file(s)", "created sub/new.txt (+2 -0)", "deleted old.txt (+0 -1)"}},
		{"git new file and rename", map[string]string{"keep.txt": "k\n", "from.txt": "f1\nf2\n"},
			"diff --git a/made.txt b/made.txt\nnew file mode 100755\n--- /dev/null\n+++ b/made.txt\n@@ -0,0 +1 @@\n+#!/bin/sh\n" +
				"diff --git a/from.txt b/to.txt\nsimilarity index 50%\nrename from from.txt\nrename to to.txt\n--- a/from.txt\n+++ b/to.txt\n@@ -1,2 +1,2 @@\n f1\n-f2\n+F2\n",
			map[string]string{"made.txt": "#!/bin/sh\n", "from.txt": "", "to.txt": "f1\nF2\n", "keep.txt": "k\n"}, nil},
		{"two hunks, second offset by the first", map[string]string{"n.txt": ftLines(30)},
			"--- n.txt\n+++ n.txt\n@@ -2,3 +2,5 @@\n line 2\n+new a\n+new b\n line 3\n line 4\n@@ -20,3 +22,2 @@\n line 20\n-line 21\n line 22\n",
			map[string]string{"n.txt": strings.Replace(strings.Replace(ftLines(30), "line 2\n", "line 2\nnew a\nnew b\n", 1), "line 21\n", "", 1)}, nil},
		{"trailing whitespace tolerated", map[string]string{"w.txt": "a  \nb\nc\n"},
			"--- w.txt\n+++ w.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
			map[string]string{"w.txt": "a  \nB\nc\n"}, []string{"ignoring trailing whitespace"}},
		{"crlf file keeps crlf", map[string]string{"c.txt": "a\r\nb\r\n"},
			"--- c.txt\n+++ c.txt\n@@ -1,2 +1,3 @@\n a\n+mid\n b\n",
			map[string]string{"c.txt": "a\r\nmid\r\nb\r\n"}, nil},
		{"add newline at end of file", map[string]string{"e.txt": "a\nb"},
			"--- e.txt\n+++ e.txt\n@@ -1,2 +1,3 @@\n a\n b\n+c\n",
			map[string]string{"e.txt": "a\nb\nc\n"}, nil},
		{"hunk header without line numbers", map[string]string{"n.txt": ftLines(10)},
			"--- n.txt\n+++ n.txt\n@@ @@\n line 7\n-line 8\n+eight\n",
			map[string]string{"n.txt": strings.Replace(ftLines(10), "line 8\n", "eight\n", 1)}, []string{"offset +6"}},
		{"same file twice in one patch", map[string]string{"t.txt": "1\n2\n3\n"},
			"--- t.txt\n+++ t.txt\n@@ -1 +1 @@\n-1\n+one\n--- t.txt\n+++ t.txt\n@@ -3 +3 @@\n-3\n+three\n",
			map[string]string{"t.txt": "one\n2\nthree\n"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := ftWorkspace(t, c.files)
			res := ftMust(t, env, "patch", map[string]any{"patch": c.patch})
			for name, want := range c.want {
				if want == "" {
					if ftExists(env, name) {
						t.Errorf("%s should not exist", name)
					}
					continue
				}
				if got := ftGet(t, env, name); got != want {
					t.Errorf("%s:\n%q\nwant:\n%q", name, got, want)
				}
			}
			for _, w := range c.result {
				if !strings.Contains(res.Content, w) {
					t.Errorf("result lacks %q:\n%s", w, res.Content)
				}
			}
			if !strings.HasPrefix(res.Summary, "patched ") {
				t.Errorf("summary = %q", res.Summary)
			}
		})
	}
}

func TestPatchNewFileMode(t *testing.T) {
	env := ftWorkspace(t, nil)
	ftMust(t, env, "patch", map[string]any{"patch": "diff --git a/x.sh b/x.sh\nnew file mode 100755\n--- /dev/null\n+++ b/x.sh\n@@ -0,0 +1 @@\n+echo\n"})
	info, err := os.Stat(filepath.Join(env.Root, "x.sh"))
	if err != nil || info.Mode().Perm()&0o100 == 0 {
		t.Errorf("new executable file: %v %v", info, err)
	}
}

func TestPatchFailureChangesNothing(t *testing.T) {
	files := map[string]string{"a.txt": "a1\na2\na3\n", "b.txt": ftLines(20), "gone.txt": "g\n"}
	cases := []struct {
		name  string
		patch string
		wants []string
	}{
		{"second file's second hunk mismatches",
			"--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n a1\n-a2\n+A2\n a3\n" +
				"--- a/gone.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-g\n" +
				"--- a/b.txt\n+++ b/b.txt\n@@ -2,3 +2,3 @@\n line 2\n-line 3\n+LINE 3\n line 4\n@@ -10,3 +10,3 @@\n line 10\n-line 11 changed\n+x\n line 12\n",
			[]string{"file 3 of 3", "b.txt: hunk #2 (@@ -10,3 +10,3 @@) does not apply", "near line 10",
				"line 11 differs", `the patch expects "line 11 changed" but the file has "line 11"`, "    11\tline 11", "nothing was changed"}},
		{"new file already exists",
			"--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1 @@\n+x\n",
			[]string{"a.txt", "already exists"}},
		{"patched file missing",
			"--- a/missing.txt\n+++ b/missing.txt\n@@ -1 +1 @@\n-x\n+y\n",
			[]string{"missing.txt does not exist", "/dev/null"}},
		{"partial deletion",
			"--- a/b.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-line 1\n-line 2\n",
			[]string{"does not cover the whole file", "18 lines would remain"}},
		{"not a patch", "please change line 3", []string{"no file changes"}},
		{"hunk with no match anywhere",
			"--- a.txt\n+++ a.txt\n@@ -1 +1 @@\n-qqqqqqqq\n+z\n",
			[]string{"hunk #1", "no similar text"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := ftWorkspace(t, files)
			before := ftSnapshot(t, env.Root)
			ftFail(t, env, "patch", map[string]any{"patch": c.patch}, c.wants...)
			ftSameTree(t, env.Root, before)
			if _, err := ftPreview(t, env, "patch", map[string]any{"patch": c.patch}); err == nil {
				t.Error("preview accepted a patch that cannot apply")
			}
		})
	}
}

func TestPatchPreview(t *testing.T) {
	shifted := strings.Replace(ftHello, "import \"fmt\"\n", "import \"fmt\"\n\n// a\n// b\n", 1)
	env := ftWorkspace(t, map[string]string{"main.go": shifted, "old.txt": "o\n"})
	patch := ftHelloPatch + "--- /dev/null\n+++ b/n.txt\n@@ -0,0 +1 @@\n+n\n--- a/old.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-o\n"
	before := ftSnapshot(t, env.Root)
	pv, err := ftPreview(t, env, "patch", map[string]any{"patch": patch})
	if err != nil {
		t.Fatal(err)
	}
	ftSameTree(t, env.Root, before)
	if len(pv) != 3 {
		t.Fatalf("got %d previews, want 3: %+v", len(pv), pv)
	}
	ops := map[string]string{}
	for _, p := range pv {
		ops[p.Path] = p.Operation
	}
	if ops["main.go"] != "update" || ops["n.txt"] != "create" || ops["old.txt"] != "delete" {
		t.Errorf("operations = %v", ops)
	}
	// The preview shows where the hunk really lands, not where the patch said.
	if !strings.Contains(pv[0].Diff, "@@ -7,4 +7,5 @@") || pv[0].Added != 1 || pv[0].Removed != 0 {
		t.Errorf("main.go preview:\n%s", pv[0].Diff)
	}
}

func TestNormalizePatchRecount(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"correct counts kept", "@@ -1,2 +1,2 @@ f\n a\n-b\n+c\n", "@@ -1,2 +1,2 @@ f\n a\n-b\n+c\n"},
		{"wrong counts fixed", "@@ -1,9 +1,1 @@ f\n a\n-b\n+c\n+d\n", "@@ -1,2 +1,3 @@ f\n a\n-b\n+c\n+d\n"},
		{"blank context line counted, trailing blank dropped", "@@ -1 +1 @@\n a\n\n-b\n+c\n\n", "@@ -1,3 +1,3 @@\n a\n\n-b\n+c\n\n"},
		{"stops at next file header", "@@ -1 +1 @@\n-a\n+b\n c\n--- x\n+++ x\n", "@@ -1,2 +1,2 @@\n-a\n+b\n c\n--- x\n+++ x\n"},
		{"signature after a correct hunk is not counted", "@@ -1 +1 @@\n-a\n+b\n-- \n2.40.0\n", "@@ -1 +1 @@\n-a\n+b\n-- \n2.40.0\n"},
	}
	for _, c := range cases {
		if got := normalizePatch(c.in); got != c.want {
			t.Errorf("%s:\n%q\nwant\n%q", c.name, got, c.want)
		}
	}
}
