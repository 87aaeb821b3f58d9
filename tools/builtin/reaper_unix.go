//go:build !windows

package builtin

import (
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
)

// A bash command runs in a process group of its own. If Reasonix dies
// without a chance to clean up (kill -9, a crash), the shell itself dies
// with it (Pdeathsig, on Linux), but what the shell started would live on.
// So one small watcher process, outside every command's group, serves the
// whole Reasonix process. It waits for end of file on a pipe whose only
// writer is Reasonix, which never writes to it: the kernel closes that
// pipe however Reasonix ends. The watcher then kills every group on the
// list Reasonix keeps in a file they share, written in place (pwrite) as
// each group starts and as each one ends empty. One watcher rather than
// one per command: starting a shell costs about as much as the command
// `true` itself. And the list is a file rather than lines sent to the
// watcher, so a command costs two small writes, not two wake-ups of the
// watcher and a one-byte read per character there.

// The list is an array of slots of slotSize bytes, each one line: "+"
// and a group id while the group is listed, "-" once it is not. A group
// takes a free slot and gives it back, so the file never grows past the
// most groups listed at once, and each change is one write of one whole
// slot, which the watcher can never read half done: it reads the list
// only after Reasonix has ended.
const slotSize = 16

// watcherScript blocks until its stdin ends, then kills the groups listed
// in the file on descriptor 3. Group ids are decimal numbers written by
// Reasonix alone.
const watcherScript = `while read -r _; do :; done
while read -r op p; do
	case $op in +) kill -KILL "-$p" 2>/dev/null ;; esac
done <&3`

// groups is the process's watcher and the groups on its list. The watcher
// lives as long as the process: it is started on the first command and
// never stopped; it ends by itself when Reasonix does.
var groups struct {
	mu sync.Mutex
	// w is the write end of the watcher's stdin (nil before the first
	// command, or after the watcher was found dead); pid is the watcher's.
	w   *os.File
	pid int
	// list is the file of slots the watcher reads at the end; slot holds
	// the slot of each listed group, free the slots given back, and used
	// how many slots the file has.
	list *os.File
	slot map[int]int
	free []int
	used int
}

// reaper is one command's place on the watcher's list.
type reaper struct {
	pgid int
}

// watchGroup puts the process group pgid on the watcher's list, starting
// the watcher if need be; nil when it cannot (the command then only has
// Pdeathsig and the normal cleanup).
func watchGroup(pgid int) *reaper {
	groups.mu.Lock()
	defer groups.mu.Unlock()
	if err := ensureWatcher(); err != nil {
		return nil
	}
	// Groups left running by earlier commands that have since ended come
	// off the list: their ids may be reused by groups that are not ours.
	for g := range groups.slot {
		if syscall.Kill(-g, 0) == syscall.ESRCH {
			unlist(g)
		}
	}
	if err := list(pgid); err != nil {
		return nil
	}
	return &reaper{pgid: pgid}
}

// list writes pgid into a free slot. The caller holds groups.mu.
func list(pgid int) error {
	if _, ok := groups.slot[pgid]; ok {
		return nil
	}
	i := groups.used
	if n := len(groups.free); n > 0 {
		i, groups.free = groups.free[n-1], groups.free[:n-1]
	} else {
		groups.used++
	}
	if err := writeSlot(i, '+', pgid); err != nil {
		groups.free = append(groups.free, i)
		return err
	}
	groups.slot[pgid] = i
	return nil
}

// unlist marks pgid's slot free. The caller holds groups.mu.
func unlist(pgid int) {
	i, ok := groups.slot[pgid]
	if !ok {
		return
	}
	delete(groups.slot, pgid)
	if writeSlot(i, '-', pgid) == nil {
		groups.free = append(groups.free, i)
	}
	// A slot that could not be written keeps the group: the watcher may
	// then kill a group id that is reused by then, as before any list.
}

// writeSlot writes slot i as "op pgid", padded to slotSize.
func writeSlot(i int, op byte, pgid int) error {
	var b [slotSize]byte
	line := strconv.AppendInt(append(b[:0], op, ' '), int64(pgid), 10)
	if len(line) >= slotSize {
		return fmt.Errorf("process group id %d is too long for the list", pgid)
	}
	for k := len(line); k < slotSize-1; k++ {
		b[k] = ' '
	}
	b[slotSize-1] = '\n'
	_, err := groups.list.WriteAt(b[:], int64(i)*slotSize)
	return err
}

// prepareWatcher starts the watcher ahead of a command (bash's Prepare),
// when none runs: the command's group is then on its list as soon as the
// command has started, not one shell start later, which left a window in
// which a kill -9 of Reasonix let the group live on.
func prepareWatcher() {
	groups.mu.Lock()
	defer groups.mu.Unlock()
	_ = ensureWatcher() // an error comes again at the command
}

// ensureWatcher makes sure a watcher runs: it starts one when there is
// none or the one there was has ended (a command may kill it). A new one
// reads the same list. The caller holds groups.mu.
func ensureWatcher() error {
	if groups.w != nil {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(groups.pid, &ws, syscall.WNOHANG, nil)
		if pid == 0 || err == syscall.EINTR {
			return nil // still running
		}
		groups.w.Close()
		groups.w = nil
	}
	if groups.list == nil {
		f, err := listFile()
		if err != nil {
			return err
		}
		groups.list, groups.slot = f, map[int]int{}
	}
	return startWatcher()
}

// startWatcher starts the watcher on the list. The caller holds groups.mu.
func startWatcher() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close() // the watcher has its copy
	cmd := exec.Command("/bin/sh", "-c", watcherScript, "reasonix-reaper")
	cmd.Stdin = r
	cmd.ExtraFiles = []*os.File{groups.list}
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Dir = "/"
	// Its own group: neither a command's kill 0 nor a terminal's ^C
	// reaches it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return err
	}
	// Waited for only by ensureWatcher, with WNOHANG, to find it dead.
	groups.pid = cmd.Process.Pid
	_ = cmd.Process.Release()
	groups.w = w
	return nil
}

// done is called after the shell exited. When nothing is left in the
// group it comes off the watcher's list; otherwise it stays, so
// background children still die when Reasonix ends.
func (r *reaper) done() {
	if r == nil {
		return
	}
	if syscall.Kill(-r.pgid, 0) != syscall.ESRCH {
		return
	}
	groups.mu.Lock()
	defer groups.mu.Unlock()
	unlist(r.pgid)
}

// tempListFile is an unnamed temporary file for the list, where there is
// no memory file: created and removed at once.
func tempListFile() (*os.File, error) {
	f, err := os.CreateTemp("", "reasonix-reaper-*")
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
