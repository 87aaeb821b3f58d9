//go:build linux

package builtin

import "syscall"

// setPdeathsig makes the kernel kill the shell when the thread that
// started it ends, as it does when Reasonix is killed. The sandbox keeps
// that thread alive until the shell exits.
func setPdeathsig(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }
