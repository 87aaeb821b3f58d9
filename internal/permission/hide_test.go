package permission

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// HiddenReads lists, at each call, the existing files and folders inside
// the workspace that Read deny rules match: fixed paths checked each
// time, glob rules walked once (not into .git or node_modules); rules for
// paths outside the workspace or other families are not its.
func TestHiddenReads(t *testing.T) {
	ws := t.TempDir()
	for _, p := range []string{".env", "app/.env", "node_modules/pkg/.env", ".git/.env", "secrets/a.key", "src/main.go"} {
		if err := os.MkdirAll(filepath.Join(ws, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, p), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if HiddenReads([]string{"Bash(cat:*)", "Read(/etc/shadow)", "Edit(./.env)"}, ws) != nil {
		t.Error("rules naming nothing inside the workspace gave a hide list")
	}
	hide := HiddenReads([]string{"Read(./.env)", "Read(./secrets/**)", "Read(" + filepath.ToSlash(filepath.Join(ws, "later.pem")) + ")"}, ws)
	want := []string{filepath.Join(ws, "secrets"), filepath.Join(ws, ".env"), filepath.Join(ws, "app", ".env")}
	got := hide.Paths()
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("hidden %q, want %q", got, want)
	}
	// A .env made at the root after the walk is hidden from then on.
	bare := t.TempDir()
	hideBare := HiddenReads([]string{"Read(./.env)"}, bare)
	if got := hideBare.Paths(); len(got) != 0 {
		t.Errorf("hidden %q in a workspace without a .env", got)
	}
	if err := os.WriteFile(filepath.Join(bare, ".env"), []byte("late"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := hideBare.Paths(); !slices.Equal(got, []string{filepath.Join(bare, ".env")}) {
		t.Errorf("a .env made at the root after the walk: hidden %q", got)
	}
	// A fixed path created later is hidden from then on.
	if err := os.WriteFile(filepath.Join(ws, "later.pem"), []byte("k"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := hide.Paths(); !slices.Contains(got, filepath.Join(ws, "later.pem")) {
		t.Errorf("a fixed path created later is not hidden: %q", got)
	}
}

// ProtectedWrites lists what Edit (and Write) deny rules match inside the
// workspace, as HiddenReads does for Read rules, and only that: a Read
// rule or a rule for one tool id does not make a file read-only.
func TestProtectedWrites(t *testing.T) {
	ws := t.TempDir()
	for _, p := range []string{"locked.txt", ".github/workflows/ci.yml", "app/gen.lock", "free.txt"} {
		if err := os.MkdirAll(filepath.Join(ws, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(ws, p), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if ProtectedWrites([]string{"Read(./locked.txt)", "write_file(./locked.txt)", "Edit(/etc/passwd)"}, ws) != nil {
		t.Error("rules naming no Edit path inside the workspace gave a list")
	}
	p := ProtectedWrites([]string{"Edit(./locked.txt)", "Write(./.github/workflows/**)", "Edit(**/*.lock)", "Edit(./not-yet.txt)"}, ws)
	if p == nil || !p.readOnly {
		t.Fatalf("ProtectedWrites = %+v, want a read-only list", p)
	}
	got := p.Paths()
	want := []string{filepath.Join(ws, ".github", "workflows"), filepath.Join(ws, "app", "gen.lock"), filepath.Join(ws, "locked.txt")}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("protected %q, want %q", got, want)
	}
	if HiddenReads([]string{"Edit(./locked.txt)"}, ws) != nil {
		t.Error("an Edit rule hid a file")
	}
}

func TestRedactDotEnv(t *testing.T) {
	in := "# keys\nA=1\r\nexport DS_KEY=sk-1\n  DS_KEY = 'sk-2'\nDS_KEY_OLD=keep\nB=2 # DS_KEY=x\nDS_KEY=last"
	got := string(redactDotEnv([]byte(in), []string{"DS_KEY", "OTHER"}))
	want := "# keys\nA=1\r\nDS_KEY_OLD=keep\nB=2 # DS_KEY=x\n"
	if got != want {
		t.Errorf("redactDotEnv = %q, want %q", got, want)
	}
}
