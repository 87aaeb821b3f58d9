package builtin

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reasonix/reasonix/tools"
)

func walkAll(t *testing.T, root, start string) []string {
	t.Helper()
	var mu sync.Mutex
	var got []string
	err := walk(context.Background(), walkOptions{Root: root, Start: start, Workers: 4}, func(e walkEntry) error {
		if !e.IsDir {
			mu.Lock()
			got = append(got, e.Rel)
			mu.Unlock()
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(got)
	return got
}

func TestWalkIgnoreSemantics(t *testing.T) {
	root := writeTree(t, map[string]string{
		".gitignore":              "*.tmp\n/only-root.txt\nout/\n!keep.tmp\ncache/**\n!cache/want.txt\n",
		"a.go":                    "",
		"x.tmp":                   "",
		"keep.tmp":                "",
		"only-root.txt":           "",
		"sub/only-root.txt":       "",
		"out/gen.go":              "",
		"sub/out/gen.go":          "",
		"cache/drop.txt":          "",
		"cache/want.txt":          "",
		"nested/.gitignore":       "*.go\n!main.go\n/local.txt\n",
		"nested/main.go":          "",
		"nested/other.go":         "",
		"nested/local.txt":        "",
		"nested/deeper/local.txt": "",
		"nested/deeper/x.go":      "",
		"nested/deeper/x.tmp":     "",
		".git/HEAD":               "",
		"node_modules/m/i.js":     "",
		".github/ci.yml":          "",
	})
	want := []string{
		".github/ci.yml", ".gitignore", "a.go", "cache/want.txt", "keep.tmp",
		"nested/.gitignore", "nested/deeper/local.txt", "nested/main.go", "sub/only-root.txt",
	}
	if got := walkAll(t, root, root); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("walk from root:\n got %v\nwant %v", got, want)
	}
	// Starting below the root still applies the root's and parents' rules.
	if got := walkAll(t, root, filepath.Join(root, "nested", "deeper")); strings.Join(got, " ") != "nested/deeper/local.txt" {
		t.Errorf("walk from nested/deeper: got %v", got)
	}
}

func TestWalkCancel(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < 200; i++ {
		files[filepath.Join("d", strings.Repeat("x", i%9+1), string(rune('a'+i%26))+".txt")] = ""
	}
	root := writeTree(t, files)
	ctx, cancel := context.WithCancel(context.Background())
	seen := 0
	var mu sync.Mutex
	err := walk(ctx, walkOptions{Root: root, Start: root, Workers: 2}, func(e walkEntry) error {
		mu.Lock()
		defer mu.Unlock()
		seen++
		if seen == 3 {
			cancel()
		}
		return nil
	})
	if err == nil {
		t.Fatal("want a context error")
	}
	if seen > 100 {
		t.Fatalf("walk kept going after cancel: %d entries", seen)
	}
}

func TestGlobOrderAndIgnore(t *testing.T) {
	root := writeTree(t, map[string]string{
		".gitignore":  "gen/\n",
		"old.go":      "",
		"mid.go":      "",
		"new.go":      "",
		"pkg/deep.go": "",
		"pkg/a.txt":   "",
		"gen/skip.go": "",
	})
	now := time.Now()
	for i, p := range []string{"pkg/a.txt", "old.go", "pkg/deep.go", "mid.go", "new.go"} {
		ts := now.Add(time.Duration(i-10) * time.Hour)
		if err := os.Chtimes(filepath.Join(root, p), ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	env := tools.NewEnv(root)
	cases := map[string]string{
		`{"pattern":"**/*.go"}`:              "new.go\nmid.go\npkg/deep.go\nold.go\n",
		`{"pattern":"*.go"}`:                 "new.go\nmid.go\nold.go\n",
		`{"pattern":"pkg/*"}`:                "pkg/deep.go\npkg/a.txt\n",
		`{"pattern":"*.go","path":"pkg"}`:    "pkg/deep.go\n",
		`{"pattern":"**/*.{go,txt}"}`:        "new.go\nmid.go\npkg/deep.go\nold.go\npkg/a.txt\n",
		`{"pattern":"gen/*.go"}`:             "gen/skip.go\n", // naming an ignored dir explicitly searches it
		`{"pattern":"nothing/**"}`:           "No files found",
		`{"pattern":"**/*.rs","path":"."}`:   "No files found",
		`{"pattern":"./pkg/*.go","path":""}`: "pkg/deep.go\n",
		`{"pattern":"*/*.go"}`:               "pkg/deep.go\n",
		`{"pattern":"{pkg/*,new}.go"}`:       "new.go\npkg/deep.go\n",
		`{"pattern":"pkg[^x]deep.go"}`:       "pkg/deep.go\n",
	}
	for args, want := range cases {
		res, err := runTool(t, globTool{}, env, args)
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		if res.Content != want {
			t.Errorf("%s:\n got %q\nwant %q", args, res.Content, want)
		}
	}
	if _, err := runTool(t, globTool{}, env, `{"pattern":"[x"}`); err == nil {
		t.Error("invalid pattern should fail")
	}
	if _, err := runTool(t, globTool{}, env, `{"pattern":"../**"}`); err == nil {
		t.Error("escaping the workspace should fail")
	}
}

func TestGlobCap(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < globMax+25; i++ {
		files[filepath.Join("many", strings.Repeat("f", i/26+1)+string(rune('a'+i%26))+".txt")] = ""
	}
	res, err := runTool(t, globTool{}, tools.NewEnv(writeTree(t, files)), `{"pattern":"**/*.txt"}`)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(res.Content), "\n")
	if len(lines) != globMax+1 || !strings.Contains(lines[globMax], "of 225") {
		t.Fatalf("want %d paths and a note, got %d lines, last %q", globMax, len(lines), lines[len(lines)-1])
	}
}

func TestLs(t *testing.T) {
	root := writeTree(t, map[string]string{
		".gitignore":        "*.log\n",
		"README.md":         "",
		"x.log":             "",
		"cmd/main.go":       "",
		"cmd/sub/deep.go":   "",
		"cmd/sub/deeper/z":  "",
		"node_modules/a.js": "",
		".git/HEAD":         "",
	})
	env := tools.NewEnv(root)
	res, err := runTool(t, lsTool{}, env, `{}`)
	if err != nil {
		t.Fatal(err)
	}
	want := "./\n  cmd/\n    sub/ (2 entries)\n    main.go\n  .gitignore\n  README.md\n"
	if res.Content != want {
		t.Errorf("got:\n%s\nwant:\n%s", res.Content, want)
	}
	res, err = runTool(t, lsTool{}, env, `{"path":"cmd","depth":1}`)
	if err != nil {
		t.Fatal(err)
	}
	if want := "cmd/\n  sub/ (2 entries)\n  main.go\n"; res.Content != want {
		t.Errorf("got:\n%s\nwant:\n%s", res.Content, want)
	}
	for _, bad := range []string{`{"path":"README.md"}`, `{"path":"nope"}`, `{"path":"../.."}`, `{"depth":"x"}`} {
		if _, err := runTool(t, lsTool{}, env, bad); err == nil {
			t.Errorf("%s: want error", bad)
		}
	}
}

func TestLsCap(t *testing.T) {
	files := map[string]string{}
	for i := 0; i < lsMaxEntries+10; i++ {
		files[strings.Repeat("f", i/26+1)+string(rune('a'+i%26))] = ""
	}
	res, err := runTool(t, lsTool{}, tools.NewEnv(writeTree(t, files)), `{}`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Content, "[10 more entries not shown") {
		t.Fatalf("missing cap note: %q", res.Content[len(res.Content)-100:])
	}
}

func TestSchemasAreCompact(t *testing.T) {
	for _, name := range []string{"ls", "glob", "grep", "bash", "todo_write", "todo_read"} {
		tool, ok := tools.Builtin(name)
		if !ok {
			t.Errorf("%s not registered", name)
			continue
		}
		var v map[string]any
		if err := json.Unmarshal(tool.Schema(), &v); err != nil {
			t.Errorf("%s schema: %v", name, err)
		}
		if _, ok := v["required"]; !ok {
			t.Errorf("%s schema lacks required", name)
		}
		if n := len(tool.Description()) + len(tool.Schema()); n > 1000 {
			t.Errorf("%s: description+schema %d bytes, budget 1000", name, n)
		}
	}
}
