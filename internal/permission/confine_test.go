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

// TestConfinerDenyReadThroughSymlink: a deny_read path that is a symlink
// (a dotfiles checkout: ~/.ssh -> ~/dotfiles/ssh) keeps its target out of
// reach of file tools, exceptions stay readable, and the list is
// resolved when the first path is checked (not when DenyRead is called),
// so a link made in between is followed too.
func TestConfinerDenyReadThroughSymlink(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links need a privilege on Windows")
	}
	root := t.TempDir()
	ws, home, keys := filepath.Join(root, "ws"), filepath.Join(root, "home"), filepath.Join(root, "dotfiles", "ssh")
	for _, d := range []string{ws, home, filepath.Join(keys, "public")} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(filepath.Join(keys, "id"), []byte("secret"), 0o600))
	must(t, os.WriteFile(filepath.Join(keys, "public", "id.pub"), []byte("pub"), 0o644))
	c, err := NewConfiner(ws, []string{filepath.Join(root, "dotfiles")}, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	c.DenyRead([]string{filepath.Join(home, ".ssh")}, []string{filepath.Join(home, ".ssh", "public")})
	must(t, os.Symlink(keys, filepath.Join(home, ".ssh")))
	if _, err := c.Resolve(filepath.Join(keys, "id"), false); err == nil || !strings.Contains(err.Error(), "deny_read") {
		t.Fatalf("reading the link's target: err = %v, want a deny_read refusal", err)
	}
	if _, err := c.Resolve(filepath.Join(keys, "public", "id.pub"), false); err != nil {
		t.Fatalf("an exception under the link's target: %v", err)
	}
	if _, err := c.Resolve(filepath.Join(root, "dotfiles", "other"), false); err != nil {
		t.Fatalf("a sibling of the denied directory: %v", err)
	}
	w, err := c.WithWorkspace(ws)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Resolve(filepath.Join(keys, "id"), false); err == nil {
		t.Fatal("a worker's confiner lost the deny list")
	}
}

// Paths resolved together (the read deny list) share what earlier ones
// found: the result is realPath's, symlinks on the way, behind a shared
// start and at the end included, and missing tails.
func TestRealPathKnownIsRealPath(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"home/.config", "home/real", "elsewhere/x"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "elsewhere"), filepath.Join(root, "home", "link")); err != nil {
		t.Skipf("symlink: %v", err)
	}
	if err := os.Symlink("real", filepath.Join(root, "home", ".aws")); err != nil {
		t.Fatal(err)
	}
	paths := []string{
		filepath.Join(root, "home", ".ssh"),
		filepath.Join(root, "home", ".aws"),
		filepath.Join(root, "home", ".aws", "credentials"),
		filepath.Join(root, "home", "link", "x"),
		filepath.Join(root, "home", "link", "..", "real"),
		filepath.Join(root, "home", ".config", "gcloud"),
		filepath.Join(root, "home", "real", "..", "link"),
		filepath.Join(root, "home", "missing", "deeper", "..", "real"),
	}
	known := map[string]bool{}
	for _, p := range paths {
		want, werr := realPath(p)
		got, gerr := realPathKnown(p, known)
		if got != want || (werr == nil) != (gerr == nil) {
			t.Errorf("%s: %q, %v; realPath: %q, %v", p, got, gerr, want, werr)
		}
	}
	if !known[filepath.Join(root, "home")] || known[filepath.Join(root, "home", ".aws")] || known[filepath.Join(root, "home", "link")] {
		t.Errorf("known = %v: want the plain directories only", known)
	}
}
