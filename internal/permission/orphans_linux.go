package permission

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// becomeSubreaper makes the process a child subreaper and returns its own
// seccomp filter count, or -1 (sweeping off) when the kernel does not
// report that count (before Linux 5.9) or refuses. It must run on a thread
// no command was started from: the count is the calling thread's, since
// the process's first thread may itself have started a command (a Go
// program's threads are not told apart) and carry the sandbox's filter.
func becomeSubreaper() int {
	n := seccompFilters("thread-self")
	if n < 0 {
		return -1
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return -1
	}
	return n
}

// endsWithParent reports whether cmd was started to be killed when its
// starting thread ends (a confined command's Pdeathsig).
func endsWithParent(cmd *exec.Cmd) bool {
	return cmd.SysProcAttr != nil && cmd.SysProcAttr.Pdeathsig != 0
}

// seccompFilters is the Seccomp_filters count /proc reports for pid, -1
// when it reports none.
func seccompFilters(pid string) int {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		return -1
	}
	_, rest, ok := bytes.Cut(b, []byte("\nSeccomp_filters:"))
	if !ok {
		return -1
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	n, err := strconv.Atoi(strings.TrimSpace(string(line)))
	if err != nil {
		return -1
	}
	return n
}

// startTime is pid's start time in clock ticks since boot (field 22 of
// /proc/PID/stat), 0 when it cannot be read.
func startTime(pid int) uint64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) may hold spaces and parentheses: the
	// fields after it start after its last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return 0
	}
	st, _ := strconv.ParseUint(f[19], 10, 64) // field 22: the 20th after the name
	return st
}

// children lists the process's children, from each thread's children
// file (a reparented process is the child of one of the threads). The
// task folder is listed by name only and each file read once: a Glob
// stats every match besides.
func children() []int {
	d, err := os.Open("/proc/self/task")
	if err != nil {
		return nil
	}
	tids, _ := d.Readdirnames(-1)
	d.Close()
	var out []int
	for _, tid := range tids {
		f, err := os.Open("/proc/self/task/" + tid + "/children")
		if err != nil {
			continue
		}
		b, _ := io.ReadAll(f)
		f.Close()
		for _, w := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(w); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}

// sweep kills and reaps each child that is not a known confined command
// and runs under more seccomp filters than base, until a pass finds none
// (killing one hands its own children to this process). It forgets known
// commands that are gone.
func sweep(known map[int]uint64, base int) int {
	killed := 0
	for pass := 0; pass < 16; pass++ {
		n := 0
		for _, pid := range children() {
			if st, ok := known[pid]; ok && st == startTime(pid) {
				continue
			}
			if seccompFilters(strconv.Itoa(pid)) <= base {
				continue // not from a confined command: the process's own
			}
			if pg, err := unix.Getpgid(pid); err == nil && pg == pid {
				_ = unix.Kill(-pid, unix.SIGKILL)
			}
			_ = unix.Kill(pid, unix.SIGKILL)
			var ws unix.WaitStatus
			for {
				if _, err := unix.Wait4(pid, &ws, 0, nil); err != unix.EINTR {
					break
				}
			}
			n++
		}
		killed += n
		if n == 0 {
			break
		}
	}
	for pid, st := range known {
		if startTime(pid) != st {
			delete(known, pid)
		}
	}
	return killed
}
