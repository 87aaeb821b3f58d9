package builtin

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/tools"
)

// writeTree creates files (path -> content) under a new temp dir.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		abs := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(abs, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func searchFixture(t *testing.T) string {
	return writeTree(t, map[string]string{
		".gitignore":        "*.log\nbuild/\n/secret.txt\n",
		"main.go":           "package main\n\nfunc main() {\n\tprintln(\"Hello\")\n}\n",
		"util/util.go":      "package util\n\n// Hello says hi.\nfunc Hello() string {\n\treturn \"hello\"\n}\n",
		"util/util_test.go": "package util\n\nimport \"testing\"\n\nfunc TestHello(t *testing.T) {}\n",
		"web/app.js":        "function hello() {\n  return 'HELLO';\n}\n",
		"web/app.ts":        "export const hello = 1;\n",
		"docs/readme.md":    "# Hello\nline2\nline3\nline4\nline5\nhello again\nline7\n",
		"debug.log":         "hello from log\n",
		"build/out.go":      "package build // hello\n",
		"secret.txt":        "hello secret\n",
		"sub/secret.txt":    "hello not anchored\n",
		"bin.dat":           "hello\x00binary\n",
		".hidden/h.txt":     "hello hidden\n",
		"node_modules/x.js": "hello\n",
		".git/config":       "hello\n",
	})
}

func runTool(t *testing.T, tool tools.Tool, env *tools.Env, args string) (tools.Result, error) {
	t.Helper()
	return tool.Execute(context.Background(), env, json.RawMessage(args))
}

func grepOut(t *testing.T, tool tools.Tool, root, args string) string {
	t.Helper()
	res, err := runTool(t, tool, tools.NewEnv(root), args)
	if err != nil {
		t.Fatalf("grep %s: %v", args, err)
	}
	return res.Content
}

func TestGrepModes(t *testing.T) {
	root := searchFixture(t)
	g := &grepTool{native: true}
	cases := []struct {
		name, args, want string
	}{
		{"files default ignores gitignored binary and skipped dirs", `{"pattern":"hello"}`,
			".hidden/h.txt\ndocs/readme.md\nsub/secret.txt\nutil/util.go\nweb/app.js\nweb/app.ts\n"},
		{"case insensitive", `{"pattern":"hello","case_insensitive":true}`,
			".hidden/h.txt\ndocs/readme.md\nmain.go\nsub/secret.txt\nutil/util.go\nutil/util_test.go\nweb/app.js\nweb/app.ts\n"},
		{"-i alias", `{"pattern":"HELLO","-i":true,"path":"web"}`, "web/app.js\nweb/app.ts\n"},
		{"type filter", `{"pattern":"hello","-i":true,"type":"go"}`, "main.go\nutil/util.go\nutil/util_test.go\n"},
		{"glob filter basename", `{"pattern":"hello","-i":true,"glob":"*_test.go"}`, "util/util_test.go\n"},
		{"glob filter path", `{"pattern":"hello","-i":true,"glob":"web/*.{js,ts}"}`, "web/app.js\nweb/app.ts\n"},
		{"negated glob", `{"pattern":"hello","-i":true,"glob":"!*.go","path":"util"}`, "No matches found"},
		{"count", `{"pattern":"hello","-i":true,"output_mode":"count","path":"docs"}`,
			"docs/readme.md:2\ntotal: 2 matching lines in 1 files\n"},
		{"content", `{"pattern":"^func","output_mode":"content","path":"util"}`,
			"util/util.go:4:func Hello() string {\nutil/util_test.go:5:func TestHello(t *testing.T) {}\n"},
		{"content with context", `{"pattern":"Hello","output_mode":"content","path":"docs","context":1,"case_insensitive":true}`,
			"docs/readme.md:1:# Hello\ndocs/readme.md-2-line2\n--\ndocs/readme.md-5-line5\ndocs/readme.md:6:hello again\ndocs/readme.md-7-line7\n"},
		{"before and after", `{"pattern":"line4","output_mode":"content","path":"docs/readme.md","before":2,"after":1}`,
			"docs/readme.md-2-line2\ndocs/readme.md-3-line3\ndocs/readme.md:4:line4\ndocs/readme.md-5-line5\n"},
		{"-A alias merges adjacent groups", `{"pattern":"line[35]","output_mode":"content","path":"docs","-A":1}`,
			"docs/readme.md:3:line3\ndocs/readme.md-4-line4\ndocs/readme.md:5:line5\ndocs/readme.md-6-hello again\n"},
		{"head_limit", `{"pattern":"hello","-i":true,"head_limit":2}`,
			".hidden/h.txt\ndocs/readme.md\n[head_limit: showing 2 of at least 3 lines]\n"},
		{"explicit ignored dir is searched", `{"pattern":"hello","path":"build"}`, "build/out.go\n"},
		{"regex alternation", `{"pattern":"Test\\w+|println","output_mode":"content"}`,
			"main.go:4:\tprintln(\"Hello\")\nutil/util_test.go:5:func TestHello(t *testing.T) {}\n"},
		{"no match", `{"pattern":"zzz"}`, "No matches found"},
		{"anchors are per line", `{"pattern":"\\Aline\\d\\z","output_mode":"count"}`, "docs/readme.md:5\ntotal: 5 matching lines in 1 files\n"},
		{"pattern cannot span lines without multiline", `{"pattern":"line2\\s+line3"}`, "No matches found"},
		{"multiline", `{"pattern":"line2\\s+line3","multiline":true,"output_mode":"content"}`,
			"docs/readme.md:2:line2\ndocs/readme.md:3:line3\n"},
		{"multiline dot matches newline", `{"pattern":"Hello.*string","multiline":true,"output_mode":"content","path":"util/util.go"}`,
			"util/util.go:3:// Hello says hi.\nutil/util.go:4:func Hello() string {\n"},
		{"multiline count counts lines", `{"pattern":"line2\\nline3|line5","multiline":true,"output_mode":"count"}`,
			"docs/readme.md:3\ntotal: 3 matching lines in 1 files\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := grepOut(t, g, root, c.args); got != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

func TestGrepErrors(t *testing.T) {
	root := searchFixture(t)
	g := &grepTool{native: true}
	for _, args := range []string{
		`{}`, `{"pattern":"("}`, `{"pattern":"x","output_mode":"lines"}`, `{"pattern":"x","type":"cobol"}`,
		`{"pattern":"x","path":"missing"}`, `{"pattern":"x","path":"../.."}`, `{"pattern":"x","context":-1}`,
		`{"pattern":"x","glob":"[a"}`, `not json`,
	} {
		if _, err := runTool(t, g, tools.NewEnv(root), args); err == nil {
			t.Errorf("%s: expected an error", args)
		}
	}
}

func TestGrepDeterministicAcrossRuns(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 300; i++ {
		files[filepath.ToSlash(filepath.Join("d"+string(rune('a'+i%7)), "f"+strings.Repeat("x", i%5), "n"+string(rune('a'+i%26))+".txt"))] = "needle\nhay\nneedle\n"
	}
	root := writeTree(t, files)
	g := &grepTool{native: true}
	first := grepOut(t, g, root, `{"pattern":"needle","output_mode":"content"}`)
	if strings.Count(first, "\n") != 2*len(files) {
		t.Fatalf("got %d lines, want %d", strings.Count(first, "\n"), 2*len(files))
	}
	for i := 0; i < 5; i++ {
		if got := grepOut(t, g, root, `{"pattern":"needle","output_mode":"content"}`); got != first {
			t.Fatal("output order changed between runs")
		}
	}
}

func TestGrepCancelled(t *testing.T) {
	root := searchFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := (&grepTool{native: true}).Execute(ctx, tools.NewEnv(root), json.RawMessage(`{"pattern":"hello"}`))
	if err == nil {
		t.Fatal("expected a cancellation error")
	}
}

func TestGrepTruncatesToLimit(t *testing.T) {
	root := writeTree(t, map[string]string{"big.txt": strings.Repeat("match this line\n", 5000)})
	env := tools.NewEnv(root)
	env.OutputLimit = 2000
	res, err := (&grepTool{native: true}).Execute(context.Background(), env, json.RawMessage(`{"pattern":"match","output_mode":"content"}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) > 2300 || !strings.Contains(res.Content, "truncated") || !strings.Contains(res.Content, "big.txt:5000:") {
		t.Fatalf("want head+tail truncation, got %d bytes", len(res.Content))
	}
}

func TestMatcherFoldScan(t *testing.T) {
	m, err := compileMatcher("mutex", true, false)
	if err != nil {
		t.Fatal(err)
	}
	if !m.fold || !m.whole {
		t.Fatalf("want a whole folded literal, got fold=%v whole=%v", m.fold, m.whole)
	}
	buf := []byte("a\nsync.MUTEX here\nmuTex\nmutx\n")
	var got []string
	(&searchSpec{m: m, mode: modeCount}).eachMatch(buf, func(ls, le int) bool {
		got = append(got, string(buf[ls:le]))
		return true
	})
	if strings.Join(got, "|") != "sync.MUTEX here|muTex" {
		t.Fatalf("got %q", got)
	}
	// 'k' folds to the Kelvin sign, so it must not use the ASCII-only scan.
	m, _ = compileMatcher("ok", true, false)
	if m.whole {
		t.Fatal("pattern with k must be verified by the regexp")
	}
	if n := (&searchSpec{m: m, mode: modeCount}).search([]byte("o\u212a\n"), "x").count; n != 1 {
		t.Fatalf("Kelvin sign should match (?i)k, got %d", n)
	}
}

// rgAvailable skips the test when ripgrep is not installed.
func rgAvailable(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("rg"); err != nil {
		msg := "ripgrep (rg) not on PATH; skipping rg-vs-native comparison"
		println(msg)
		t.Skip(msg)
	}
}

func TestGrepRipgrepMatchesNative(t *testing.T) {
	rgAvailable(t)
	root := searchFixture(t)
	// Extra shapes: nested ignore with negation, CRLF, no trailing newline,
	// a NUL past the sniff window, an invalid UTF-8 byte.
	extra := map[string]string{
		"nested/.gitignore":   "*.txt\n!keep.txt\n",
		"nested/drop.txt":     "hello nested\n",
		"nested/keep.txt":     "hello kept\n",
		"crlf.txt":            "hello\r\nworld\r\n",
		"nonl.txt":            "x\nhello",
		"latenul.txt":         strings.Repeat("hello pad\n", 1000) + "\x00 hello\n",
		"latin1.txt":          "caf\xe9 hello\n",
		"deep/a/b/c/hello.go": "package c // Hello\n",
	}
	for p, c := range extra {
		abs := filepath.Join(root, filepath.FromSlash(p))
		os.MkdirAll(filepath.Dir(abs), 0o755)
		if err := os.WriteFile(abs, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	queries := []string{
		`{"pattern":"hello"}`,
		`{"pattern":"hello","case_insensitive":true}`,
		`{"pattern":"hello","output_mode":"count"}`,
		`{"pattern":"hello","output_mode":"content"}`,
		`{"pattern":"hello","output_mode":"content","context":2}`,
		`{"pattern":"hello","output_mode":"content","before":1,"after":3,"-i":true}`,
		`{"pattern":"\\bHello\\b","output_mode":"content"}`,
		`{"pattern":"func \\w+\\(","output_mode":"content","type":"go"}`,
		`{"pattern":"^line[0-9]$","output_mode":"count","path":"docs"}`,
		`{"pattern":"hello$","output_mode":"content"}`,
		`{"pattern":"[^a-z ]hello","output_mode":"content"}`,
		`{"pattern":"(?i)WORLD|kept","output_mode":"content","path":"."}`,
		`{"pattern":"x*","output_mode":"count","path":"nested"}`,
	}
	native, fast := &grepTool{native: true}, &grepTool{}
	for _, q := range queries {
		var a grepArgs
		json.Unmarshal([]byte(q), &a)
		req, err := newGrepRequest(tools.NewEnv(root), a)
		if err != nil {
			t.Fatal(err)
		}
		want := grepOut(t, native, root, q)
		if _, ok := rgSearch(context.Background(), req); !ok {
			t.Logf("%s: not eligible for ripgrep (native answer used)", q)
			continue
		}
		if got := grepOut(t, fast, root, q); got != want {
			t.Errorf("%s\nripgrep:\n%s\nnative:\n%s", q, got, want)
		}
	}
}

func TestMultilineOverlappingMatchesReportLinesOnce(t *testing.T) {
	root := writeTree(t, map[string]string{"f.txt": "foo bar\nbaz\nqux\nfoo\nbar\n"})
	g := &grepTool{native: true}
	cases := map[string]string{
		`{"pattern":"o|a","multiline":true,"output_mode":"count"}`:                 "f.txt:4\ntotal: 4 matching lines in 1 files\n",
		`{"pattern":"bar\\nbaz|baz","multiline":true,"output_mode":"content"}`:     "f.txt:1:foo bar\nf.txt:2:baz\n",
		`{"pattern":"^foo\\n","multiline":true,"output_mode":"content","after":1}`: "f.txt:4:foo\nf.txt-5-bar\n",
		`{"pattern":"qux$","multiline":true,"output_mode":"content","before":1}`:   "f.txt-2-baz\nf.txt:3:qux\n",
		`{"pattern":"x*","multiline":true,"output_mode":"count"}`:                  "f.txt:5\ntotal: 5 matching lines in 1 files\n",
	}
	for args, want := range cases {
		if got := grepOut(t, g, root, args); got != want {
			t.Errorf("%s:\n got %q\nwant %q", args, got, want)
		}
	}
}

// A named file over the size cap is reported as skipped, not as having no
// matches; a directory search still passes over it quietly.
func TestGrepNamedFileOverCapSaysSkipped(t *testing.T) {
	root := writeTree(t, map[string]string{"small.txt": "needle\n"})
	big := filepath.Join(root, "big.log")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("needle\n"); err != nil {
		t.Fatal(err)
	}
	// Sparse: costs no disk.
	if err := f.Truncate(maxSearchSize + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	out := grepOut(t, &grepTool{native: true}, root, `{"pattern":"needle","path":"big.log"}`)
	if !strings.Contains(out, "Skipped big.log") || !strings.Contains(out, "not searched") || strings.Contains(out, "No matches") {
		t.Fatalf("named big file: %q", out)
	}
	out = grepOut(t, &grepTool{native: true}, root, `{"pattern":"needle"}`)
	if strings.TrimSpace(out) != "small.txt" {
		t.Fatalf("directory search: %q", out)
	}
}
