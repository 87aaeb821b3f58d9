//go:build !linux && !windows

package builtin

import "syscall"

// setPdeathsig does nothing where the kernel has no parent-death signal;
// the process-group watcher (reaper_unix.go) still cleans up.
func setPdeathsig(*syscall.SysProcAttr) {}
