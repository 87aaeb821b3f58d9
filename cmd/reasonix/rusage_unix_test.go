//go:build !windows

package main

import (
	"os/exec"
	"syscall"
)

// minorFaults is the page faults of the process and the children it
// waited for (the bash tool's commands), none of which needed a disk read.
func minorFaults(cmd *exec.Cmd) int64 {
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Minflt)
	}
	return 0
}

func maxRSS(cmd *exec.Cmd) int64 {
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss) // KB on Linux
	}
	return 0
}
