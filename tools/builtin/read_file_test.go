package builtin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func ftLines(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestReadFile(t *testing.T) {
	long := strings.Repeat("x", 5000)
	cases := []struct {
		name     string
		limit    int // output limit; 0 keeps the default
		content  string
		args     map[string]any
		contains []string
		absent   []string
	}{
		{"numbered", 0, "alpha\nbeta\n", map[string]any{"path": "f.txt"},
			[]string{"     1\talpha\n", "     2\tbeta\n"}, []string{"showing lines", "     3\t"}},
		{"no final newline", 0, "alpha\nbeta", map[string]any{"path": "f.txt"},
			[]string{"     2\tbeta\n"}, nil},
		{"crlf stripped", 0, "a\r\nb\r\n", map[string]any{"path": "f.txt"},
			[]string{"     1\ta\n"}, []string{"\r"}},
		{"offset and limit", 0, ftLines(10), map[string]any{"path": "f.txt", "offset": 3, "limit": 2},
			[]string{"     3\tline 3\n", "     4\tline 4\n", "showing lines 3-4 of 10; call read_file with offset=5"},
			[]string{"line 2\n", "line 5\n"}},
		{"quoted numbers", 0, ftLines(10), map[string]any{"path": "f.txt", "offset": "9"},
			[]string{"     9\tline 9\n", "    10\tline 10\n"}, []string{"line 8\n", "showing"}},
		{"default limit", 100000, ftLines(2100), map[string]any{"path": "f.txt"},
			[]string{"  2000\tline 2000\n", "showing lines 1-2000 of 2100; call read_file with offset=2001"},
			[]string{"line 2001\n"}},
		{"long line cut", 0, "short\n" + long + "\n", map[string]any{"path": "f.txt"},
			[]string{"[line cut: 5000 bytes total]", "1 long line(s) were cut at 2000 bytes"},
			[]string{strings.Repeat("x", 2001)}},
		{"file_path alias", 0, "alpha\n", map[string]any{"file_path": "f.txt"},
			[]string{"     1\talpha\n"}, nil},
		{"empty", 0, "", map[string]any{"path": "f.txt"}, []string{"f.txt is empty"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := ftWorkspace(t, map[string]string{"f.txt": c.content})
			env.OutputLimit = c.limit
			res := ftMust(t, env, "read_file", c.args)
			for _, w := range c.contains {
				if !strings.Contains(res.Content, w) {
					t.Errorf("output lacks %q:\n%.500s", w, res.Content)
				}
			}
			for _, w := range c.absent {
				if strings.Contains(res.Content, w) {
					t.Errorf("output unexpectedly contains %q", w)
				}
			}
			if !env.Reads.Has(filepath.Join(env.Root, "f.txt")) {
				t.Error("read was not recorded")
			}
		})
	}
}

func TestReadFileErrors(t *testing.T) {
	env := ftWorkspace(t, map[string]string{"dir/inner.txt": "x\n", "main.go": "package main\n", "three.txt": ftLines(3)})
	ftFail(t, env, "read_file", map[string]any{"path": "dir"}, "is a directory", "ls")
	ftFail(t, env, "read_file", map[string]any{"path": "main.py"}, "file not found: main.py", "main.go")
	ftFail(t, env, "read_file", map[string]any{"path": "three.txt", "offset": 7}, "offset 7 is past the end", "3 lines")
	ftFail(t, env, "read_file", map[string]any{}, `missing required argument "path"`)
	ftFail(t, env, "read_file", map[string]any{"path": "three.txt", "limit": -1}, "positive")
	if env.Reads.Has(filepath.Join(env.Root, "main.py")) {
		t.Error("failed read was recorded")
	}
}

func TestReadFileBinary(t *testing.T) {
	env := ftWorkspace(t, nil)
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 2000)...)
	if err := os.WriteFile(filepath.Join(env.Root, "img.png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
	res := ftMust(t, env, "read_file", map[string]any{"path": "img.png"})
	for _, w := range []string{"binary file", "image/png", "2.0 KiB"} {
		if !strings.Contains(res.Content, w) {
			t.Errorf("description lacks %q: %s", w, res.Content)
		}
	}
	if strings.Contains(res.Content, "IHDR") {
		t.Error("binary content was dumped")
	}
}

func TestReadFileFixtures(t *testing.T) {
	env := ftWorkspace(t, nil)
	env.Root = filepath.Join(mustAbs(t, "testdata"), "files")
	res := ftMust(t, env, "read_file", map[string]any{"path": "blob.bin"})
	if !strings.Contains(res.Content, "binary file") {
		t.Errorf("fixture blob.bin not described as binary: %s", res.Content)
	}
	res = ftMust(t, env, "read_file", map[string]any{"path": "latin.txt"})
	if !strings.Contains(res.Content, "     1\t") {
		t.Errorf("mostly-ASCII text with one stray byte should read as text: %s", res.Content)
	}
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestReadFileOutputLimit(t *testing.T) {
	env := ftWorkspace(t, map[string]string{"big.txt": ftLines(5000)})
	env.OutputLimit = 4000
	res := ftMust(t, env, "read_file", map[string]any{"path": "big.txt"})
	if len(res.Content) > env.OutputLimit {
		t.Errorf("output is %d bytes, limit %d", len(res.Content), env.OutputLimit)
	}
	if !strings.Contains(res.Content, "[output truncated to fit the output limit") || !strings.Contains(res.Content, "of 5000; call read_file with offset=") {
		t.Errorf("no truncation marker with continuation:\n%s", res.Content[len(res.Content)-300:])
	}
	// The continuation offset must pick up exactly where the page stopped.
	i := strings.LastIndex(res.Content, "offset=")
	var next int
	fmt.Sscanf(res.Content[i:], "offset=%d", &next)
	if !strings.Contains(res.Content, fmt.Sprintf("%6d\tline %d\n", next-1, next-1)) || strings.Contains(res.Content, fmt.Sprintf("\tline %d\n", next)) {
		t.Errorf("continuation offset %d does not follow the last shown line", next)
	}
}
