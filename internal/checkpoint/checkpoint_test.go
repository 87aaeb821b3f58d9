package checkpoint

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

var ctx = context.Background()

// newStore returns a workspace holding files (slash path → content; a
// content starting with "->" makes a symlink) and its store, with every
// mtime an hour old, as in a workspace nobody touched lately.
func newStore(t testing.TB, files map[string]string) (string, *Store) {
	t.Helper()
	ws := t.TempDir()
	writeFiles(t, ws, files)
	age(t, ws)
	st, err := Open(ws, Options{Home: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return ws, st
}

func writeFiles(t testing.TB, ws string, files map[string]string) {
	t.Helper()
	for p, body := range files {
		abs := filepath.Join(ws, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
			t.Fatal(err)
		}
		if target, ok := strings.CutPrefix(body, "->"); ok {
			if err := os.Symlink(target, abs); err != nil {
				t.Skipf("symlinks: %v", err)
			}
			continue
		}
		if err := os.WriteFile(abs, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// age sets the mtime of every file below root an hour back.
func age(t testing.TB, root string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// tree describes everything below root, ignored files, .git and .reasonix
// included: path → "dir", "link → target" or "mode content".
func tree(t testing.TB, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel == "." {
			return nil
		}
		rel = filepath.ToSlash(rel)
		switch {
		case d.IsDir():
			out[rel] = "dir"
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			out[rel] = "link → " + target
		default:
			fi, err := d.Info()
			if err != nil {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			mode := ""
			if runtime.GOOS != "windows" {
				mode = fi.Mode().Perm().String() + " "
			}
			out[rel] = mode + string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diffTrees(want, got map[string]string) string {
	var b strings.Builder
	keys := map[string]bool{}
	for k := range want {
		keys[k] = true
	}
	for k := range got {
		keys[k] = true
	}
	var sorted []string
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		w, wok := want[k]
		g, gok := got[k]
		switch {
		case !wok:
			fmt.Fprintf(&b, "  extra %s: %q\n", k, g)
		case !gok:
			fmt.Fprintf(&b, "  missing %s: %q\n", k, w)
		case w != g:
			fmt.Fprintf(&b, "  %s: got %q, want %q\n", k, g, w)
		}
	}
	return b.String()
}

func checkpoint(t testing.TB, st *Store, l Labels) *Report {
	t.Helper()
	rep, err := st.Checkpoint(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func restore(t testing.TB, st *Store, id string) *RestoreReport {
	t.Helper()
	rep, err := st.Restore(ctx, id, Labels{Session: "s", Turn: 9})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func write(t testing.TB, ws, rel, body string) {
	t.Helper()
	writeFiles(t, ws, map[string]string{rel: body})
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	base := map[string]string{
		"README.md":        "# project\n",
		"src/main.go":      "package main\n",
		"src/util/u.go":    "package util\n",
		"crlf.txt":         "one\r\ntwo\r\n\r\n",
		"bin.dat":          "\x00\x01\xff\xfe\r\n\x00\n\r",
		"empty.txt":        "",
		"docs/a/b/deep.md": "deep\n",
	}
	unix := runtime.GOOS != "windows"
	cases := []struct {
		name     string
		unixOnly bool
		modify   func(t *testing.T, ws string)
		restored []string
		created  []string
		removed  []string
	}{
		{name: "edit", modify: func(t *testing.T, ws string) {
			write(t, ws, "src/main.go", "package main\n\nfunc main() {}\n")
			write(t, ws, "crlf.txt", "one\ntwo\n")
			write(t, ws, "bin.dat", "\x00\x00")
		}, restored: []string{"bin.dat", "crlf.txt", "src/main.go"}},
		{name: "same size edit", modify: func(t *testing.T, ws string) {
			write(t, ws, "README.md", "# PROJECT\n")
		}, restored: []string{"README.md"}},
		{name: "create through bash", modify: func(t *testing.T, ws string) {
			// os.WriteFile stands in for a shell command: no tool saw it.
			must(t, os.MkdirAll(filepath.Join(ws, "gen", "out"), 0o755))
			must(t, os.WriteFile(filepath.Join(ws, "gen", "out", "x.go"), []byte("package out\n"), 0o644))
			must(t, os.WriteFile(filepath.Join(ws, "new.txt"), nil, 0o600))
		}, removed: []string{"gen/out/x.go", "new.txt"}},
		{name: "delete", modify: func(t *testing.T, ws string) {
			must(t, os.Remove(filepath.Join(ws, "src", "main.go")))
			must(t, os.RemoveAll(filepath.Join(ws, "docs")))
			must(t, os.Remove(filepath.Join(ws, "empty.txt")))
		}, created: []string{"docs/a/b/deep.md", "empty.txt", "src/main.go"}},
		{name: "chmod", unixOnly: true, modify: func(t *testing.T, ws string) {
			must(t, os.Chmod(filepath.Join(ws, "src", "main.go"), 0o755))
			must(t, os.Chmod(filepath.Join(ws, "README.md"), 0o600))
		}, restored: []string{"README.md", "src/main.go"}},
		{name: "file becomes directory", modify: func(t *testing.T, ws string) {
			must(t, os.Remove(filepath.Join(ws, "README.md")))
			write(t, ws, "README.md/inner.txt", "x")
		}, restored: []string{"README.md"}, removed: []string{"README.md/inner.txt"}},
		{name: "directory becomes file", modify: func(t *testing.T, ws string) {
			must(t, os.RemoveAll(filepath.Join(ws, "src", "util")))
			write(t, ws, "src/util", "now a file")
		}, created: []string{"src/util/u.go"}, removed: []string{"src/util"}},
		{name: "file becomes symlink", unixOnly: true, modify: func(t *testing.T, ws string) {
			must(t, os.Remove(filepath.Join(ws, "README.md")))
			must(t, os.Symlink("src/main.go", filepath.Join(ws, "README.md")))
		}, restored: []string{"README.md"}},
		{name: "everything at once", modify: func(t *testing.T, ws string) {
			write(t, ws, "src/main.go", "changed")
			write(t, ws, "src/util/v.go", "package util // new\n")
			must(t, os.Remove(filepath.Join(ws, "crlf.txt")))
		}, restored: []string{"src/main.go"}, created: []string{"crlf.txt"}, removed: []string{"src/util/v.go"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.unixOnly && !unix {
				t.Skip("unix file modes and symlinks")
			}
			files := base
			if unix {
				files = map[string]string{"link": "->src/main.go"}
				for k, v := range base {
					files[k] = v
				}
			}
			ws, st := newStore(t, files)
			if unix {
				must(t, os.Chmod(filepath.Join(ws, "src", "util", "u.go"), 0o600))
			}
			before := tree(t, ws)
			cp := checkpoint(t, st, Labels{Session: "s", Turn: 1})
			if cp.NumFiles != len(files) {
				t.Errorf("checkpoint holds %d files, want %d", cp.NumFiles, len(files))
			}
			c.modify(t, ws)
			rep := restore(t, st, cp.ID)
			if d := diffTrees(before, tree(t, ws)); d != "" {
				t.Errorf("workspace differs from the checkpoint after restore:\n%s", d)
			}
			check := func(what string, got, want []string) {
				if strings.Join(got, ",") != strings.Join(want, ",") {
					t.Errorf("%s = %q, want %q", what, got, want)
				}
			}
			check("Restored", rep.Restored, c.restored)
			check("Created", rep.Created, c.created)
			check("Removed", rep.Removed, c.removed)
			check("Kept", rep.Kept, nil)
			// Restoring again changes nothing.
			again := restore(t, st, cp.ID)
			if n := len(again.Restored) + len(again.Created) + len(again.Removed); n != 0 {
				t.Errorf("second restore changed %d files: %+v", n, again)
			}
		})
	}
}

func TestIgnoredFilesUntouched(t *testing.T) {
	t.Parallel()
	ws, st := newStore(t, map[string]string{
		".gitignore":          "*.log\nbuild/\n!keep.log\n",
		"sub/.gitignore":      "!*.log\nlocal/\n",
		".git/HEAD":           "ref: refs/heads/main\n",
		".git/info/exclude":   "*.secret\n",
		".reasonix/plan.json": "{}",
		"main.go":             "package main\n",
		"a.log":               "ignored\n",
		"keep.log":            "tracked\n",
		"sub/b.log":           "tracked: negated below\n",
		"build/out.bin":       "ignored dir\n",
		"x.secret":            "excluded\n",
		"sub/local/y.txt":     "ignored\n",
	})
	cp := checkpoint(t, st, Labels{})
	m, err := st.Get(cp.ID)
	must(t, err)
	var paths []string
	for _, f := range m.Files {
		paths = append(paths, f.Path)
	}
	if want := ".gitignore keep.log main.go sub/.gitignore sub/b.log"; strings.Join(paths, " ") != want {
		t.Errorf("checkpoint holds %q, want %q", paths, want)
	}
	// Change ignored files, create new ones, touch .git and .reasonix.
	write(t, ws, "a.log", "changed\n")
	write(t, ws, "new.log", "new ignored\n")
	write(t, ws, "build/more.bin", "new in ignored dir\n")
	write(t, ws, "sub/local/z.txt", "new\n")
	write(t, ws, "y.secret", "new\n")
	write(t, ws, ".git/ORIG_HEAD", "abc\n")
	write(t, ws, ".reasonix/plan.json", `{"v":2}`)
	must(t, os.Remove(filepath.Join(ws, "build", "out.bin")))
	write(t, ws, "main.go", "changed\n")
	want := tree(t, ws)
	want["main.go"] = strings.Replace(want["main.go"], "changed\n", "package main\n", 1)
	rep := restore(t, st, cp.ID)
	if d := diffTrees(want, tree(t, ws)); d != "" {
		t.Errorf("restore touched ignored files:\n%s", d)
	}
	if strings.Join(rep.Restored, ",") != "main.go" || len(rep.Removed)+len(rep.Created) != 0 {
		t.Errorf("report: %+v", rep)
	}
}

// TestIgnoreRulesChangedSince: a file the checkpoint's .gitignore ignored
// is not removed when the rules no longer ignore it, and a file the
// checkpoint holds is not overwritten when ignored now.
func TestIgnoreRulesChangedSince(t *testing.T) {
	t.Parallel()
	ws, st := newStore(t, map[string]string{
		".gitignore": ".env\n",
		".env":       "SECRET=1\n",
		"notes.txt":  "v1\n",
	})
	cp := checkpoint(t, st, Labels{})
	write(t, ws, ".gitignore", "notes.txt\n") // .env tracked now, notes.txt ignored
	write(t, ws, "notes.txt", "v2, ignored now\n")
	rep := restore(t, st, cp.ID)
	got := tree(t, ws)
	if !strings.HasSuffix(got[".env"], "SECRET=1\n") || !strings.HasSuffix(got["notes.txt"], "v2, ignored now\n") {
		t.Errorf("files not in the undo checkpoint were changed: %q", got)
	}
	if !strings.HasSuffix(got[".gitignore"], ".env\n") {
		t.Errorf(".gitignore not restored: %q", got[".gitignore"])
	}
	if strings.Join(rep.Kept, ",") != ".env,notes.txt" || strings.Join(rep.Restored, ",") != ".gitignore" {
		t.Errorf("report: %+v", rep)
	}
}

func TestIncrementalHashing(t *testing.T) {
	t.Parallel()
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("pkg%d/f%03d.txt", i%7, i)] = fmt.Sprintf("file %d\n", i)
	}
	ws, st := newStore(t, files)
	var mu sync.Mutex
	var hashed []string
	st.testHook = func(rel string) {
		mu.Lock()
		hashed = append(hashed, rel)
		mu.Unlock()
	}
	take := func() []string {
		t.Helper()
		hashed = nil
		rep := checkpoint(t, st, Labels{})
		sort.Strings(hashed)
		if rep.Hashed != len(hashed) {
			t.Errorf("report says %d hashed, hook saw %d", rep.Hashed, len(hashed))
		}
		return hashed
	}
	if got := take(); len(got) != 300 {
		t.Fatalf("first checkpoint hashed %d files, want 300", len(got))
	}
	if got := take(); len(got) != 0 {
		t.Fatalf("unchanged workspace: hashed %q", got)
	}
	write(t, ws, "pkg1/f001.txt", "file 1 changed\n")
	write(t, ws, "pkg2/f002.txt", "FILE 2\n") // same size
	write(t, ws, "pkg0/new.txt", "new\n")
	must(t, os.Chmod(filepath.Join(ws, "pkg3", "f003.txt"), 0o600)) // mode only: no content read needed
	written := []string{"pkg0/new.txt", "pkg1/f001.txt", "pkg2/f002.txt"}
	want := written
	if runtime.GOOS == "linux" || runtime.GOOS == "darwin" {
		// chmod changes the ctime, so the file is read again.
		want = append(want[:3:3], "pkg3/f003.txt")
	}
	if got := take(); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("second checkpoint hashed %q, want %q", got, want)
	}
	// Files written moments ago are "racily clean": not trusted until
	// their mtime is old enough. The chmod'ed file's mtime is old.
	if got := take(); strings.Join(got, ",") != strings.Join(written, ",") {
		t.Fatalf("racy files: hashed %q, want %q", got, written)
	}
	age(t, ws)
	take() // the mtimes changed
	if got := take(); len(got) != 0 {
		t.Fatalf("after ageing: hashed %q", got)
	}
	// A stat cache that is damaged is only a slower checkpoint.
	must(t, os.WriteFile(filepath.Join(st.Dir(), statFile), []byte("reasonix statcache 1\ngarbage\n"), 0o600))
	if got := take(); len(got) != 301 {
		t.Fatalf("damaged cache: hashed %d, want 301", len(got))
	}
}

func TestUndoRestore(t *testing.T) {
	t.Parallel()
	ws, st := newStore(t, map[string]string{"a.txt": "a1\n", "b.txt": "b1\n"})
	cp := checkpoint(t, st, Labels{Session: "s1", Turn: 1})
	original := tree(t, ws)
	write(t, ws, "a.txt", "a2\n")
	write(t, ws, "c.txt", "c2\n")
	must(t, os.Remove(filepath.Join(ws, "b.txt")))
	modified := tree(t, ws)

	rep, err := st.Restore(ctx, cp.ID, Labels{Session: "s1", Turn: 3})
	must(t, err)
	if d := diffTrees(original, tree(t, ws)); d != "" {
		t.Fatalf("restore:\n%s", d)
	}
	undo, err := st.Get(rep.Undo)
	must(t, err)
	if undo.Restores != cp.ID || undo.Session != "s1" || undo.Turn != 3 || !strings.Contains(undo.Note, cp.ID) {
		t.Errorf("undo checkpoint info: %+v", undo.Info)
	}
	back := restore(t, st, rep.Undo)
	if d := diffTrees(modified, tree(t, ws)); d != "" {
		t.Fatalf("undo:\n%s", d)
	}
	if strings.Join(back.Restored, ",") != "a.txt" || strings.Join(back.Created, ",") != "c.txt" || strings.Join(back.Removed, ",") != "b.txt" {
		t.Errorf("undo report: %+v", back)
	}
	// And the undo is undoable too.
	restore(t, st, back.Undo)
	if d := diffTrees(original, tree(t, ws)); d != "" {
		t.Fatalf("redo:\n%s", d)
	}
}

func TestPreviewChangesNothing(t *testing.T) {
	t.Parallel()
	ws, st := newStore(t, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	cp := checkpoint(t, st, Labels{})
	write(t, ws, "a.txt", "A\n")
	write(t, ws, "c.txt", "c\n")
	must(t, os.Remove(filepath.Join(ws, "b.txt")))
	now := tree(t, ws)
	before, _ := st.List("")
	p, err := st.Preview(ctx, cp.ID)
	must(t, err)
	if d := diffTrees(now, tree(t, ws)); d != "" {
		t.Fatalf("preview changed the workspace:\n%s", d)
	}
	if after, _ := st.List(""); len(after) != len(before) || p.Undo != "" {
		t.Errorf("preview took a checkpoint")
	}
	r := restore(t, st, cp.ID)
	p.Undo = r.Undo
	if !reflect.DeepEqual(p, r) {
		t.Errorf("preview %+v\nrestore %+v", p, r)
	}
}

func TestSymlinks(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	outside := t.TempDir()
	write(t, outside, "secret.txt", "outside\n")
	ws, st := newStore(t, map[string]string{
		"target.txt":  "t\n",
		"dir/in.txt":  "in\n",
		"to-file":     "->target.txt",
		"to-dir":      "->dir",
		"dangling":    "->nowhere",
		"to-outside":  "->" + outside,
		"abs-in-repo": "->/etc/hostname",
	})
	cp := checkpoint(t, st, Labels{})
	m, err := st.Get(cp.ID)
	must(t, err)
	for _, f := range m.Files {
		if strings.HasPrefix(f.Path, "to-dir/") || strings.HasPrefix(f.Path, "to-outside/") {
			t.Errorf("followed a symlinked directory: %s", f.Path)
		}
	}
	before := tree(t, ws)
	must(t, os.Remove(filepath.Join(ws, "to-file")))
	must(t, os.Symlink("dir/in.txt", filepath.Join(ws, "to-file")))
	must(t, os.Remove(filepath.Join(ws, "dangling")))
	must(t, os.Remove(filepath.Join(ws, "to-dir")))
	must(t, os.Symlink(outside, filepath.Join(ws, "new-link")))
	rep := restore(t, st, cp.ID)
	if d := diffTrees(before, tree(t, ws)); d != "" {
		t.Fatalf("symlinks not restored:\n%s", d)
	}
	if strings.Join(rep.Restored, ",") != "to-file" || strings.Join(rep.Created, ",") != "dangling,to-dir" || strings.Join(rep.Removed, ",") != "new-link" {
		t.Errorf("report: %+v", rep)
	}
	if got := tree(t, outside); got["secret.txt"] != "-rw-r--r-- outside\n" {
		t.Errorf("outside the workspace changed: %q", got)
	}
}

// TestNoWriteThroughSymlink: a directory replaced by a symlink to somewhere
// else must not lead the restore outside the workspace.
func TestNoWriteThroughSymlink(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	outside := t.TempDir()
	ws, st := newStore(t, map[string]string{".gitignore": "/lib\n", "lib/x.txt": "x\n", "a.txt": "a\n"})
	write(t, ws, ".gitignore", "") // lib tracked
	cp := checkpoint(t, st, Labels{})
	write(t, ws, ".gitignore", "/lib\n") // now ignored, so restore cannot remove it
	must(t, os.RemoveAll(filepath.Join(ws, "lib")))
	must(t, os.Symlink(outside, filepath.Join(ws, "lib")))
	_, err := st.Restore(ctx, cp.ID, Labels{})
	if err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("want a refusal to write through lib, got %v", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("wrote outside the workspace: %v", ents)
	}
}

func TestEmptyDirs(t *testing.T) {
	t.Parallel()
	ws, st := newStore(t, map[string]string{"a.txt": "a\n"})
	must(t, os.MkdirAll(filepath.Join(ws, "empty", "deeper"), 0o755))
	must(t, os.MkdirAll(filepath.Join(ws, "gone"), 0o755))
	before := tree(t, ws)
	cp := checkpoint(t, st, Labels{})
	must(t, os.Remove(filepath.Join(ws, "gone")))
	write(t, ws, "empty/deeper/new.txt", "n\n")
	write(t, ws, "fresh/dir/f.txt", "f\n")
	restore(t, st, cp.ID)
	if d := diffTrees(before, tree(t, ws)); d != "" {
		t.Fatalf("directories:\n%s", d)
	}
}

func TestSizeCap(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	writeFiles(t, ws, map[string]string{"small.txt": "small\n", "big.bin": strings.Repeat("x", 2000), "grow.txt": "g\n"})
	st, err := Open(ws, Options{Home: t.TempDir(), MaxFileSize: 1024})
	must(t, err)
	cp := checkpoint(t, st, Labels{})
	if len(cp.Skipped) != 1 || cp.Skipped[0].Path != "big.bin" || cp.Skipped[0].Size != 2000 || !strings.Contains(cp.Skipped[0].Reason, "1 KiB") {
		t.Fatalf("skipped: %+v", cp.Skipped)
	}
	write(t, ws, "big.bin", strings.Repeat("y", 3000))
	write(t, ws, "grow.txt", strings.Repeat("g", 5000)) // skipped now: not overwritten
	write(t, ws, "small.txt", "changed\n")
	rep := restore(t, st, cp.ID)
	got := tree(t, ws)
	if !strings.HasSuffix(got["big.bin"], strings.Repeat("y", 3000)) || !strings.HasSuffix(got["grow.txt"], strings.Repeat("g", 5000)) {
		t.Error("restore touched files over the cap")
	}
	if strings.Join(rep.Restored, ",") != "small.txt" || strings.Join(rep.Kept, ",") != "grow.txt" {
		t.Errorf("report: %+v", rep)
	}
	// The undo checkpoint reports what it skipped too.
	undo, err := st.Get(rep.Undo)
	must(t, err)
	if len(undo.Skipped) != 2 {
		t.Errorf("undo checkpoint skipped %+v", undo.Skipped)
	}
}

func TestUnreadable(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" || os.Getuid() == 0 {
		t.Skip("needs unix permissions enforced (not root)")
	}
	ws, st := newStore(t, map[string]string{"a.txt": "a\n", "locked/x.txt": "x\n", "noread.txt": "n\n"})
	must(t, os.Chmod(filepath.Join(ws, "locked"), 0))
	must(t, os.Chmod(filepath.Join(ws, "noread.txt"), 0))
	t.Cleanup(func() { os.Chmod(filepath.Join(ws, "locked"), 0o755) })
	cp := checkpoint(t, st, Labels{})
	if len(cp.Skipped) != 2 || !cp.Skipped[0].Dir || cp.Skipped[0].Path != "locked" || cp.Skipped[1].Path != "noread.txt" {
		t.Fatalf("skipped: %+v", cp.Skipped)
	}
	// Readable again: the files it could not see are not "created since".
	must(t, os.Chmod(filepath.Join(ws, "locked"), 0o755))
	must(t, os.Chmod(filepath.Join(ws, "noread.txt"), 0o644))
	rep := restore(t, st, cp.ID)
	if len(rep.Removed) != 0 || strings.Join(rep.Kept, ",") != "locked/x.txt,noread.txt" {
		t.Errorf("report: %+v", rep)
	}
}

func TestListGetLabels(t *testing.T) {
	t.Parallel()
	ws, st := newStore(t, map[string]string{"a.txt": "a\n"})
	var ids []string
	for i, l := range []Labels{{Session: "s1", Turn: 1}, {Session: "s2", Turn: 1}, {Session: "s1", Turn: 2, Note: "n"}} {
		write(t, ws, "a.txt", strings.Repeat("a", i+1))
		ids = append(ids, checkpoint(t, st, l).ID)
	}
	all, err := st.List("")
	must(t, err)
	if len(all) != 3 || all[0].ID != ids[2] || all[2].ID != ids[0] {
		t.Fatalf("List: %+v", all)
	}
	s1, _ := st.List("s1")
	if len(s1) != 2 || s1[0].Turn != 2 || s1[0].Note != "n" || s1[1].Turn != 1 {
		t.Fatalf("List(s1): %+v", s1)
	}
	if none, _ := st.List("nope"); len(none) != 0 {
		t.Fatalf("List(nope): %+v", none)
	}
	m, err := st.Get(ids[1])
	must(t, err)
	if m.Session != "s2" || m.NumFiles != 1 || m.Bytes != 2 || len(m.Files) != 1 {
		t.Fatalf("Get: %+v", m)
	}
}

// TestOddNames: names JSON and the stat cache must carry byte for byte.
func TestOddNames(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip(`names with '"', '\' and newlines`)
	}
	files := map[string]string{
		"with space.txt":      "1",
		`quote".txt`:          "2",
		`"lead.txt`:           "3",
		`back\slash.txt`:      "4",
		"new\nline.txt":       "5",
		"tab\there.txt":       "6",
		"ünïcødé/文件.txt":      "7",
		"link-odd":            "->new\nline.txt",
		"dir with space/x.go": "8",
	}
	if runtime.GOOS == "linux" { // other file systems insist on UTF-8 names
		files["bad\xff\xfe.txt"] = "9"
		files["link-bad"] = "->bad\xff\xfe.txt"
	}
	ws, st := newStore(t, files)
	before := tree(t, ws)
	cp := checkpoint(t, st, Labels{})
	if cp.NumFiles != len(files) {
		t.Fatalf("%d files, want %d", cp.NumFiles, len(files))
	}
	if again := checkpoint(t, st, Labels{}); again.Hashed != 0 {
		t.Errorf("stat cache lost odd names: %d hashed", again.Hashed)
	}
	for p := range files {
		if !strings.HasPrefix(files[p], "->") {
			write(t, ws, p, "changed")
		}
	}
	rep := restore(t, st, cp.ID)
	if d := diffTrees(before, tree(t, ws)); d != "" || len(rep.Created)+len(rep.Removed) != 0 {
		t.Fatalf("odd names did not round-trip (report %+v):\n%s", rep, d)
	}
}

func TestStatCacheRoundTrip(t *testing.T) {
	t.Parallel()
	_, st := newStore(t, nil)
	h := strings.Repeat("ab", 32)
	want := map[string]statEntry{}
	for i, p := range []string{"a", "a b", `"q`, `x"y`, "n\nl", "c\rr", "\xff", "ü/ß", ` lead`} {
		want[p] = statEntry{key: statKey{size: int64(i), mtime: -int64(i) * 1e9, ctime: 7, ino: 1<<63 + uint64(i)}, hash: h}
	}
	must(t, st.saveStatCache(want))
	if got := st.loadStatCache(); !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}
