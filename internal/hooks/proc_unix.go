//go:build !windows

package hooks

import (
	"os/exec"
	"syscall"

	"github.com/reasonix/reasonix/internal/lookpath"
)

// shellCommand runs a hook's command line with bash when installed, POSIX
// sh otherwise, in a process group of its own so a timeout can end it all.
// Hooks run outside the sandbox: neither shell is one found on PATH inside
// workspace, where a confined command may have written one
// (internal/lookpath).
func shellCommand(line, workspace string) *exec.Cmd {
	shell := "/bin/sh"
	if p, err := lookpath.Outside("bash", workspace); err == nil {
		shell = p
	} else if p, err := lookpath.Outside("sh", workspace); err == nil {
		shell = p
	}
	cmd := exec.Command(shell, "-c", line)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd
}

// killGroup kills the hook's whole process group.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
