package store

import (
	"os"
	"runtime"
)

// SyncPath flushes a file, or a directory's entries (a rename into it),
// to the disk: POSIX promises a file's new name survives a power cut only
// once its directory is synced. On Windows a directory is left to the
// file system's journal: os opens it read-only, and FlushFileBuffers
// refuses such a handle.
func SyncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	if runtime.GOOS == "windows" {
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			return f.Close()
		}
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
