package flock

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// TestExclusiveWaits: a second exclusive lock on the same file (another
// open file description, as another process has) waits for the first.
func TestExclusiveWaits(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" && runtime.GOOS != "windows" {
		t.Skip("no file locks here")
	}
	p := filepath.Join(t.TempDir(), "lock")
	open := func() *os.File {
		f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f
	}
	a, b := open(), open()
	if err := Lock(a, true); err != nil {
		t.Fatal(err)
	}
	got := make(chan struct{})
	go func() {
		if err := Lock(b, true); err != nil {
			t.Error(err)
		}
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("a second exclusive lock did not wait")
	case <-time.After(100 * time.Millisecond):
	}
	Unlock(a)
	select {
	case <-got:
	case <-time.After(5 * time.Second):
		t.Fatal("the second lock was never granted")
	}
	Unlock(b)
	// Shared locks coexist.
	if err := Lock(a, false); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- Lock(b, false) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("shared locks excluded each other")
	}
}
