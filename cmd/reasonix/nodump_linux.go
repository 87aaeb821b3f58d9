package main

import "syscall"

// A process started by a tool runs as the same user as Reasonix, and
// /proc/<ppid>/environ would hand it the environment Reasonix started
// with, provider keys included, however clean its own environment is.
// Marking the process not dumpable makes its /proc files (environ, mem)
// and ptrace reachable only with CAP_SYS_PTRACE; children start dumpable
// again. It also turns off core dumps, which could hold the keys too.
func init() {
	_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0)
}
