//go:build !unix

package runtmp

import "os"

// Alive reports whether a process with this id exists: on Windows
// FindProcess opens the process and fails when there is none.
func Alive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	_ = p.Release()
	return true
}
