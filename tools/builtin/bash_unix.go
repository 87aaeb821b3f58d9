//go:build !windows

package builtin

import (
	"os/exec"
	"syscall"
)

// shellCommand builds the command that runs script: PowerShell, the
// configured shell, else bash when installed, POSIX sh otherwise.
func shellCommand(sh shellSpec, script string) *exec.Cmd {
	shell := sh.path
	if sh.power {
		cmd := exec.Command(shell, append(append([]string(nil), powerShellArgs...), script)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		setPdeathsig(cmd.SysProcAttr)
		return cmd
	}
	if shell != "" {
		cmd := exec.Command(shell, "-c", script)
		setGroup(cmd)
		return cmd
	}
	shell = "sh"
	if p, err := exec.LookPath("bash"); err == nil {
		shell = p
	}
	cmd := exec.Command(shell, "-c", script)
	// A group of its own lets a timeout kill everything the command
	// started, not just the shell.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	setPdeathsig(cmd.SysProcAttr)
	return cmd
}

// killProcessGroup kills the command's whole process group.
func killProcessGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if err == syscall.ESRCH {
		return nil
	}
	return err
}

// killLeftovers kills what is left in the group of a command whose shell
// has already been waited for: the group outlives its leader while any
// member runs, and its id is not reused while it exists.
func killLeftovers(cmd *exec.Cmd) error { return killProcessGroup(cmd) }

// setGroup gives the command a process group of its own.
func setGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }
