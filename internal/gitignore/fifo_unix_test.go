//go:build unix

package gitignore

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A .gitignore that is a FIFO (a confined command's mkfifo) is not read:
// the read would block the walk of grep, glob or ls for ever.
func TestLoadDirFIFO(t *testing.T) {
	dir := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(dir, ".gitignore"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan struct{})
	go func() { (*Matcher)(nil).LoadDir(dir, ""); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("LoadDir waited on a FIFO")
	}
}
