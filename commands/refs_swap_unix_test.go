//go:build unix

package commands

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The folder of an @reference the person typed is swapped for a symlink
// to a folder of secrets right after the deny check (where a command
// left running would race for that moment): what is inlined must be what
// was checked, or nothing.
func TestInlineFolderSwappedAfterTheCheck(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws, secrets := filepath.Join(root, "ws"), filepath.Join(root, "ssh")
	for _, d := range []string{filepath.Join(ws, "docs"), secrets} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "docs", "notes.md"), []byte("NOTES\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(secrets, "notes.md"), []byte("SECRET-KEY\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, notices := Inline("see @docs/notes.md", RefOptions{Root: ws, Denied: func(string) string {
		if err := os.Rename(filepath.Join(ws, "docs"), filepath.Join(ws, "docs.old")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(secrets, filepath.Join(ws, "docs")); err != nil {
			t.Fatal(err)
		}
		return ""
	}})
	if strings.Contains(out, "SECRET-KEY") {
		t.Errorf("the reference inlined the file behind the swapped folder: %q", out)
	}
	if len(notices) == 0 {
		t.Error("no notice says the reference was not inlined")
	}
}

// An @reference to a FIFO is not read: the read would wait for a writer.
func TestInlineFIFO(t *testing.T) {
	ws := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan string, 1)
	go func() { out, _ := Inline("see @pipe", RefOptions{Root: ws}); done <- out }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("inlining waited on a FIFO")
	}
}
