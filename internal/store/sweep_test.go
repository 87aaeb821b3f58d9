package store

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
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

// TestSweepTempsRemovesOnlyAbandonedFiles: a temporary file is removed
// when its process is gone and it is a minute old, or when it is a day
// old; one a running process may still be writing, a young one, and
// every file that is not a temporary file of the store stay.
func TestSweepTempsRemovesOnlyAbandonedFiles(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	mk := func(name string, age time.Duration) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("{\"id\":"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	dead, self, parent := deadPID(t), os.Getpid(), os.Getppid()
	gone := []string{
		fmt.Sprintf(".e-1.jsonl.tmp%d-123", dead),   // its process was killed
		".e-2.jsonl.tmp4567",                        // an older version's, a day old
		fmt.Sprintf(".e-3.jsonl.tmp%d-123", parent), // a running process's, but a day old
		fmt.Sprintf(".plan.json.tmp%d-99", dead),    // WriteFileAtomic's
	}
	mk(gone[0], 2*time.Minute)
	mk(gone[1], 25*time.Hour)
	mk(gone[2], 25*time.Hour)
	mk(gone[3], time.Hour)
	kept := []string{
		fmt.Sprintf(".e-4.jsonl.tmp%d-123", dead),   // killed, but younger than a minute
		fmt.Sprintf(".e-5.jsonl.tmp%d-123", self),   // this process's own
		fmt.Sprintf(".e-6.jsonl.tmp%d-123", parent), // a running process's
		".e-7.jsonl.tmp4567",                        // an older version's, an hour old
		"e-8.jsonl",                                 // sessions
		"e-8.archive.jsonl",
		".gitignore",
		".notes.tmpold",                        // not a name the store makes
		fmt.Sprintf("e-9.jsonl.tmp%d-1", dead), // not hidden
	}
	mk(kept[0], 0)
	mk(kept[1], 2*time.Minute)
	mk(kept[2], 2*time.Minute)
	mk(kept[3], time.Hour)
	for _, n := range kept[4:] {
		mk(n, 48*time.Hour)
	}
	// A directory named like one is not the store's.
	if err := os.Mkdir(filepath.Join(dir, fmt.Sprintf(".x.tmp%d-1", dead)), 0o700); err != nil {
		t.Fatal(err)
	}
	kept = append(kept, fmt.Sprintf(".x.tmp%d-1", dead))
	old := now.Add(-48 * time.Hour)
	os.Chtimes(filepath.Join(dir, kept[len(kept)-1]), old, old)

	if n := SweepTemps(dir, now); n != len(gone) {
		t.Errorf("SweepTemps removed %d, want %d", n, len(gone))
	}
	ents, _ := os.ReadDir(dir)
	var left []string
	for _, e := range ents {
		left = append(left, e.Name())
	}
	sort.Strings(left)
	sort.Strings(kept)
	if fmt.Sprint(left) != fmt.Sprint(kept) {
		t.Errorf("left %v\nwant %v", left, kept)
	}
	if n := SweepTemps(filepath.Join(dir, "missing"), now); n != 0 {
		t.Errorf("a missing directory: %d removed", n)
	}
}

// TestTempNamesCarryTheProcess: the temporary file renameInto makes is
// one SweepTemps recognises, with this process's id, so it is never
// taken for an abandoned one while this process runs.
func TestTempNamesCarryTheProcess(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), tempPattern("e-1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if pid, ok := tempPID(filepath.Base(f.Name())); !ok || pid != os.Getpid() {
		t.Fatalf("tempPID(%s) = %d %v, want %d", filepath.Base(f.Name()), pid, ok, os.Getpid())
	}
	if SweepTemps(filepath.Dir(f.Name()), time.Now().Add(time.Hour)) != 0 {
		t.Fatal("this process's own temporary file was swept")
	}
}
