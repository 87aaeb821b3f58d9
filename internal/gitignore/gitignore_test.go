package gitignore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPatternMatching(t *testing.T) {
	cases := []struct {
		pattern string
		path    string
		isDir   bool
		want    bool
	}{
		{"*.log", "a.log", false, true},
		{"*.log", "deep/dir/a.log", false, true},
		{"*.log", "a.logx", false, false},
		{"build/", "build", true, true},
		{"build/", "build", false, false}, // dir-only pattern skips a file
		{"build/", "src/build", true, true},
		{"/build", "build", true, true},
		{"/build", "src/build", true, false}, // anchored to the file's directory
		{"doc/frotz", "doc/frotz", false, true},
		{"doc/frotz", "a/doc/frotz", false, false}, // a middle slash anchors too
		{"doc/frotz", "doc", true, false},
		{"doc/frotz", "doc/frotz/x", false, false},
		{"/bin/*.exe", "bin/a.exe", false, true},
		{"/bin/*.exe", "bin/sub/a.exe", false, false},
		{"**/foo", "foo", false, true},
		{"**/foo", "a/b/foo", false, true},
		{"a/**/b", "a/b", false, true},
		{"a/**/b", "a/x/y/b", false, true},
		{"a/**/b", "a/x/y/c", false, false},
		{"abc/**", "abc/x", false, true},
		{"abc/**", "abc", true, false}, // trailing /** is what is inside, not the dir
		{"foo?", "foo1", false, true},
		{"foo[0-9]", "foo5", false, true},
		{"foo[!0-9]", "foo5", false, false},
		{"foo[!0-9]", "fooa", false, true},
		{`\#hash`, "#hash", false, true},
		{`\!bang`, "!bang", false, true},
		{"trailing   ", "trailing", false, true},
		{`space\ `, "space ", false, true},
		{"pre*", "prefix.txt", false, true},
		{"a**b", "axxb", false, true}, // ** inside a segment is a plain star
		{"crlf\r", "crlf", false, true},
	}
	for _, c := range cases {
		p, ok := ParseLine(c.pattern)
		if !ok {
			t.Errorf("%q did not parse", c.pattern)
			continue
		}
		if got := p.Match(c.path, c.isDir); got != c.want {
			t.Errorf("%q vs %q (dir=%v) = %v, want %v", c.pattern, c.path, c.isDir, got, c.want)
		}
	}
	for _, skip := range []string{"", "# comment", "   ", "/", "!", "[x"} {
		if _, ok := ParseLine(skip); ok {
			t.Errorf("%q should be ignored as a rule", skip)
		}
	}
	if p, _ := ParseLine("!keep"); !p.negate {
		t.Error(`"!keep" should be negated`)
	}
}

func TestMatcherPrecedence(t *testing.T) {
	root := (*Matcher)(nil).Add("", Parse([]byte("*.tmp\n!keep.tmp\nout/\n")))
	m := root.Add("sub", Parse([]byte("!*.tmp\nlocal.txt\n")))
	cases := []struct {
		m     *Matcher
		path  string
		isDir bool
		want  bool
	}{
		{root, "x.tmp", false, true},
		{root, "keep.tmp", false, false}, // the last matching line wins
		{root, "out", true, true},
		{root, "out", false, false},
		{m, "sub/x.tmp", false, false}, // the deeper file wins
		{m, "other/x.tmp", false, true},
		{m, "sub/local.txt", false, true},
		{m, "local.txt", false, false}, // sub's rules apply below sub only
		{nil, "anything", false, false},
	}
	for _, c := range cases {
		if got := c.m.Ignored(c.path, c.isDir); got != c.want {
			t.Errorf("Ignored(%q, %v) = %v, want %v", c.path, c.isDir, got, c.want)
		}
	}
}

// writeTree creates files (slash paths → content) under a new temporary
// directory and returns it.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, body := range files {
		abs := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// TestAncestorsExcludesStart guards against loading the start directory's
// .gitignore twice (once here, once when the walk reads it).
func TestAncestorsExcludesStart(t *testing.T) {
	root := writeTree(t, map[string]string{".gitignore": "*.tmp\n", "a/.gitignore": "*.log\n", "a/b/.gitignore": "*.o\n"})
	if m := Ancestors(root, root); m != nil {
		t.Fatalf("root's own file loaded as an ancestor: %+v", m)
	}
	var bases []string
	for m := Ancestors(root, filepath.Join(root, "a", "b")); m != nil; m = m.parent {
		bases = append(bases, m.base)
	}
	if strings.Join(bases, ",") != "a," {
		t.Fatalf("ancestor chain bases = %q, want [a, root]", bases)
	}
}

func TestEnclosing(t *testing.T) {
	top := writeTree(t, map[string]string{
		".git/info/exclude": "*.secret\n",
		".gitignore":        "/ws/gen/\n*.o\n",
		"ws/.gitignore":     "!keep.o\n", // root's own file: not Enclosing's
		"ws/sub/x":          "",
	})
	ws := filepath.Join(top, "ws")
	m := Enclosing(ws)
	cases := []struct {
		path  string
		isDir bool
		want  bool
	}{
		{"a.secret", false, true},     // info/exclude
		{"sub/b.secret", false, true}, // info/exclude, deeper
		{"gen", true, true},           // anchored in the top's file, rebased onto ws
		{"sub/gen", true, false},
		{"x.o", false, true},
		{"keep.o", false, true}, // ws/.gitignore is not loaded by Enclosing
		{"sub/x", false, false},
	}
	for _, c := range cases {
		if got := m.Ignored(c.path, c.isDir); got != c.want {
			t.Errorf("Enclosing: Ignored(%q) = %v, want %v", c.path, got, c.want)
		}
	}
	if m.LoadDir(ws, "").Ignored("keep.o", false) {
		t.Error("root's own negation should override the enclosing rule")
	}
	// At the repository's top only info/exclude reaches in.
	m = Enclosing(top)
	if !m.Ignored("a.secret", false) || m.Ignored("x.o", false) {
		t.Error("Enclosing(top): want only info/exclude")
	}
	// Outside any repository there is nothing.
	if m := Enclosing(t.TempDir()); m != nil && m.Ignored("a.secret", false) {
		t.Error("no repository: want no rules")
	}
}

func TestEnclosingGitFile(t *testing.T) {
	gitDir := writeTree(t, map[string]string{"info/exclude": "*.wt\n"})
	wt := writeTree(t, map[string]string{".git": "gitdir: " + gitDir + "\n"})
	if !Enclosing(wt).Ignored("a.wt", false) {
		t.Error("a worktree's .git file should lead to its git directory's info/exclude")
	}
}
