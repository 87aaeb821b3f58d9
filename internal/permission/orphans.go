package permission

import (
	"os/exec"
	"sync"
)

// Orphans ends what a confined command leaves running behind it. A
// process that leaves the command's process group (setsid, or a new
// group of its own) outlives the group kill at the command's end and,
// with Reasonix gone, goes on writing the workspace unwatched: a git hook
// it plants there runs unconfined at the person's next commit.
//
// On Linux, while the sandbox is enforced, Reasonix becomes a child
// subreaper (PR_SET_CHILD_SUBREAPER): a descendant whose parent exits is
// handed to Reasonix, not to init. After each confined command ends, and
// at Close, Sweep looks at Reasonix's children. One that the sandbox did
// not start itself and that runs under more seccomp filters than
// Reasonix does (the sandbox's filter, which no process can remove) came
// out of a confined command: it is killed with its process group and
// reaped, and so are the children it leaves in turn. Elsewhere, or where
// the kernel does not report filter counts, it does nothing.
//
// One Orphans serves every [Sandbox] of a process (SandboxOptions.Orphans):
// each one's commands must be known to the sweep, which would otherwise
// take a command another sandbox started for a leftover.
type Orphans struct {
	mu sync.Mutex
	// known maps the pid of each confined command the sandboxes started
	// to its start time, so that a leftover given a reused pid is not
	// taken for that command.
	known map[int]uint64
	// base is Reasonix's own seccomp filter count; -1 turns sweeping off.
	// It is found, and the process made a subreaper, before the first
	// command starts (setUp): a process that runs none pays nothing.
	setUp  sync.Once
	base   int
	closed bool
	sweeps sync.WaitGroup
	// notify, when set, is told of each sweep that ended leftovers.
	notify func(n int)

	// quiet is held for writing while a confined command starts and for
	// reading while Quiet runs its function: no command starts meanwhile.
	quiet sync.RWMutex
	// live counts the confined commands started whose end has not been
	// swept yet (under mu): while one lives, or what it left, the
	// workspace's folders may be swapped for symlinks at any moment.
	live int
	// untracked is set (under mu) once a confined command started that no
	// sweep follows (no filter count): from then on nothing is quiet.
	untracked bool
}

// NewOrphans returns the sweeper a process's sandboxes share; the
// process becomes a child subreaper at their first command. notify, when
// set, is told how many leftovers a sweep ended.
func NewOrphans(notify func(n int)) *Orphans {
	return &Orphans{known: map[int]uint64{}, base: -1, notify: notify}
}

// prepare makes the process a subreaper and finds the filter count of its
// unconfined threads, once, before the first command; it is called on
// the goroutine that starts the command, not the restricted thread.
func (o *Orphans) prepare() {
	if o == nil {
		return
	}
	o.setUp.Do(func() {
		base := becomeSubreaper()
		o.mu.Lock()
		o.base = base
		o.mu.Unlock()
	})
}

// start starts cmd and records it as a confined command, under the lock
// a sweep holds: a sweep between the two would take the new command for
// a leftover.
func (o *Orphans) start(cmd *exec.Cmd) error {
	if o == nil {
		return cmd.Start()
	}
	o.quiet.Lock()
	defer o.quiet.Unlock()
	o.mu.Lock()
	if o.base < 0 {
		o.untracked = true
		o.mu.Unlock()
		return cmd.Start()
	}
	defer o.mu.Unlock()
	if err := cmd.Start(); err != nil {
		return err
	}
	o.known[cmd.Process.Pid] = startTime(cmd.Process.Pid)
	if endsWithParent(cmd) {
		// ended follows (startConfined waits for such a command).
		o.live++
	} else {
		o.untracked = true
	}
	return nil
}

// Quiet runs f, and reports true, only when no confined command is
// running or has left anything a sweep has not ended yet, and it keeps
// any from starting until f returns. An editor that serves a file tool
// (an ACP client's fs/read_text_file and fs/write_text_file) resolves the
// path itself, through symlinks: while a confined command runs it could
// swap a folder on that path for a symlink to a denied folder, between
// the guard's look and the editor's, and have the editor read or write
// there. A nil Orphans (no sandbox: commands are not confined) runs f.
func (o *Orphans) Quiet(f func()) bool {
	if o == nil {
		f()
		return true
	}
	o.quiet.RLock()
	defer o.quiet.RUnlock()
	o.mu.Lock()
	busy := o.live > 0 || o.untracked
	o.mu.Unlock()
	if busy {
		return false
	}
	f()
	return true
}

// ended starts a sweep after a confined command's process exited. It is
// called from the thread the command was started from, which is
// restricted, so the sweep runs on a goroutine of its own; Close waits
// for it.
func (o *Orphans) ended() {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed || o.base < 0 {
		return
	}
	o.sweeps.Add(1)
	go func() {
		defer o.sweeps.Done()
		o.Sweep()
		// The command and whatever it left outside its group are gone;
		// what it left in its group, its owner kills (killLeftovers), and
		// a process the group kill misses is the next sweep's.
		o.mu.Lock()
		o.live--
		o.mu.Unlock()
	}()
}

// Sweep kills and reaps the leftovers of confined commands among the
// process's children, and returns how many it ended.
func (o *Orphans) Sweep() int {
	if o == nil {
		return 0
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.base < 0 {
		return 0
	}
	n := sweep(o.known, o.base)
	if n > 0 && o.notify != nil {
		o.notify(n)
	}
	return n
}

// Close waits for the sweeps under way and sweeps once more: Reasonix is
// leaving, and what confined commands left must not outlive it. Jobs and
// commands still running are ended by their owners before Close.
func (o *Orphans) Close() {
	if o == nil {
		return
	}
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
	o.sweeps.Wait()
	o.Sweep()
}
