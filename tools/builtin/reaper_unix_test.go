//go:build !windows

package builtin

import (
	"bufio"
	"fmt"
	"github.com/reasonix/reasonix/tools"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestWatcherScriptList: the watcher waits for the end of its stdin and
// then kills the groups listed in the slots of its list, those only, each
// once: a slot given back, or given to another group, kills nothing more.
func TestWatcherScriptList(t *testing.T) {
	f, err := listFile()
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	groups.mu.Lock()
	saved, savedSlot := groups.list, groups.slot
	groups.list = f
	for i, s := range []struct {
		op   byte
		pgid int
	}{{'-', 11}, {'+', 22}, {'-', 4194304}, {'+', 4194304}, {'+', 33}} {
		if err := writeSlot(i, s.op, s.pgid); err != nil {
			t.Fatal(err)
		}
	}
	groups.list, groups.slot = saved, savedSlot
	groups.mu.Unlock()
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("/bin/sh", "-c", `kill() { echo "$2"; }; `+watcherScript)
	cmd.Stdin, cmd.ExtraFiles = pr, []*os.File{f}
	out := make(chan []byte, 1)
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pr.Close()
	go func() { _ = cmd.Wait(); out <- []byte(stdout.String()) }()
	select {
	case b := <-out:
		t.Fatalf("the watcher ended before its stdin did, printing %q", b)
	case <-time.After(200 * time.Millisecond):
	}
	pw.Close()
	got := strings.Fields(string(<-out))
	if want := []string{"-22", "-4194304", "-33"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("killed %v, want %v", got, want)
	}
}

// TestReaperOneWatcherKillsOnKill9: a process running several commands
// has one watcher for all of them; when it is killed with SIGKILL, the
// background children left by two of them die too, and the watcher ends.
func TestReaperOneWatcherKillsOnKill9(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc to find the watcher")
	}
	t.Parallel()
	dir := t.TempDir()
	helper := exec.Command(os.Args[0], "-test.run=^TestReaperHelper$")
	helper.Env = append(os.Environ(), "REAPER_HELPER_DIR="+dir)
	stdout, err := helper.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	defer helper.Process.Kill()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	var children []int
	for _, f := range strings.Fields(strings.TrimPrefix(line, "children ")) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("helper said %q", line)
		}
		children = append(children, pid)
		defer syscall.Kill(pid, syscall.SIGKILL)
	}
	if len(children) != 2 {
		t.Fatalf("helper said %q", line)
	}
	watchers := childrenNamed(t, helper.Process.Pid, "/bin/sh")
	if len(watchers) != 1 {
		t.Fatalf("%d watcher processes for 5 commands (2 with children left), want 1", len(watchers))
	}
	for _, c := range children {
		if !running(c) {
			t.Fatalf("background child %d is not running before the kill", c)
		}
	}
	if err := helper.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = helper.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for _, p := range append(children, watchers[0]) {
		for running(p) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	}
	for _, c := range children {
		if running(c) {
			t.Errorf("background child %d outlived the killed process", c)
		}
	}
	if running(watchers[0]) {
		t.Error("the watcher outlived the killed process")
	}
}

// TestReaperHelper is the process TestReaperOneWatcherKillsOnKill9 kills:
// three commands that end, two that leave a child in the background; it
// prints the children's pids and waits. Between the two, its watcher is
// killed (as a command could): the next command starts another, which
// kills the first child too, from the same list.
func TestReaperHelper(t *testing.T) {
	dir := os.Getenv("REAPER_HELPER_DIR")
	if dir == "" {
		t.Skip("run by TestReaperOneWatcherKillsOnKill9")
	}
	pidFile := filepath.Join(dir, "pid")
	for i := range 5 {
		if i == 2 {
			groups.mu.Lock()
			pid := groups.pid
			groups.mu.Unlock()
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			for running(pid) {
				time.Sleep(5 * time.Millisecond)
			}
		}
		script := "true"
		if i == 1 || i == 3 {
			script = "sleep 600 >/dev/null 2>&1 & echo $! >> " + pidFile
		}
		cmd := shellCommand(shellSpec{}, script)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r := watchGroup(cmd.Process.Pid)
		if r == nil {
			t.Fatal("no watcher")
		}
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
		r.done()
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("children %s\n", strings.Join(strings.Fields(string(b)), " "))
	time.Sleep(time.Minute)
}

// TestReaperForgetsEndedGroups: a group whose shell ended with nothing
// left comes off the list at once; one that left a child stays until the
// child has ended, and comes off at the next command.
func TestReaperForgetsEndedGroups(t *testing.T) {
	start := func(script string) (*exec.Cmd, *reaper) {
		t.Helper()
		cmd := shellCommand(shellSpec{}, script)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		r := watchGroup(cmd.Process.Pid)
		if r == nil {
			t.Fatal("no watcher")
		}
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
		r.done()
		return cmd, r
	}
	listed := func(pgid int) bool {
		groups.mu.Lock()
		defer groups.mu.Unlock()
		_, ok := groups.slot[pgid]
		return ok
	}
	_, r := start("true")
	if listed(r.pgid) {
		t.Error("a group that ended empty is still listed")
	}
	_, r = start("sleep 0.3 >/dev/null 2>&1 &")
	if !listed(r.pgid) {
		t.Fatal("a group with a child still running is not listed")
	}
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(-r.pgid, 0) != syscall.ESRCH; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the background child did not end")
		}
	}
	start("true")
	if listed(r.pgid) {
		t.Error("a group whose last child ended is still listed after the next command")
	}
}

// childrenNamed returns the pids of parent's children whose command line
// contains name.
func childrenNamed(t *testing.T, parent int, name string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		s := string(stat)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) < 2 || f[1] != strconv.Itoa(parent) {
			continue
		}
		cl, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if strings.Contains(string(cl), name) {
			out = append(out, pid)
		}
	}
	return out
}

// running reports whether pid runs (a zombie counts as ended).
func running(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}

// TestPrepareStartsTheWatcher: bash's Prepare (run while the session
// checks a call) starts the process-group watcher, so the command that
// follows is on its list as soon as it starts, told over the same pipe.
func TestPrepareStartsTheWatcher(t *testing.T) {
	bashTool{}.Prepare(&tools.Env{})
	groups.mu.Lock()
	w := groups.w
	groups.mu.Unlock()
	if w == nil {
		t.Fatal("no watcher after Prepare")
	}
	cmd := shellCommand(shellSpec{}, "true")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := watchGroup(cmd.Process.Pid)
	_ = cmd.Wait()
	r.done()
	groups.mu.Lock()
	defer groups.mu.Unlock()
	if r == nil || groups.w != w {
		t.Errorf("the command was not told to the watcher Prepare started (reaper %v)", r)
	}
}
