//go:build !unix

package store

import "os"

// lockFile does nothing where there is no flock: appends are still single
// O_APPEND writes, and only a rewrite racing another process's append can
// lose that one line.
func lockFile(*os.File) error { return nil }

func unlockFile(*os.File) {}
