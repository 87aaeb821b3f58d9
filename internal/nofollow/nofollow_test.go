//go:build unix

package nofollow

import (
	"os"
	"path/filepath"
	"testing"
)

// Every operation works on a path free of symlinks and fails, touching
// nothing, where a folder on it is a symlink (one swapped in after the
// path was checked).
func TestNoSymlinkOnThePath(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(root, "outside")
	ws := filepath.Join(root, "ws")
	for _, d := range []string{outside, filepath.Join(ws, "real")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "key"), []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(ws, "link")); err != nil {
		t.Fatal(err)
	}
	// The plain path works.
	if err := WriteFile(filepath.Join(ws, "real", "new", "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Rename(filepath.Join(ws, "real", "new", "f"), filepath.Join(ws, "real", "g")); err != nil {
		t.Fatal(err)
	}
	f, err := Open(filepath.Join(ws, "real", "g"), ReadFlags, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := Remove(filepath.Join(ws, "real", "g")); err != nil {
		t.Fatal(err)
	}
	// Through the link, nothing.
	via := func(name string) string { return filepath.Join(ws, "link", name) }
	if f, err := Open(via("key"), ReadFlags, 0); err == nil {
		f.Close()
		t.Error("Open read through the symlink")
	} else if !IsLinkErr(err) {
		t.Errorf("Open: %v, want a symlink error", err)
	}
	if err := WriteFile(via("planted"), []byte("x"), 0o644); err == nil {
		t.Error("WriteFile wrote through the symlink")
	}
	if err := Rename(filepath.Join(ws, "real"), via("moved")); err == nil {
		t.Error("Rename moved through the symlink")
	}
	if err := Remove(via("key")); err == nil {
		t.Error("Remove deleted through the symlink")
	}
	if _, err := OpenDir(filepath.Join(via("deep"), "er"), true); err == nil {
		t.Error("OpenDir made folders through the symlink")
	}
	ents, _ := os.ReadDir(outside)
	if len(ents) != 1 {
		t.Errorf("outside holds %d entries, want only the key", len(ents))
	}
	// The last component a symlink is refused too.
	if f, err := Open(filepath.Join(ws, "link"), DirFlags, 0); err == nil {
		f.Close()
		t.Error("Open followed a symlink at the end of the path")
	}
}
