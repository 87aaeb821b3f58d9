package regular

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "a")
	if err := os.WriteFile(p, []byte("x=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFile(p); err != nil || string(b) != "x=1\n" {
		t.Errorf("a regular file: %q, %v", b, err)
	}
	if _, err := ReadFile(dir); !errors.Is(err, ErrNotRegular) {
		t.Errorf("a folder: %v", err)
	}
}
