package lookpath

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestOutsideSkipsFoldersInRoots(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("POSIX executables")
	}
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	sys := filepath.Join(dir, "sys")
	venv := filepath.Join(ws, ".venv", "bin")
	linked := filepath.Join(dir, "linked")
	for _, d := range []string{venv, sys, linked} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string) {
		if err := os.WriteFile(p, []byte("#!/bin/sh\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(venv, "tool"))
	write(filepath.Join(sys, "tool"))
	write(filepath.Join(venv, "only"))
	// A folder outside the roots whose program is a symlink into one.
	if err := os.Symlink(filepath.Join(venv, "tool"), filepath.Join(linked, "tool")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", "relative"+string(os.PathListSeparator)+linked+string(os.PathListSeparator)+venv+string(os.PathListSeparator)+sys)
	got, err := Outside("tool", ws)
	if err != nil || got != filepath.Join(sys, "tool") {
		t.Errorf("Outside(tool) = %q, %v; want the one in %s", got, err, sys)
	}
	if got, err := Outside("only", ws); err == nil {
		t.Errorf("Outside(only) = %q: found the program inside the workspace", got)
	}
	if got, err := Outside("only"); err != nil || got != filepath.Join(venv, "only") {
		t.Errorf("with no roots: %q, %v", got, err)
	}
	// The workspace named through a symlink is still the workspace.
	wsLink := filepath.Join(dir, "wslink")
	if err := os.Symlink(ws, wsLink); err != nil {
		t.Fatal(err)
	}
	if got, err := Outside("only", wsLink); err == nil {
		t.Errorf("Outside(only, link to workspace) = %q", got)
	}
	if got, err := Outside(filepath.Join(venv, "only"), ws); err != nil || got != filepath.Join(venv, "only") {
		t.Errorf("an explicit path: %q, %v", got, err)
	}
}
