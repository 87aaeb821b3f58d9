package permission

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A hard link in the workspace to a file outside it is the outside file:
// reading or writing through it is refused like any outside path.
func TestConfinerRefusesHardLinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("link counts are not checked on Windows")
	}
	ws, out := t.TempDir(), t.TempDir()
	secret := filepath.Join(out, "secret.txt")
	must(t, os.WriteFile(secret, []byte("canary"), 0o600))
	must(t, os.Link(secret, filepath.Join(ws, "linked.txt")))
	must(t, os.WriteFile(filepath.Join(ws, "plain.txt"), []byte("ok"), 0o644))
	c, err := NewConfiner(ws, nil, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, write := range []bool{false, true} {
		if _, err := c.Resolve("linked.txt", write); err == nil || !strings.Contains(err.Error(), "hard link") {
			t.Fatalf("write=%v: hard link resolved: %v", write, err)
		}
		if _, err := c.Resolve("plain.txt", write); err != nil {
			t.Fatalf("write=%v: plain file: %v", write, err)
		}
	}
	// A new file (nothing to stat yet) is an ordinary write.
	if _, err := c.Resolve("new.txt", true); err != nil {
		t.Fatal(err)
	}
}
