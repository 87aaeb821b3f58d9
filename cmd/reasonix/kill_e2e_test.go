//go:build !windows

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/reasonix/reasonix/providers/scripted"
)

// TestE2EKill9KillsTheRunningCommand: when Reasonix is killed with
// SIGKILL in the middle of a bash call, the shell and what it started in
// the background die too, with the sandbox on and off.
func TestE2EKill9KillsTheRunningCommand(t *testing.T) {
	for _, sandbox := range []string{"enforce", "off"} {
		t.Run(sandbox, func(t *testing.T) {
			t.Parallel()
			e := newE2E(t, scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{
				"command": `sleep 600 & echo $$ $! > pids; sleep 600`})}},
				scripted.Turn{Text: "done"})
			e.writeUserConfig("[sandbox]\nbash = \"" + sandbox + "\"\n")
			cmd := exec.Command(binPath, "run", "wait for it", "--yolo")
			cmd.Dir, cmd.Env = e.repo, e.env
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer cmd.Process.Kill()
			pidsFile := filepath.Join(e.repo, "pids")
			var pids []int
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				b, err := os.ReadFile(pidsFile)
				if err != nil || !strings.HasSuffix(string(b), "\n") {
					continue
				}
				for _, f := range strings.Fields(string(b)) {
					n, err := strconv.Atoi(f)
					if err != nil {
						t.Fatalf("pids file: %q", b)
					}
					pids = append(pids, n)
				}
				break
			}
			if len(pids) != 2 {
				t.Fatal("the command never started")
			}
			for _, p := range pids {
				if !alive(p) {
					t.Fatalf("process %d is not running before the kill", p)
				}
			}
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			_ = cmd.Wait()
			deadline := time.Now().Add(10 * time.Second)
			for _, p := range pids {
				for alive(p) && time.Now().Before(deadline) {
					time.Sleep(50 * time.Millisecond)
				}
				if alive(p) {
					syscall.Kill(p, syscall.SIGKILL)
					t.Errorf("process %d (of %v: shell, background child) outlived reasonix", p, pids)
				}
			}
		})
	}
}

// alive reports whether pid runs (a zombie waiting for init counts as dead).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return err != nil && !os.IsNotExist(err)
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
