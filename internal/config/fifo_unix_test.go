//go:build unix

package config

import (
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A .env that is a FIFO (a confined command's mkfifo) is not read: the
// read would block every later start.
func TestDotEnvFIFO(t *testing.T) {
	f := newFixture(t)
	if err := syscall.Mkfifo(filepath.Join(f.ws, ".env"), 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Load(Options{Workspace: f.ws, Home: f.home, Env: func(string) string { return "" }})
		done <- err
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Load waited on a FIFO .env")
	}
}
