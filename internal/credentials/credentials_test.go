package credentials

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

type fakeOS struct {
	m    map[string]string
	fail bool
}

func (f *fakeOS) available() bool { return true }
func (f *fakeOS) name() string    { return "fake keychain" }
func (f *fakeOS) get(n string) (string, error) {
	v, ok := f.m[n]
	if !ok {
		return "", errors.New("not found")
	}
	return v, nil
}
func (f *fakeOS) set(n, v string) error {
	if f.fail {
		return errors.New("locked")
	}
	f.m[n] = v
	return nil
}
func (f *fakeOS) del(n string) error { delete(f.m, n); return nil }

func TestFileStore(t *testing.T) {
	home := t.TempDir()
	s := Open(home, FileKey, "")
	where, err := s.Set("DEEPSEEK_API_KEY", "sk-file-123")
	if err != nil || !strings.Contains(where, File) {
		t.Fatalf("Set: %q %v", where, err)
	}
	if v, ok := Open(home, FileKey, "").Get("DEEPSEEK_API_KEY"); !ok || v != "sk-file-123" {
		t.Errorf("Get = %q %v", v, ok)
	}
	if runtime.GOOS != "windows" {
		fi, _ := os.Stat(filepath.Join(home, File))
		if fi.Mode().Perm() != 0o600 {
			t.Errorf("mode %v", fi.Mode())
		}
	}
	get := Lookup(func(k string) string {
		if k == "FROM_ENV" {
			return "env"
		}
		return ""
	}, s)
	if get("FROM_ENV") != "env" || get("DEEPSEEK_API_KEY") != "sk-file-123" || get("NOPE") != "" {
		t.Error("Lookup order wrong")
	}
	if err := s.Delete("DEEPSEEK_API_KEY"); err != nil || len(s.Names()) != 0 {
		t.Errorf("Delete: %v %v", err, s.Names())
	}
}

func TestAutoPrefersOSStoreAndFallsBack(t *testing.T) {
	home := t.TempDir()
	f := &fakeOS{m: map[string]string{}}
	s := &Store{home: home, kind: Auto, os: f}
	if where, err := s.Set("K", "sk-os-456"); err != nil || where != "fake keychain" {
		t.Fatalf("Set: %q %v", where, err)
	}
	data, _ := os.ReadFile(filepath.Join(home, File))
	if strings.Contains(string(data), "sk-os-456") {
		t.Error("a keychain key was written to the file")
	}
	if v, ok := s.Get("K"); !ok || v != "sk-os-456" {
		t.Errorf("Get %q", v)
	}
	f.fail = true
	if where, err := s.Set("K2", "sk-fallback"); err != nil || !strings.Contains(where, File) {
		t.Errorf("fallback: %q %v", where, err)
	}
	strict := &Store{home: home, kind: Keyring, os: f}
	if _, err := strict.Set("K3", "v"); err == nil {
		t.Error("keyring kind fell back to the file")
	}
}

// InOSStore says yes where a key is in the OS store, or new ones go
// there, and no for a file store that never put one there.
func TestInOSStore(t *testing.T) {
	home := t.TempDir()
	f := &fakeOS{m: map[string]string{}}
	file := &Store{home: home, kind: FileKey, os: f}
	if _, err := file.Set("K", "sk-file"); err != nil {
		t.Fatal(err)
	}
	if file.InOSStore() {
		t.Error("a file store with file keys reported the OS store")
	}
	if !(&Store{home: t.TempDir(), kind: Auto, os: f}).InOSStore() {
		t.Error("auto with an OS store reachable: new keys go there")
	}
	if _, err := (&Store{home: home, kind: Keyring, os: f}).Set("K2", "sk-os"); err != nil {
		t.Fatal(err)
	}
	if !file.InOSStore() {
		t.Error("a key kept in the OS store was not reported once the kind is file")
	}
}

// Lock excludes another holder (another process's open of the lock
// file) until it is released.
func TestLockExcludes(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" && runtime.GOOS != "windows" {
		t.Skip("no file locks on this platform")
	}
	s := Open(t.TempDir(), FileKey, "")
	unlock, err := s.Lock()
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan struct{})
	go func() {
		u, err := Open(s.home, FileKey, "").Lock()
		if err == nil {
			u()
		}
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("a second holder got the lock while the first held it")
	case <-time.After(200 * time.Millisecond):
	}
	unlock()
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the lock was not handed on")
	}
}

// Writers in several processes (and goroutines of this one) that store
// and delete at once lose none of each other's entries: each change of
// the index is made under its lock, also by a writer that holds the
// refresh lock meanwhile, as a run keeping a refreshed sign-in does.
func TestConcurrentWritersLoseNothing(t *testing.T) {
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" && runtime.GOOS != "windows" {
		t.Skip("no file locks on this platform")
	}
	if testing.Short() {
		t.Skip("spawns processes")
	}
	home := t.TempDir()
	const procs, goroutines = 4, 2
	var cmds []*exec.Cmd
	for p := range procs {
		cmd := exec.Command(os.Args[0], "-test.run=^TestWriterProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "CREDENTIALS_WRITER="+home+"\n"+fmt.Sprint("p", p))
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("writer %d:\n%s", p, out.String())
			}
		})
	}
	var wg sync.WaitGroup
	errs := make([]error, goroutines)
	for g := range goroutines {
		wg.Go(func() { errs[g] = write(home, fmt.Sprint("g", g)) })
	}
	wg.Wait()
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("writer process: %v", err)
		}
	}
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	var want []string
	for p := range procs {
		want = append(want, writerKeys(fmt.Sprint("p", p))...)
	}
	for g := range goroutines {
		want = append(want, writerKeys(fmt.Sprint("g", g))...)
	}
	s := Open(home, FileKey, "")
	got := s.Names()
	if len(got) != len(want) {
		t.Errorf("%d names kept, want %d", len(got), len(want))
	}
	for _, k := range want {
		if v, ok := s.Get(k); !ok || v != "v-"+k {
			t.Errorf("%s: %q %v (lost)", k, v, ok)
		}
	}
}

// writerRounds is how many entries each writer keeps.
const writerRounds = 25

func writerKeys(who string) []string {
	out := make([]string, writerRounds)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", who, i)
	}
	return out
}

// write is one writer: it stores its keys, every fifth under the
// refresh lock, and stores and deletes a scratch key between them.
func write(home, who string) error {
	s := Open(home, FileKey, "")
	for i, k := range writerKeys(who) {
		if i%5 == 0 {
			unlock, err := s.Lock()
			if err != nil {
				return err
			}
			_, err = s.Set(k, "v-"+k)
			unlock()
			if err != nil {
				return err
			}
			continue
		}
		if _, err := s.Set(k, "v-"+k); err != nil {
			return err
		}
		scratch := who + "-scratch"
		if _, err := s.Set(scratch, "x"); err != nil {
			return err
		}
		if err := s.Delete(scratch); err != nil {
			return err
		}
	}
	return nil
}

// TestWriterProcess is one writer process of
// TestConcurrentWritersLoseNothing.
func TestWriterProcess(t *testing.T) {
	env := os.Getenv("CREDENTIALS_WRITER")
	if env == "" {
		t.Skip("helper for TestConcurrentWritersLoseNothing")
	}
	home, who, _ := strings.Cut(env, "\n")
	if err := write(home, who); err != nil {
		t.Fatal(err)
	}
}
