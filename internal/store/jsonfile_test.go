package store

import (
	"errors"
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

// A record that does not parse names its place, and is never replaced:
// the caller that read it as empty would drop every record it held.
func TestJSONFileCorruptIsKept(t *testing.T) {
	path := filepath.Join(t.TempDir(), "trust.json")
	bad := "{\n  \"/a\": \"1\",\n  \"/b\" \"2\"\n}\n"
	if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	var m map[string]string
	err := ReadJSON(path, &m)
	var be *BadJSONError
	if !errors.As(err, &be) || be.Path != path || be.Line != 3 || be.Column != 8 {
		t.Fatalf("read: %v (%+v); want a BadJSONError at line 3, column 8", err, be)
	}
	if !strings.HasPrefix(err.Error(), path+":3:8: not valid JSON: ") {
		t.Errorf("message %q", err)
	}
	err = WriteJSON(path, map[string]string{"/c": "3"})
	if !errors.As(err, &be) || !strings.Contains(err.Error(), "not replaced") {
		t.Fatalf("write over a corrupt file: %v; want it refused", err)
	}
	if got, _ := os.ReadFile(path); string(got) != bad {
		t.Fatalf("the corrupt file changed: %q", got)
	}
	// A file of the wrong shape says where too; one cut short says so.
	if err := os.WriteFile(path, []byte(`{"/a": 5}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ReadJSON(path, &m); !errors.As(err, &be) || be.Line != 1 {
		t.Errorf("wrong shape: %v", err)
	}
	if err := os.WriteFile(path, []byte(`{"/a": "1`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := ReadJSON(path, &m); !errors.As(err, &be) || !strings.Contains(err.Error(), "unexpected end") {
		t.Errorf("cut short: %v", err)
	}
	if err := WriteJSON(path, m); err == nil {
		t.Error("a record file cut short was replaced")
	}
	// An empty file holds no record: it reads as none and is replaced.
	if err := os.WriteFile(path, []byte("\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	m = nil
	if err := ReadJSON(path, &m); err != nil || m != nil {
		t.Errorf("empty: %v %v", m, err)
	}
	if err := WriteJSON(path, map[string]string{"/c": "3"}); err != nil {
		t.Errorf("empty file not replaced: %v", err)
	}
}
