package store

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestJSONFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "home", "trust.json")
	got := map[string]string{"kept": "x"}
	if err := ReadJSON(path, &got); err != nil || got["kept"] != "x" || len(got) != 1 {
		t.Fatalf("missing file: err %v, value %v; want no error and the value untouched", err, got)
	}
	if err := WriteJSON(path, map[string]string{"/ws": "abc"}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil || string(data) != "{\n  \"/ws\": \"abc\"\n}\n" {
		t.Fatalf("written %q, %v", data, err)
	}
	if runtime.GOOS != "windows" {
		for p, want := range map[string]os.FileMode{path: 0o600, filepath.Dir(path): 0o700} {
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
				t.Fatalf("%s: mode %v, %v; want %v", p, fi.Mode().Perm(), err, want)
			}
		}
	}
	var back map[string]string
	if err := ReadJSON(path, &back); err != nil || back["/ws"] != "abc" {
		t.Fatalf("read back %v, %v", back, err)
	}
	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ReadJSON(path, &back); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("bad JSON: err %v; want one naming %s", err, path)
	}
}
