//go:build !unix && !windows

package checkpoint

import "os"

// Platforms without file locks (js, wasip1, plan9) run one process per
// store in practice; writes stay atomic renames.
func lockFD(*os.File, bool) error { return nil }

func unlockFD(*os.File) {}
