// Package flock takes advisory locks on open files, so several Reasonix
// processes can share a store: flock(2) on Unix, LockFileEx on Windows,
// and nothing where neither exists (those platforms run one process per
// store in practice; writers there still use single appends and renames).
package flock

import "os"

// Lock waits for a lock on f: exclusive, or shared when exclusive is false.
func Lock(f *os.File, exclusive bool) error { return lock(f, exclusive) }

// Unlock releases the lock on f.
func Unlock(f *os.File) { unlock(f) }
