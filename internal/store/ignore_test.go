package store

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnsureIgnoredHidesStateFromGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed: cannot check what git sees")
	}
	repo := t.TempDir()
	if out, err := exec.Command("git", "-C", repo, "init", "-q").CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	dir := filepath.Join(repo, ".reasonix", "sessions")
	if err := EnsureIgnored(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "s1.jsonl"), []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(repo, ".reasonix", "plan.json"), []byte("{}"), 0o644)
	out, err := exec.Command("git", "-C", repo, "status", "--porcelain", "--untracked-files=all").Output()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(out), "sessions") {
		t.Errorf("git still sees the sessions dir:\n%s", out)
	}
	if !strings.Contains(string(out), "plan.json") {
		t.Errorf("ignore leaked outside its dir:\n%s", out)
	}
	// Idempotent, and an existing file is kept.
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("custom\n"), 0o644)
	if err := EnsureIgnored(dir); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".gitignore")); string(b) != "custom\n" {
		t.Errorf("existing .gitignore overwritten: %q", b)
	}
	// An empty one, as a kill or a power cut leaves it, is written again.
	os.WriteFile(filepath.Join(dir, ".gitignore"), nil, 0o644)
	if err := EnsureIgnored(dir); err != nil {
		t.Fatal(err)
	}
	out, err = exec.Command("git", "-C", repo, "status", "--porcelain", "--untracked-files=all").Output()
	if err != nil || strings.Contains(string(out), "sessions") {
		t.Errorf("after an empty .gitignore git sees the sessions dir (%v):\n%s", err, out)
	}
}
