package main

import (
	"syscall"
	"testing"
)

func TestProcessIsNotDumpable(t *testing.T) {
	r, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_GET_DUMPABLE, 0, 0)
	if errno != 0 || r != 0 {
		t.Fatalf("PR_GET_DUMPABLE = %d (%v), want 0: children could read /proc/<ppid>/environ", r, errno)
	}
}
