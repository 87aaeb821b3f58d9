//go:build linux && !mips && !mipsle && !mips64 && !mips64le

package permission

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func writeFile(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sortedPaths(h *Hidden) []string {
	p := h.Paths()
	slices.Sort(p)
	return p
}

// Hidden follows what it found wherever it is renamed or moved, forgets
// what is removed, and finds what is made later, whether its folder is
// watched (inotify) or compared by stamp.
func TestHiddenFollowsChanges(t *testing.T) {
	for _, watches := range []int{maxHideWatches, 0} {
		t.Run(map[bool]string{true: "watched", false: "stamped"}[watches > 0], func(t *testing.T) {
			old := maxHideWatches
			maxHideWatches = watches
			t.Cleanup(func() { maxHideWatches = old })
			root := t.TempDir()
			ws, other := filepath.Join(root, "ws"), filepath.Join(root, "other")
			writeFile(t, filepath.Join(ws, "app", ".env"), "a")
			writeFile(t, filepath.Join(ws, "svc", "deep", ".env"), "b")
			writeFile(t, filepath.Join(ws, "keys", "k.pem"), "k")
			writeFile(t, filepath.Join(ws, "src", "main.go"), "package main")
			if err := os.MkdirAll(other, 0o755); err != nil {
				t.Fatal(err)
			}
			h := HiddenReads([]string{"Read(./.env)", "Read(**/keys/**)"}, ws)
			want := []string{filepath.Join(ws, "app", ".env"), filepath.Join(ws, "keys"), filepath.Join(ws, "svc", "deep", ".env")}
			if got := sortedPaths(h); !slices.Equal(got, want) {
				t.Fatalf("hidden %q, want %q", got, want)
			}
			must := func(err error) {
				t.Helper()
				if err != nil {
					t.Fatal(err)
				}
			}
			if watches > 0 {
				// Nothing changed, or only files no rule matches: no walk.
				writeFile(t, filepath.Join(ws, "src", "util.go"), "package main")
				h.Paths()
				if h.st.walks != 1 {
					t.Errorf("%d walks for an unchanged workspace, want 1", h.st.walks)
				}
			}
			must(os.Rename(filepath.Join(ws, "app"), filepath.Join(ws, "app2")))
			must(os.Rename(filepath.Join(ws, "svc"), filepath.Join(other, "svc")))
			must(os.Rename(filepath.Join(ws, "keys"), filepath.Join(ws, "src", "keys2")))
			want = []string{filepath.Join(other, "svc", "deep", ".env"), filepath.Join(ws, "app2", ".env"), filepath.Join(ws, "src", "keys2")}
			if got := sortedPaths(h); !slices.Equal(got, want) {
				t.Errorf("after renames: hidden %q, want %q", got, want)
			}
			must(os.Remove(filepath.Join(ws, "app2", ".env")))
			writeFile(t, filepath.Join(ws, "src", ".env"), "late")        // an existing folder
			writeFile(t, filepath.Join(ws, "new", "sub", ".env"), "late") // new folders
			want = []string{filepath.Join(other, "svc", "deep", ".env"), filepath.Join(ws, "new", "sub", ".env"),
				filepath.Join(ws, "src", ".env"), filepath.Join(ws, "src", "keys2")}
			if got := sortedPaths(h); !slices.Equal(got, want) {
				t.Errorf("after removing one and making two: hidden %q, want %q", got, want)
			}
		})
	}
}

// The helper hides a file only if it is still the one listed: a decoy
// put where a hidden file was (its folder renamed as the command
// started), or nothing there, fails the command, and the file listed
// is never shown.
func TestHelperRefusesAnotherFileInAHiddenPlace(t *testing.T) {
	if ok, why := hideAvailable(); !ok {
		t.Skipf("hiding not available: %s", why)
	}
	if abi := landlockABI(); abi < 1 {
		t.Skip("no Landlock")
	}
	ws := t.TempDir()
	writeFile(t, filepath.Join(ws, "app", ".env"), "THE-SECRET")
	h := HiddenReads([]string{"Read(./.env)"}, ws)
	run := func(hide []hiddenFile) (string, int) {
		t.Helper()
		cmd := exec.Command("/bin/sh", "-c", "cat app/.env app2/.env; echo ran")
		cmd.Dir = ws
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := startConfined(cmd, confinement{write: []string{ws}, hide: hide}); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait()
		return out.String(), cmd.ProcessState.ExitCode()
	}
	if out, code := run(h.files()); code != 0 || strings.Contains(out, "THE-SECRET") || !strings.Contains(out, "ran") {
		t.Fatalf("hidden as listed: exit %d, %q", code, out)
	}
	stale := h.files()
	if err := os.Rename(filepath.Join(ws, "app"), filepath.Join(ws, "app2")); err != nil {
		t.Fatal(err)
	}
	if out, code := run(stale); code != 126 || strings.Contains(out, "THE-SECRET") || strings.Contains(out, "ran") {
		t.Errorf("hidden file gone from its place: exit %d, %q", code, out)
	}
	writeFile(t, filepath.Join(ws, "app", ".env"), "decoy")
	out, code := run(stale)
	if code != 126 || strings.Contains(out, "THE-SECRET") || !strings.Contains(out, "another file is there now") {
		t.Errorf("a decoy in the hidden file's place: exit %d, %q", code, out)
	}
	// Listed again, both are hidden (the decoy is a .env too).
	if out, code := run(h.files()); code != 0 || strings.Contains(out, "THE-SECRET") || strings.Contains(out, "decoy") || !strings.Contains(out, "ran") {
		t.Errorf("listed again: exit %d, %q", code, out)
	}
}

// BenchmarkHiddenFiles: what a command's start pays for the hide list in
// a workspace of 500 folders with two .env files, nothing having changed.
func BenchmarkHiddenFiles(b *testing.B) {
	ws := b.TempDir()
	for i := 0; i < 500; i++ {
		if err := os.MkdirAll(filepath.Join(ws, "pkg", strings.Repeat("d", 1+i%7), "x"+string(rune('a'+i%26)), "n"+strconv.Itoa(i)), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	for _, p := range []string{".env", "pkg/ddd/xa/.env"} {
		if err := os.WriteFile(filepath.Join(ws, p), []byte("k"), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	h := HiddenReads([]string{"Read(./.env)"}, ws)
	if n := len(h.files()); n != 2 {
		b.Fatalf("%d files hidden", n)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.files()
	}
	if h.st.walks != 1 {
		b.Errorf("%d walks", h.st.walks)
	}
}
