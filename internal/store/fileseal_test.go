package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// planFolder is a fresh workspace's plans folder and its seals.
func planFolder(t *testing.T) (*FileSeals, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), ".reasonix", "plans")
	return NewFileSeals(filepath.Join(t.TempDir(), "home"), dir, "plan"), dir
}

func fileModified(t *testing.T, err error, id string) *ModifiedError {
	t.Helper()
	var m *ModifiedError
	if !errors.As(err, &m) {
		t.Fatalf("want a ModifiedError, got %v", err)
	}
	if m.ID != id || m.What != "plan" || m.Line != 1 {
		t.Fatalf("ModifiedError %+v", m)
	}
	return m
}

func TestFileSealsRefuseAChangedFile(t *testing.T) {
	f, dir := planFolder(t)
	p := filepath.Join(dir, "p1.json")
	must(t, f.Write(p, []byte(`{"goal":"g"}`+"\n"), 0o644))
	data, notice, err := f.Read(p, Refuse)
	if err != nil || notice != "" || string(data) != `{"goal":"g"}`+"\n" {
		t.Fatalf("read %q, notice %q, err %v", data, notice, err)
	}
	// Rewritten, same length: only the hash tells.
	must(t, os.WriteFile(p, []byte(`{"goal":"x"}`+"\n"), 0o644))
	_, _, err = f.Read(p, Refuse)
	m := fileModified(t, err, "p1")
	if want := p + ":1: plan p1 was changed outside Reasonix: "; !strings.HasPrefix(m.Error(), want) {
		t.Fatalf("message %q, want it to start %q", m.Error(), want)
	}
	// Refusing leaves the seal as it was.
	_, _, err = f.Read(p, Refuse)
	fileModified(t, err, "p1")
	// Taken as it stands, it is sealed so.
	data, notice, err = f.Read(p, AcceptModified)
	if err != nil || !strings.Contains(notice, "taken as it stands") || !strings.Contains(string(data), `"x"`) {
		t.Fatalf("accept: %q %q %v", data, notice, err)
	}
	if _, notice, err = f.Read(p, Refuse); err != nil || notice != "" {
		t.Fatalf("after accepting: %q %v", notice, err)
	}
	// A write by Reasonix is sealed again.
	must(t, f.Write(p, []byte(`{"goal":"longer"}`+"\n"), 0o644))
	if _, _, err = f.Read(p, Refuse); err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(p, []byte(`{"goal":"g"}`+"\n"), 0o644))
	_, _, err = f.Read(p, Refuse)
	if m := fileModified(t, err, "p1"); !strings.Contains(m.Why, "Reasonix wrote 18 bytes, it has 13") {
		t.Fatalf("why: %s", m.Why)
	}
}

func TestFileSealsLegacyAndForeignFiles(t *testing.T) {
	f, dir := planFolder(t)
	must(t, os.MkdirAll(dir, 0o755))
	old := filepath.Join(dir, "old.json")
	must(t, os.WriteFile(old, []byte("{}\n"), 0o644))
	// Sealing begins with the first write: old.json was there before it.
	must(t, f.Write(filepath.Join(dir, "new.json"), []byte("{}\n"), 0o644))
	_, notice, err := f.Read(old, Refuse)
	if err != nil || !strings.Contains(notice, "has no seal") {
		t.Fatalf("legacy: notice %q err %v", notice, err)
	}
	// Read once, it is sealed: a change to it now is refused.
	must(t, os.WriteFile(old, []byte("{ }\n"), 0o644))
	if _, _, err := f.Read(old, Refuse); err == nil {
		t.Fatal("a legacy plan changed after it was sealed loaded")
	}
	// A file that appeared after sealing began is not Reasonix's.
	forged := filepath.Join(dir, "forged.json")
	must(t, os.WriteFile(forged, []byte("{}\n"), 0o644))
	_, _, err = f.Read(forged, Refuse)
	if m := fileModified(t, err, "forged"); !strings.Contains(m.Why, "no seal") {
		t.Fatalf("why: %s", m.Why)
	}
	if _, notice, err := f.Read(forged, AcceptModified); err != nil || notice == "" {
		t.Fatalf("accepting a foreign file: %q %v", notice, err)
	}
	if _, _, err := f.Read(forged, Refuse); err != nil {
		t.Fatalf("an accepted file is sealed: %v", err)
	}
	// A missing file is the plain error, for callers that test for it.
	if _, _, err := f.Read(filepath.Join(dir, "none.json"), Refuse); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing: %v", err)
	}
}

// A crash after a write's seal but before its file leaves the file as it
// was, which still reads; the seal then names it alone.
func TestFileSealsCrashBetweenSealAndFile(t *testing.T) {
	f, dir := planFolder(t)
	p := filepath.Join(dir, "p1.json")
	must(t, f.Write(p, []byte("one\n"), 0o644))
	must(t, f.setSeal("p1", wholeEntry([]byte("two\n")), wholeEntry([]byte("one\n"))))
	if _, _, err := f.Read(p, Refuse); err != nil {
		t.Fatal(err)
	}
	entries, _, err := f.s.readSeal("p1")
	if err != nil || len(entries) != 1 || entries[0] != wholeEntry([]byte("one\n")) {
		t.Fatalf("seal after the read: %v %v", entries, err)
	}
	// The version that never landed is not accepted any more.
	must(t, os.WriteFile(p, []byte("two\n"), 0o644))
	if _, _, err := f.Read(p, Refuse); err == nil {
		t.Fatal("the unlanded version was accepted")
	}
}

func TestFileSealsNilChecksNothing(t *testing.T) {
	var f *FileSeals
	if NewFileSeals("", "/x", "plan") != nil {
		t.Fatal("no home, yet seals")
	}
	p := filepath.Join(t.TempDir(), "p.json")
	must(t, f.Write(p, []byte("a\n"), 0o644))
	must(t, os.WriteFile(p, []byte("b\n"), 0o644))
	if data, _, err := f.Read(p, Refuse); err != nil || string(data) != "b\n" {
		t.Fatalf("%q %v", data, err)
	}
}
