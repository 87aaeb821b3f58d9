//go:build !windows

package builtin

import (
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
)

// A bash command runs in a process group of its own. If Reasonix dies
// without a chance to clean up (kill -9, a crash), the shell itself dies
// with it (Pdeathsig, on Linux), but what the shell started would live on.
// So each command gets a small watcher process, outside its group: it
// waits for end of file on a pipe whose only writer is Reasonix, which
// the kernel closes however Reasonix ends, and then kills the group.

// lifeline is that pipe. Its write end stays open, unused, for the life
// of the process: it is created once, on the first command, and never
// closed.
var lifeline struct {
	once sync.Once
	r, w *os.File
	err  error
}

// reaperScript waits for the pipe on its stdin to close and kills the
// process group named by its first argument.
const reaperScript = `read -r _; kill -KILL "-$1" 2>/dev/null`

// reaper is the watcher of one command's process group.
type reaper struct {
	cmd  *exec.Cmd
	pgid int
}

// watchGroup starts the watcher for the process group pgid; nil when it
// cannot (the command then only has Pdeathsig and the normal cleanup).
func watchGroup(pgid int) *reaper {
	lifeline.once.Do(func() { lifeline.r, lifeline.w, lifeline.err = os.Pipe() })
	if lifeline.err != nil {
		return nil
	}
	cmd := exec.Command("/bin/sh", "-c", reaperScript, "reaper", strconv.Itoa(pgid))
	cmd.Stdin = lifeline.r
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Dir = "/"
	// Its own group: neither the command's kill 0 nor a terminal's ^C
	// reaches it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil
	}
	return &reaper{cmd: cmd, pgid: pgid}
}

// done is called after the shell exited. When nothing is left in the
// group the watcher is stopped; otherwise it stays, so background
// children still die when Reasonix ends.
func (r *reaper) done() {
	if r == nil {
		return
	}
	if err := syscall.Kill(-r.pgid, 0); err == syscall.ESRCH {
		_ = r.cmd.Process.Kill()
		_ = r.cmd.Wait()
	}
}
