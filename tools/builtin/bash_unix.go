//go:build !windows

package builtin

import (
	"os"
	"os/exec"
	"syscall"

	"github.com/reasonix/reasonix/internal/lazy"
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
	cmd := exec.Command(defaultShell(), "-c", script)
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

// foundBash is where PATH had bash the first time a command looked ("" for
// nowhere). Reasonix's PATH does not change while it runs, and the search
// stats a file in each of its directories (a dozen on a common PATH), per
// command; a command now costs one stat of the path found.
var foundBash = lazy.Value[string]{Build: func() string {
	p, err := exec.LookPath("bash")
	if err != nil {
		return ""
	}
	return p
}}

// defaultShell is bash when installed, POSIX sh otherwise. A bash found
// earlier that has since gone is looked for again.
func defaultShell() string {
	if p := foundBash.Get(); p != "" {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return p
		}
	}
	if p, err := exec.LookPath("bash"); err == nil {
		return p
	}
	return "sh"
}
