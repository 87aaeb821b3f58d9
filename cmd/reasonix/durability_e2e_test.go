//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/providers/scripted"
)

// needStrace skips the test when strace cannot trace here (not
// installed, or ptrace refused in a container).
func needStrace(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("strace"); err != nil {
		t.Skip("strace is not installed")
	}
	if out, err := exec.Command("strace", "-o", os.DevNull, "true").CombinedOutput(); err != nil {
		t.Skipf("strace cannot trace here: %v %s", err, out)
	}
}

// straceRun runs `reasonix args...` in the repository under strace,
// following every thread, with file descriptors shown as their paths
// (-y), and returns the trace's lines. Opts go to strace before the
// command (an injection).
func (e *e2e) straceRun(t *testing.T, opts []string, args ...string) (lines []string, out string, err error) {
	t.Helper()
	log := filepath.Join(t.TempDir(), "strace.log")
	full := append([]string{"-f", "-y", "-s", "16", "-o", log,
		"-e", "trace=openat,write,fsync,fdatasync,rename,renameat,renameat2"}, opts...)
	cmd := exec.Command("strace", append(append(full, binPath), args...)...)
	cmd.Dir, cmd.Env = e.repo, e.env
	b, err := cmd.CombinedOutput()
	raw, rerr := os.ReadFile(log)
	if rerr != nil {
		t.Fatalf("strace log: %v (%v %s)", rerr, err, b)
	}
	return strings.Split(string(raw), "\n"), string(b), err
}

var renameLine = regexp.MustCompile(`\brename(?:at2?)?\(.*?"([^"]+)".*?"([^"]+)"`)

// renamedDurably checks in a trace that the file final was made by a
// rename of a temporary file beside it that was synced before the
// rename (its descriptor still shows the temporary name), and that its
// directory was synced after; it returns the temporary file's name.
func renamedDurably(t *testing.T, lines []string, final string) string {
	t.Helper()
	r, tmp := -1, ""
	for i, l := range lines {
		if m := renameLine.FindStringSubmatch(l); m != nil && m[2] == final {
			r, tmp = i, m[1]
			break
		}
	}
	if r < 0 {
		t.Fatalf("no rename into %s in the trace", final)
	}
	if filepath.Dir(tmp) != filepath.Dir(final) || !strings.HasPrefix(filepath.Base(tmp), "."+filepath.Base(final)+".tmp") {
		t.Errorf("%s was renamed from %s, not a hidden temporary file beside it", final, tmp)
	}
	synced := func(path string, from, to int) bool {
		for _, l := range lines[from:to] {
			if regexp.MustCompile(`\bf(?:data)?sync\(\d+<` + regexp.QuoteMeta(path) + `>`).MatchString(l) {
				return true
			}
		}
		return false
	}
	if !synced(tmp, 0, r) {
		t.Errorf("the temporary file %s was not synced before its rename to %s; the trace up to the rename ends:\n%s",
			tmp, final, strings.Join(lines[max(0, r-6):r+1], "\n"))
	}
	if !synced(filepath.Dir(final), r, len(lines)) {
		t.Errorf("the directory %s was not synced after the rename to %s", filepath.Dir(final), final)
	}
	return tmp
}

// realRepo is e's repository as the kernel names it (strace's -y).
func realRepo(t *testing.T, e *e2e) string {
	p, err := filepath.EvalSymlinks(e.repo)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestE2ESessionFileIsDurableBeforeItIsNamed: a new session file is
// written beside its name, synced, and only then renamed into place, so
// a power cut leaves the name holding the prompt or no file at all,
// never an empty one; the sessions directory is synced after the rename
// (by the first step's sync, behind the run), so the name lasts too.
// The temporary file's name carries the process id, which the sweep of
// abandoned ones reads.
func TestE2ESessionFileIsDurableBeforeItIsNamed(t *testing.T) {
	needStrace(t)
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "one"})
	lines, out, err := e.straceRun(t, nil, "run", "first question")
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(e.repo, ".reasonix", "sessions", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("session files %v", files)
	}
	final := filepath.Join(realRepo(t, e), ".reasonix", "sessions", filepath.Base(files[0]))
	tmp := renamedDurably(t, lines, final)
	pid, _, _ := strings.Cut(lines[0], " ")
	if !regexp.MustCompile(`\.tmp` + pid + `-\d+$`).MatchString(tmp) {
		t.Errorf("temporary file %s does not carry the process id %s", tmp, pid)
	}
}

// TestE2EForkIsWrittenWhole: `reasonix fork` makes the new session the
// way a run makes one, whole through a synced temporary file and a
// rename, and never writes into it under its name, where a crash would
// leave a fork cut short.
func TestE2EForkIsWrittenWhole(t *testing.T) {
	needStrace(t)
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "one"}, scripted.Turn{Text: "two"})
	if r := e.run("", "run", "first question"); r.code != 0 {
		t.Fatalf("first: %d %s", r.code, r.stderr)
	}
	if r := e.run("", "run", "--continue", "second question"); r.code != 0 {
		t.Fatalf("second: %d %s", r.code, r.stderr)
	}
	files, _ := filepath.Glob(filepath.Join(e.repo, ".reasonix", "sessions", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("session files %v", files)
	}
	id := strings.TrimSuffix(filepath.Base(files[0]), ".jsonl")
	lines, out, err := e.straceRun(t, nil, "fork", id)
	forked := strings.TrimSpace(strings.SplitN(out, "\n", 2)[0])
	if err != nil || !strings.HasPrefix(forked, "e-") {
		t.Fatalf("fork: %v\n%s", err, out)
	}
	final := filepath.Join(realRepo(t, e), ".reasonix", "sessions", forked+".jsonl")
	renamedDurably(t, lines, final)
	for _, l := range lines {
		if strings.Contains(l, "write(") && strings.Contains(l, "<"+final+">") {
			t.Errorf("the fork was written to under its name: %s", l)
		}
	}
	l, err := store.Load(final)
	if err != nil || store.Turns(l.Messages) != 2 || l.Meta.Turns != 2 || l.Header.ForkOf != id || len(l.Messages) != 4 {
		t.Fatalf("the fork: %v %+v", err, l)
	}
}

// TestE2EAbandonedTemporaryFilesAreSwept: a run killed between a session
// file's temporary file and its rename leaves the temporary file; a
// later run removes it as it exits, once it is a minute old, and keeps
// those a running process may still be writing (its process is alive,
// or the file is younger than a minute) and every other file.
func TestE2EAbandonedTemporaryFilesAreSwept(t *testing.T) {
	needStrace(t)
	t.Parallel()
	// Killed on entering the session file's rename, its third: the first
	// two put the project's seal folder and the session's seal in place
	// (store.Seals). strace counts a thread's calls, not the process's,
	// and the Go scheduler may move the run to another thread between
	// them, so a run the count missed is tried again in a fresh project.
	var e *e2e
	var dir, out string
	var left []string
	for try := 0; try < 8 && len(left) != 1; try++ {
		e = newE2E(t, scripted.Turn{Text: "never stored"})
		var err error
		_, out, err = e.straceRun(t, []string{"-e", "inject=rename,renameat,renameat2:error=EIO:signal=SIGKILL:when=3"}, "run", "first question")
		dir = filepath.Join(e.repo, ".reasonix", "sessions")
		left, _ = filepath.Glob(filepath.Join(dir, ".e-*.jsonl.tmp*"))
		if err == nil {
			left = nil // not killed: the count was split between threads
		}
	}
	if len(left) != 1 {
		t.Fatalf("temporary files after the kill: %v\n%s", left, out)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl")); len(files) != 0 {
		t.Fatalf("session files after a kill before the rename: %v", files)
	}
	killed := filepath.Base(left[0])
	i := strings.LastIndex(killed, ".tmp")
	pid, _, _ := strings.Cut(killed[i+len(".tmp"):], "-")
	if _, err := strconv.Atoi(pid); err != nil {
		t.Fatalf("temporary file %s carries no process id", killed)
	}
	plant := func(name string, age time.Duration) {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(`{"type":"session"`), 0o600); err != nil {
			t.Fatal(err)
		}
		at := time.Now().Add(-age)
		if err := os.Chtimes(p, at, at); err != nil {
			t.Fatal(err)
		}
	}
	// The killed run's file, as it will be two minutes on.
	at := time.Now().Add(-2 * time.Minute)
	if err := os.Chtimes(left[0], at, at); err != nil {
		t.Fatal(err)
	}
	plant(".e-2.jsonl.tmp123456", 48*time.Hour) // an older version's, two days old
	young := fmt.Sprintf(".e-3.jsonl.tmp%s-1", pid)
	plant(young, 0)
	live := fmt.Sprintf(".e-4.jsonl.tmp%d-1", os.Getpid()) // this test is alive
	plant(live, 2*time.Minute)
	plant(".notes.tmp", 48*time.Hour)
	e.write(".reasonix/plans/.p1.json.tmp"+pid+"-7", "{")
	os.Chtimes(filepath.Join(e.repo, ".reasonix", "plans", ".p1.json.tmp"+pid+"-7"), at, at)

	withScript(t, e, scripted.Turn{Text: "stored"})
	if r := e.run("", "run", "again"); r.code != 0 {
		t.Fatalf("run: %d %s", r.code, r.stderr)
	}
	var got []string
	ents, _ := os.ReadDir(dir)
	for _, ent := range ents {
		if strings.HasPrefix(ent.Name(), ".") && ent.Name() != ".gitignore" {
			got = append(got, ent.Name())
		}
	}
	want := []string{young, live, ".notes.tmp"}
	slices.Sort(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("hidden files left in sessions: %v, want %v", got, want)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl")); len(files) != 1 {
		t.Errorf("session files %v, want the second run's", files)
	}
	if names, _ := filepath.Glob(filepath.Join(e.repo, ".reasonix", "plans", ".*")); len(names) != 0 {
		t.Errorf("plans holds %v, want the abandoned temporary file gone", names)
	}
}
