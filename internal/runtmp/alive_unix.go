//go:build unix

package runtmp

import (
	"errors"
	"syscall"
)

// Alive reports whether a process with this id exists. EPERM means it
// exists but belongs to someone else: alive.
func Alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
