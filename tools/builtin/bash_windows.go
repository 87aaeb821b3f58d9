//go:build windows

package builtin

import (
	"os/exec"
	"strconv"
	"syscall"
)

// shellCommand builds the command that runs script: PowerShell, the
// configured shell, bash (Git for Windows, MSYS) when installed, cmd.exe
// otherwise.
func shellCommand(sh shellSpec, script string) *exec.Cmd {
	shell := sh.path
	if sh.power {
		// pwsh and powershell.exe split their command line as the C
		// runtime does, which is how Go quotes the arguments.
		cmd := exec.Command(shell, append(append([]string(nil), powerShellArgs...), script)...)
		setGroup(cmd)
		return cmd
	}
	if shell != "" {
		cmd := exec.Command(shell, "-c", script)
		setGroup(cmd)
		return cmd
	}
	if p, err := exec.LookPath("bash"); err == nil {
		cmd := exec.Command(p, "-c", script)
		cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
		return cmd
	}
	cmd := exec.Command("cmd.exe")
	// cmd.exe does its own parsing; hand it the script verbatim instead of
	// letting Go quote it as if it were argv.
	cmd.SysProcAttr = &syscall.SysProcAttr{
		CmdLine:       `cmd.exe /S /C "` + script + `"`,
		CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP,
	}
	return cmd
}

// killProcessGroup kills the command and every process it started.
func killProcessGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	kill := exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(cmd.Process.Pid))
	if err := kill.Run(); err != nil {
		return cmd.Process.Kill()
	}
	return nil
}

// killLeftovers does nothing on Windows: once the shell was waited for its
// process id may be reused, and taskkill /T by id could hit a stranger.
func killLeftovers(*exec.Cmd) error { return nil }

// setGroup gives the command a process group of its own.
func setGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
}
