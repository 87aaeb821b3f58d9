package checkpoint

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestSyncFewBlobs: a checkpoint that adds a few blobs syncs each of them
// and the directories that name them, not the whole file system; one that
// adds many syncs the file system once. The manifest (and a changed stat
// cache) is synced as a temporary file in the same batch, and renamed
// into place after it.
func TestSyncFewBlobs(t *testing.T) {
	ws, st := newStore(t, map[string]string{"a.txt": "alpha\n", "b.txt": "beta\n"})
	var mu sync.Mutex
	var log []string
	st.syncLog = func(op, path string) {
		mu.Lock()
		defer mu.Unlock()
		rel, err := filepath.Rel(st.dir, path)
		if err != nil {
			t.Error(err)
		}
		rel = filepath.ToSlash(rel)
		if base := filepath.Base(rel); strings.HasPrefix(base, tmpPrefix) {
			rel = strings.TrimSuffix(rel, base) + tmpPrefix + "*"
		}
		log = append(log, op+" "+rel)
	}
	// batch checks one checkpoint's log: the syncs (want, in any order,
	// with the manifest's temporary file), then the renames, the
	// manifest's last.
	batch := func(what string, got []string, id string, want ...string) {
		t.Helper()
		want = append(want, "fsync manifests/"+tmpPrefix+"*")
		n := len(got)
		for n > 0 && strings.HasPrefix(got[n-1], "rename ") {
			n--
		}
		if n == len(got) || got[len(got)-1] != "rename manifests/"+id+manifestExt {
			t.Errorf("%s: the manifest was not renamed last, after the syncs: %v", what, got)
			return
		}
		if !sameSet(got[:n], want) {
			t.Errorf("%s synced\n%s\nwant\n%s", what, strings.Join(got[:n], "\n"), strings.Join(want, "\n"))
		}
	}
	take := func() []string {
		mu.Lock()
		defer mu.Unlock()
		l := log
		log = nil
		return l
	}
	ctx := context.Background()
	rep, err := st.Checkpoint(ctx, Labels{})
	if err != nil {
		t.Fatal(err)
	}
	m, err := st.Get(rep.ID)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	shards := map[string]bool{}
	for _, f := range m.Files {
		want = append(want, "fsync blobs/"+f.Hash[:2]+"/"+f.Hash)
		shards[f.Hash[:2]] = true
	}
	for _, f := range m.Files {
		want = append(want, "fsync blobs/"+f.Hash[:2])
	}
	// A store this run made: its directory and its parents' entries too.
	want = append(want, "fsync blobs", "fsync "+markerFile, "fsync .", "fsync ..", "fsync ../..")
	// The files are old enough for the stat cache: it is staged too.
	want = append(want, "fsync "+tmpPrefix+"*")
	batch("first checkpoint", take(), rep.ID, want...)

	// Nothing new: only the manifest.
	if rep, err = st.Checkpoint(ctx, Labels{}); err != nil {
		t.Fatal(err)
	}
	batch("unchanged workspace", take(), rep.ID)

	// One changed file: its blob and its shard; blobs/ only when the
	// shard is new.
	writeFiles(t, ws, map[string]string{"a.txt": "changed\n"})
	age(t, ws)
	rep, err = st.Checkpoint(ctx, Labels{})
	if err != nil {
		t.Fatal(err)
	}
	if m, err = st.Get(rep.ID); err != nil {
		t.Fatal(err)
	}
	h := m.Files[slices.IndexFunc(m.Files, func(f File) bool { return f.Path == "a.txt" })].Hash
	// The stat cache (the files are old enough to be cached now) is
	// staged with the manifest.
	want = []string{"fsync blobs/" + h[:2] + "/" + h, "fsync blobs/" + h[:2], "fsync " + tmpPrefix + "*"}
	if !shards[h[:2]] {
		want = append(want, "fsync blobs") // a new shard
	}
	batch("one new blob", take(), rep.ID, want...)

	// Many new files: one syncfs.
	many := map[string]string{}
	for i := range maxFileSyncs + 1 {
		many[fmt.Sprintf("f%02d.txt", i)] = fmt.Sprintf("file %d\n", i)
	}
	writeFiles(t, ws, many)
	age(t, ws)
	if rep, err = st.Checkpoint(ctx, Labels{}); err != nil {
		t.Fatal(err)
	}
	if got := take(); len(got) == 0 || got[0] != "syncfs ." || got[len(got)-1] != "rename manifests/"+rep.ID+manifestExt || slices.ContainsFunc(got[1:], func(s string) bool { return !strings.HasPrefix(s, "rename ") }) {
		t.Errorf("%d new blobs synced %v, want one syncfs, then the renames", maxFileSyncs+1, got)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b)) && len(a) == len(b)
}
