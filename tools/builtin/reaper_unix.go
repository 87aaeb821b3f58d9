//go:build !windows

package builtin

import (
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
)

// A bash command runs in a process group of its own. If Reasonix dies
// without a chance to clean up (kill -9, a crash), the shell itself dies
// with it (Pdeathsig, on Linux), but what the shell started would live on.
// So one small watcher process, outside every command's group, serves the
// whole Reasonix process: Reasonix writes it a line as each group starts
// ("+ pgid") and as each one ends empty ("- pgid"), over a pipe whose
// only writer is Reasonix; the kernel closes that pipe however Reasonix
// ends, and the watcher then kills every group still on its list. One
// watcher rather than one per command: starting a shell costs about as
// much as the command `true` itself.

// watcherScript keeps the list of groups from its stdin and kills them at
// end of file. Group ids are decimal numbers written by Reasonix alone.
const watcherScript = `g=' '
while read -r op p; do
	case $op in
	+) g="$g$p " ;;
	-) case $g in *" $p "*) g="${g%% $p *} ${g#* $p }" ;; esac ;;
	esac
done
for p in $g; do kill -KILL "-$p" 2>/dev/null; done`

// groups is the process's watcher and the groups it was told of. The
// watcher lives as long as the process: it is started on the first
// command and never stopped; it ends by itself when Reasonix does.
var groups struct {
	mu sync.Mutex
	// w is the write end of the watcher's stdin (nil before the first
	// command, or after the watcher was found dead).
	w *os.File
	// listed are the groups on the watcher's list.
	listed map[int]bool
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
	if groups.listed == nil {
		groups.listed = map[int]bool{}
	}
	// Groups left running by earlier commands that have since ended come
	// off the list: their ids may be reused by groups that are not ours.
	for g := range groups.listed {
		if syscall.Kill(-g, 0) == syscall.ESRCH {
			delete(groups.listed, g)
			_ = tell('-', g)
		}
	}
	groups.listed[pgid] = true
	if tell('+', pgid) != nil {
		delete(groups.listed, pgid)
		return nil
	}
	return &reaper{pgid: pgid}
}

// tell writes one line to the watcher; when there is none, or the one
// there was has died, it starts one, which is told of every listed group
// instead. The caller holds groups.mu, with groups.listed already
// updated.
func tell(op byte, pgid int) error {
	line := fmt.Appendf(nil, "%c %d\n", op, pgid)
	for attempt := 0; attempt < 2; attempt++ {
		if groups.w == nil {
			// A new watcher is told of the listed groups, which the
			// caller has already brought up to date.
			return startWatcher()
		}
		if _, err := groups.w.Write(line); err == nil {
			return nil
		}
		groups.w.Close()
		groups.w = nil
	}
	return fmt.Errorf("the process-group watcher keeps dying")
}

// prepareWatcher starts the watcher ahead of a command (bash's Prepare),
// when none runs: the command's group is then on its list as soon as the
// command has started, not one shell start later, which left a window in
// which a kill -9 of Reasonix let the group live on.
func prepareWatcher() {
	groups.mu.Lock()
	defer groups.mu.Unlock()
	if groups.w == nil {
		_ = startWatcher() // an error comes again at the command
	}
}

// startWatcher starts the watcher and tells it of every listed group. The
// caller holds groups.mu.
func startWatcher() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close() // the watcher's copy is enough: a write fails once it is gone
	cmd := exec.Command("/bin/sh", "-c", watcherScript, "reasonix-reaper")
	cmd.Stdin = r
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Dir = "/"
	// Its own group: neither a command's kill 0 nor a terminal's ^C
	// reaches it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return err
	}
	// Never waited for while Reasonix runs; released so nothing tracks it.
	_ = cmd.Process.Release()
	for g := range groups.listed {
		if _, err := fmt.Fprintf(w, "+ %d\n", g); err != nil {
			w.Close()
			return err
		}
	}
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
	if groups.listed[r.pgid] {
		delete(groups.listed, r.pgid)
		_ = tell('-', r.pgid)
	}
}
