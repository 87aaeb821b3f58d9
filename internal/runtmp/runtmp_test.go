package runtmp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// deadPID returns the id of a process that has exited.
func deadPID(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	if err := cmd.Run(); err != nil {
		t.Fatalf("run a short process: %v", err)
	}
	return cmd.Process.Pid
}

func TestSweepRemovesOnlyAbandonedDirectories(t *testing.T) {
	root := t.TempDir()
	old := time.Now().Add(-time.Hour)
	mk := func(name string, mtime time.Time) string {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Join(p, "sub"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dead := deadPID(t)
	abandoned := mk(fmt.Sprintf("reasonix-run-%d-111", dead), old)
	young := mk(fmt.Sprintf("reasonix-run-%d-222", dead), time.Now())
	mine := mk(fmt.Sprintf("reasonix-run-%d-333", os.Getpid()), old)
	legacy := mk("reasonix-run-4444", old) // no process id in the name
	other := mk("something-else-1-2", old)

	if n := Sweep(root, time.Now()); n != 1 {
		t.Errorf("Sweep removed %d directories, want 1", n)
	}
	if _, err := os.Stat(abandoned); !os.IsNotExist(err) {
		t.Errorf("abandoned directory still there (err %v)", err)
	}
	for _, p := range []string{young, mine, legacy, other} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed: %v", filepath.Base(p), err)
		}
	}
}

func TestNewNamesTheProcessAndMakeMakesTheDirectory(t *testing.T) {
	root := t.TempDir()
	d := New(root)
	dir := d.Path()
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Fatalf("%s exists before Make: %v", dir, err)
	}
	if err := d.Make(); err != nil {
		t.Fatal(err)
	}
	if err := d.Make(); err != nil {
		t.Fatalf("a second Make: %v", err)
	}
	if filepath.Dir(dir) != root {
		t.Errorf("%s is not in %s", dir, root)
	}
	pid, ok := pidOf(filepath.Base(dir))
	if !ok || pid != os.Getpid() {
		t.Errorf("%s: pid %d ok %v, want %d", dir, pid, ok, os.Getpid())
	}
	if !strings.HasPrefix(filepath.Base(dir), prefix) {
		t.Errorf("%s lacks the prefix", dir)
	}
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("%s: %v, %v; want a private directory", dir, fi, err)
	}
	if other := New(root); other.Path() == dir {
		t.Errorf("two directories named %s", dir)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if !d.Remove() {
		t.Error("Remove reported a directory it made as not made")
	}
	if _, err := os.Lstat(dir); !os.IsNotExist(err) {
		t.Errorf("%s is still there after Remove: %v", dir, err)
	}
}

// A name something else already has is not used, and Remove leaves it; a
// directory never made is not made by Remove, nor by a Make after it.
func TestMakeRefusesATakenNameAndRemoveLeavesIt(t *testing.T) {
	root := t.TempDir()
	d := New(root)
	if err := os.Mkdir(d.Path(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := d.Make(); err == nil {
		t.Fatal("Make reported no error for a name that was taken")
	}
	if d.Remove() {
		t.Error("Remove reported a directory this process did not make as made")
	}
	if _, err := os.Stat(d.Path()); err != nil {
		t.Errorf("Remove removed a directory this process did not make: %v", err)
	}
	unused := New(root)
	if unused.Remove() {
		t.Error("Remove of a directory never made reported it made")
	}
	if err := unused.Make(); err == nil {
		t.Error("Make after Remove made the directory")
	}
	if _, err := os.Lstat(unused.Path()); !os.IsNotExist(err) {
		t.Errorf("%s exists: %v", unused.Path(), err)
	}
}
