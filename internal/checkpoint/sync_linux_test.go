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
// adds many syncs the file system once.
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
		log = append(log, op+" "+filepath.ToSlash(rel))
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
	for _, f := range m.Files {
		want = append(want, "fsync blobs/"+f.Hash[:2]+"/"+f.Hash)
	}
	for _, f := range m.Files {
		want = append(want, "fsync blobs/"+f.Hash[:2])
	}
	// A store this run made: its directory and its parents' entries too.
	want = append(want, "fsync blobs", "fsync .", "fsync ..", "fsync ../..")
	got := take()
	if !sameSet(got, want) {
		t.Errorf("first checkpoint synced\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Nothing new: nothing to sync.
	if _, err := st.Checkpoint(ctx, Labels{}); err != nil {
		t.Fatal(err)
	}
	if got := take(); len(got) != 0 {
		t.Errorf("unchanged workspace synced %v", got)
	}

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
	got = take()
	if len(got) < 2 || got[0] != "fsync blobs/"+h[:2]+"/"+h || got[1] != "fsync blobs/"+h[:2] || slices.Contains(got, "syncfs .") {
		t.Errorf("one new blob synced %v", got)
	}

	// Many new files: one syncfs.
	many := map[string]string{}
	for i := range maxFileSyncs + 1 {
		many[fmt.Sprintf("f%02d.txt", i)] = fmt.Sprintf("file %d\n", i)
	}
	writeFiles(t, ws, many)
	age(t, ws)
	if _, err := st.Checkpoint(ctx, Labels{}); err != nil {
		t.Fatal(err)
	}
	if got := take(); !slices.Equal(got, []string{"syncfs ."}) {
		t.Errorf("%d new blobs synced %v, want one syncfs", maxFileSyncs+1, got)
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(slices.Compact(a), slices.Compact(b)) && len(a) == len(b)
}
