package checkpoint

import (
	"os"
	"path/filepath"
	"testing"
)

// A restore runs outside the sandbox while a command left running (a
// background job) may swap a folder it already checked (checkParents)
// for a symlink to a folder outside the workspace before it writes the
// next file there: the write must fail, not land outside. The swap is
// made between the two steps here, where a job would race for it.
func TestRestoreWriteAfterAFolderSwap(t *testing.T) {
	t.Parallel()
	ws, st := newStore(t, map[string]string{"d/a": "a", "d/b": "b"})
	outside := t.TempDir()
	rep := checkpoint(t, st, Labels{Session: "s", Turn: 1})
	m, err := st.Get(rep.ID)
	must(t, err)
	var b File
	for _, f := range m.Files {
		if f.Path == "d/b" {
			b = f
		}
	}
	if b.Path == "" {
		t.Fatalf("no d/b in %+v", m.Files)
	}
	safe := map[string]bool{}
	must(t, st.checkParents("d/a", safe)) // d checked once, as for the first file
	d := filepath.Join(ws, "d")
	must(t, os.Rename(d, filepath.Join(ws, "d.old")))
	must(t, os.Symlink(outside, d))
	if err := st.write(action{f: b}, safe); err == nil {
		t.Error("the write through the swapped folder succeeded")
	}
	// Nor may a removal delete what is outside.
	must(t, os.WriteFile(filepath.Join(outside, "a"), []byte("outside"), 0o644))
	if err := removeFile(st.abs("d/a")); err == nil {
		t.Error("the removal through the swapped folder succeeded")
	}
	ents, err := os.ReadDir(outside)
	must(t, err)
	if len(ents) != 1 || ents[0].Name() != "a" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("outside the workspace now holds %v, want only a", names)
	}
}
