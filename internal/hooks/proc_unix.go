//go:build !windows

package hooks

import (
	"os/exec"
	"syscall"
)

// shellCommand runs a hook's command line with bash when installed, POSIX
// sh otherwise, in a process group of its own so a timeout can end it all.
func shellCommand(line string) *exec.Cmd {
	shell := "sh"
	if p, err := exec.LookPath("bash"); err == nil {
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
