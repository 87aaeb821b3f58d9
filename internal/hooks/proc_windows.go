//go:build windows

package hooks

import (
	"os/exec"
	"strconv"
	"syscall"

	"github.com/reasonix/reasonix/internal/lookpath"
)

// shellCommand runs a hook's command line with bash (Git for Windows) when
// installed, cmd.exe otherwise, in a process group of its own.
// bash is never one found on PATH inside workspace (internal/lookpath).
func shellCommand(line, workspace string) *exec.Cmd {
	if p, err := lookpath.Outside("bash", workspace); err == nil {
		cmd := exec.Command(p, "-c", line)
		cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP}
		return cmd
	}
	cmd := exec.Command("cmd.exe")
	cmd.SysProcAttr = &syscall.SysProcAttr{
		CmdLine:       `cmd.exe /S /C "` + line + `"`,
		CreationFlags: syscall.CREATE_NEW_PROCESS_GROUP,
	}
	return cmd
}

// killGroup kills the hook and every process it started.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process == nil {
		return
	}
	if err := exec.Command("taskkill", "/T", "/F", "/PID", strconv.Itoa(cmd.Process.Pid)).Run(); err != nil {
		_ = cmd.Process.Kill()
	}
}
