package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestOpenErrors(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	file := filepath.Join(ws, "f")
	must(t, os.WriteFile(file, nil, 0o644))
	if _, err := Open(ws, Options{}); err == nil || !strings.Contains(err.Error(), "home") {
		t.Errorf("no home: %v", err)
	}
	if _, err := Open(file, Options{Home: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("workspace is a file: %v", err)
	}
	if _, err := Open(filepath.Join(ws, "missing"), Options{Home: t.TempDir()}); err == nil {
		t.Error("missing workspace: want an error")
	}

	// Something else where the store would go.
	home := t.TempDir()
	st, err := Open(ws, Options{Home: home})
	must(t, err)
	dir := st.Dir()
	if !strings.HasPrefix(dir, filepath.Join(home, "checkpoints")+string(filepath.Separator)) || len(filepath.Base(dir)) != 16 {
		t.Errorf("store directory %s", dir)
	}
	must(t, os.RemoveAll(dir))
	write(t, dir, "photos/cat.jpg", "meow")
	if _, err := Open(ws, Options{Home: home}); !errors.Is(err, ErrNotStore) || !strings.Contains(err.Error(), "photos") {
		t.Errorf("foreign directory: %v", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("Open changed a directory that is not its own: %v", ents)
	}
	must(t, os.RemoveAll(dir))
	must(t, os.WriteFile(dir, []byte("x"), 0o644))
	if _, err := Open(ws, Options{Home: home}); !errors.Is(err, ErrNotStore) {
		t.Errorf("a file in the way: %v", err)
	}
	must(t, os.Remove(dir))
	// Another workspace's store (a copied home, or a key collision).
	write(t, dir, markerFile, `{"format":"reasonix checkpoint store","version":1,"workspace":"/elsewhere"}`)
	if _, err := Open(ws, Options{Home: home}); !errors.Is(err, ErrNotStore) || !strings.Contains(err.Error(), "/elsewhere") {
		t.Errorf("other workspace: %v", err)
	}
	write(t, dir, markerFile, `{"format":"reasonix checkpoint store","version":99,"workspace":"x"}`)
	if _, err := Open(ws, Options{Home: home}); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("newer format: %v", err)
	}
	write(t, dir, markerFile, `not json`)
	if _, err := Open(ws, Options{Home: home}); !errors.Is(err, ErrNotStore) {
		t.Errorf("garbled marker: %v", err)
	}
	// A creation cut short by a crash: the marker is synced with the first
	// checkpoint, so the store's directories, the lock and blobs may be
	// there with the marker empty (or zero bytes, or gone). Open finishes
	// it; with a manifest inside it was not ours.
	for _, marker := range []string{"", "\x00\x00\x00", "-"} {
		must(t, os.RemoveAll(dir))
		if marker != "-" {
			write(t, dir, markerFile, marker)
		}
		write(t, dir, "blobs/ab/"+strings.Repeat("ab", 32), "x")
		write(t, dir, lockFile, "")
		must(t, os.MkdirAll(filepath.Join(dir, manifestsDir), 0o700))
		st, err := Open(ws, Options{Home: home})
		if err != nil {
			t.Errorf("interrupted creation (marker %q): %v", marker, err)
			continue
		}
		if b, err := os.ReadFile(filepath.Join(dir, markerFile)); err != nil || !strings.Contains(string(b), storeFormat) {
			t.Errorf("interrupted creation (marker %q): marker now %q, %v", marker, b, err)
		}
		if !st.fresh {
			t.Errorf("interrupted creation (marker %q): the new marker is not synced with the first checkpoint", marker)
		}
	}
	must(t, os.RemoveAll(dir))
	write(t, dir, markerFile, "")
	write(t, dir, manifestsDir+"/20260101-000000-abcdef"+manifestExt, "{}")
	if _, err := Open(ws, Options{Home: home}); !errors.Is(err, ErrNotStore) {
		t.Errorf("an empty marker beside a manifest: %v", err)
	}
	// A leftover temporary file alone does not make a directory foreign.
	must(t, os.RemoveAll(dir))
	write(t, dir, tmpPrefix+"123", "")
	if _, err := Open(ws, Options{Home: home}); err != nil {
		t.Errorf("store with only a temp file: %v", err)
	}
	// The same workspace through a symlink is the same store.
	if link := filepath.Join(t.TempDir(), "ln"); os.Symlink(ws, link) == nil {
		st2, err := Open(link, Options{Home: home})
		must(t, err)
		if st2.Dir() != dir {
			t.Errorf("through a symlink: %s, want %s", st2.Dir(), dir)
		}
	}
}

func TestBadIDs(t *testing.T) {
	t.Parallel()
	ws, st := newStore(t, map[string]string{"a.txt": "a\n"})
	cp := checkpoint(t, st, Labels{})
	for _, id := range []string{"", "nope", "../x", ".tmp-1", "20000101-000000-abcdef", cp.ID + "x"} {
		if _, err := st.Get(id); !errors.Is(err, ErrNotFound) {
			t.Errorf("Get(%q): %v", id, err)
		}
		if _, err := st.Restore(ctx, id, Labels{}); !errors.Is(err, ErrNotFound) {
			t.Errorf("Restore(%q): %v", id, err)
		}
	}
	if m, err := st.Get(cp.ID[:10]); err != nil || m.ID != cp.ID {
		t.Errorf("unique prefix: %v", err)
	}
	write(t, ws, "a.txt", "b\n")
	checkpoint(t, st, Labels{})
	if _, err := st.Get(cp.ID[:4]); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Errorf("ambiguous prefix: %v", err)
	}
}

// TestCrashLeftovers: temporary files a crash leaves in the store are
// ignored, damaged manifests are reported, and Prune clears both.
func TestCrashLeftovers(t *testing.T) {
	t.Parallel()
	ws, st := newStore(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	cp := checkpoint(t, st, Labels{})
	m, _ := st.Get(cp.ID)
	h := m.Files[0].Hash
	strays := []string{
		filepath.Join(st.Dir(), manifestsDir, tmpPrefix+"42"),
		filepath.Join(st.Dir(), blobsDir, h[:2], tmpPrefix+"43"),
		filepath.Join(st.Dir(), blobsDir, tmpPrefix+"44"),
		filepath.Join(st.Dir(), tmpPrefix+"45"),
	}
	for _, p := range strays {
		must(t, os.WriteFile(p, []byte(`{"format":"reasonix checkpoint","half":`), 0o600))
	}
	// A manifest cut short (as a disk might leave it after a power loss),
	// and one whose header is garbage.
	write(t, ws, "b.txt", "b2\n")
	cut := checkpoint(t, st, Labels{}).ID
	data, err := os.ReadFile(st.manifestPath(cut))
	must(t, err)
	must(t, os.WriteFile(st.manifestPath(cut), data[:len(data)-20], 0o600))
	must(t, os.WriteFile(st.manifestPath("20000101-000000-dead00"), []byte("\x00\x00"), 0o600))

	list, err := st.List("")
	must(t, err)
	if len(list) != 2 || list[0].ID != cut || list[1].ID != cp.ID {
		t.Errorf("List: %+v", list)
	}
	for _, id := range []string{cut, "20000101-000000-dead00"} {
		if _, err := st.Get(id); err == nil || !strings.Contains(err.Error(), "damaged manifest") {
			t.Errorf("Get of a damaged manifest: %v", err)
		}
	}
	write(t, ws, "a.txt", "changed\n")
	r := restore(t, st, cp.ID)
	if strings.Join(r.Restored, ",") != "a.txt,b.txt" {
		t.Errorf("restore with leftovers: %+v", r)
	}
	pr, err := st.Prune(10)
	must(t, err)
	if pr.TempFiles != len(strays) || len(pr.Removed) != 0 || strings.Join(pr.Damaged, ",") != "20000101-000000-dead00,"+cut {
		t.Errorf("prune: %+v", pr)
	}
	for _, p := range strays {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s survived Prune", p)
		}
	}
}

func TestDamagedBlob(t *testing.T) {
	t.Parallel()
	ws, st := newStore(t, map[string]string{"a.txt": "precious\n"})
	cp := checkpoint(t, st, Labels{})
	m, _ := st.Get(cp.ID)
	must(t, os.WriteFile(st.blobPath(m.Files[0].Hash), []byte("garbage\n"), 0o600))
	write(t, ws, "a.txt", "other\n")
	_, err := st.Restore(ctx, cp.ID, Labels{})
	if err == nil || !strings.Contains(err.Error(), "damaged") || !strings.Contains(err.Error(), "a.txt") {
		t.Fatalf("want a damaged-content error naming a.txt, got %v", err)
	}
	if got := tree(t, ws)["a.txt"]; !strings.HasSuffix(got, "other\n") {
		t.Errorf("a damaged blob overwrote the file: %q", got)
	}
}

func TestPrune(t *testing.T) {
	t.Parallel()
	ws, st := newStore(t, map[string]string{"keep.txt": "same in all\n"})
	var ids []string
	for i := range 5 {
		write(t, ws, "v.txt", fmt.Sprintf("version %d\n", i))
		ids = append(ids, checkpoint(t, st, Labels{Session: "s", Turn: i + 1}).ID)
	}
	if _, err := st.Prune(-1); err == nil {
		t.Error("Prune(-1): want an error")
	}
	pr, err := st.Prune(2)
	must(t, err)
	if strings.Join(pr.Removed, ",") != strings.Join([]string{ids[2], ids[1], ids[0]}, ",") || pr.Blobs != 3 || pr.Bytes != 30 {
		t.Fatalf("prune: %+v", pr)
	}
	list, _ := st.List("")
	if len(list) != 2 || list[0].ID != ids[4] || list[1].ID != ids[3] {
		t.Fatalf("left: %+v", list)
	}
	restore(t, st, ids[3])
	if got := tree(t, ws)["v.txt"]; !strings.HasSuffix(got, "version 3\n") {
		t.Errorf("restore after prune: %q", got)
	}
	// Prune(0) drops everything, the stat cache's vouching included: the
	// next checkpoint must store the contents again.
	if _, err := st.Prune(0); err != nil {
		t.Fatal(err)
	}
	age(t, ws)
	cp := checkpoint(t, st, Labels{})
	if cp.Hashed != 2 || cp.NewBlobs != 2 {
		t.Fatalf("after Prune(0): %+v", cp)
	}
	write(t, ws, "keep.txt", "x")
	restore(t, st, cp.ID)
	if got := tree(t, ws)["keep.txt"]; !strings.HasSuffix(got, "same in all\n") {
		t.Errorf("restore after Prune(0): %q", got)
	}
}

// TestConcurrentProcesses: stores opened separately (as two processes
// would) checkpoint, restore and prune at once without corrupting anything.
func TestConcurrentProcesses(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf("d%d/f%d.txt", i%5, i)] = fmt.Sprintf("content %d\n", i)
	}
	ws, st := newStore(t, files)
	home := filepath.Dir(filepath.Dir(st.Dir()))
	first := checkpoint(t, st, Labels{})
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for p := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(ws, Options{Home: home})
			if err != nil {
				errs <- err
				return
			}
			for i := range 5 {
				switch {
				case p == 0 && i == 2:
					_, err = s.Prune(3)
				case p == 1 && i == 3:
					_, err = s.Preview(ctx, first.ID)
				case p == 2 && i == 1:
					_, err = s.Restore(ctx, first.ID, Labels{})
				default:
					_, err = s.Checkpoint(ctx, Labels{Session: fmt.Sprint(p), Turn: i})
				}
				if err != nil && !errors.Is(err, ErrNotFound) { // first may be pruned already
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	list, err := st.List("")
	must(t, err)
	for _, info := range list {
		m, err := st.Get(info.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range m.Files {
			if !st.hasBlob(f.Hash) {
				t.Fatalf("%s: %s references missing content", info.ID, f.Path)
			}
		}
	}
	write(t, ws, "d0/f0.txt", "changed")
	rep := restore(t, st, list[0].ID)
	if strings.Join(rep.Restored, ",") != "d0/f0.txt" {
		t.Errorf("restore: %+v", rep)
	}
}

func TestHomeInsideWorkspace(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	write(t, ws, "a.txt", "a\n")
	st, err := Open(ws, Options{Home: filepath.Join(ws, "home")})
	must(t, err)
	cp := checkpoint(t, st, Labels{})
	if cp.NumFiles != 1 {
		t.Fatalf("the store checkpointed itself: %d files", cp.NumFiles)
	}
	cp2 := checkpoint(t, st, Labels{})
	r := restore(t, st, cp.ID)
	if len(r.Removed) != 0 || cp2.NumFiles != 1 {
		t.Errorf("restore removed the store: %+v", r)
	}
}

func TestOptionsIgnore(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"a.txt": "a", "node_modules/m/i.js": "x", "vendor/.gitignore": "!keep.js\n", "vendor/keep.js": "k", "vendor/drop.js": "d"})
	st, err := Open(ws, Options{Home: t.TempDir(), Ignore: []string{"node_modules/", "*.js"}})
	must(t, err)
	m, err := st.Get(checkpoint(t, st, Labels{}).ID)
	must(t, err)
	var paths []string
	for _, f := range m.Files {
		paths = append(paths, f.Path)
	}
	if strings.Join(paths, ",") != "a.txt,vendor/.gitignore,vendor/keep.js" {
		t.Errorf("files: %q", paths)
	}
}

// TestEnclosingRepository: a workspace below a repository's top follows the
// .gitignore files above it and the repository's info/exclude.
func TestEnclosingRepository(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	writeFiles(t, top, map[string]string{
		".git/info/exclude":  "*.local\n",
		".gitignore":         "*.o\n",
		"ws/a.c":             "int a;\n",
		"ws/a.o":             "obj",
		"ws/me.local":        "mine",
		"ws/sub/.git/HEAD":   "nested repository internals",
		"ws/sub/vendored.go": "package sub\n",
	})
	st, err := Open(filepath.Join(top, "ws"), Options{Home: t.TempDir()})
	must(t, err)
	m, err := st.Get(checkpoint(t, st, Labels{}).ID)
	must(t, err)
	var paths []string
	for _, f := range m.Files {
		paths = append(paths, f.Path)
	}
	if strings.Join(paths, ",") != "a.c,sub/vendored.go" {
		t.Errorf("files: %q", paths)
	}
}

// TestMultiProcess runs checkpoints and prunes in separate processes (this
// test binary, re-run as a helper) against one store.
func TestMultiProcess(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("spawns processes")
	}
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("f%d.txt", i)] = fmt.Sprint(i)
	}
	ws, st := newStore(t, files)
	home := filepath.Dir(filepath.Dir(st.Dir()))
	var cmds []*exec.Cmd
	for p := range 3 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
		cmd.Env = append(os.Environ(), "CHECKPOINT_HELPER="+ws+"\n"+home+"\n"+fmt.Sprint(p))
		var out strings.Builder
		cmd.Stdout, cmd.Stderr = &out, &out
		must(t, cmd.Start())
		cmds = append(cmds, cmd)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("helper %d:\n%s", p, out.String())
			}
		})
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("helper: %v", err)
		}
	}
	list, err := st.List("")
	must(t, err)
	if len(list) < 3 {
		t.Fatalf("%d checkpoints left", len(list))
	}
	for _, info := range list {
		m, err := st.Get(info.ID)
		must(t, err)
		for _, f := range m.Files {
			if !st.hasBlob(f.Hash) {
				t.Fatalf("%s: %s references missing content", info.ID, f.Path)
			}
		}
	}
}

func TestHelperProcess(t *testing.T) {
	env := os.Getenv("CHECKPOINT_HELPER")
	if env == "" {
		t.Skip("helper for TestMultiProcess")
	}
	parts := strings.Split(env, "\n")
	st, err := Open(parts[0], Options{Home: parts[1]})
	must(t, err)
	for i := range 6 {
		if parts[2] == "0" && i == 3 {
			_, err = st.Prune(3)
		} else {
			_, err = st.Checkpoint(ctx, Labels{Session: parts[2], Turn: i})
		}
		must(t, err)
	}
}

func TestMissingBlobRefusesUpfront(t *testing.T) {
	t.Parallel()
	ws, st := newStore(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	cp := checkpoint(t, st, Labels{})
	m, _ := st.Get(cp.ID)
	must(t, os.Remove(st.blobPath(m.Files[1].Hash)))
	write(t, ws, "a.txt", "A\n")
	write(t, ws, "b.txt", "B\n")
	write(t, ws, "c.txt", "C\n")
	before := tree(t, ws)
	_, err := st.Restore(ctx, cp.ID, Labels{})
	if err == nil || !strings.Contains(err.Error(), "b.txt") || !strings.Contains(err.Error(), "lacks") {
		t.Fatalf("want a refusal naming b.txt, got %v", err)
	}
	if d := diffTrees(before, tree(t, ws)); d != "" {
		t.Errorf("a refused restore changed the workspace:\n%s", d)
	}
}
