// Package regular reads a file only when it is a regular file.
//
// A name in a workspace that a confined command could replace (a .env, an
// ignore file) may be a FIFO: opening it to read waits for a writer that
// never comes, so one such file would block every later start or walk. A
// device would read for ever. [ReadFile] opens without waiting and judges
// what it opened, not what the name said a moment before.
package regular

import (
	"errors"
	"io"
	"os"
	"syscall"
)

// ErrNotRegular is the error for a name that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// ReadFile reads the regular file at path (symlinks followed); anything
// else is [ErrNotRegular].
func ReadFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, ErrNotRegular
	}
	return io.ReadAll(f)
}
