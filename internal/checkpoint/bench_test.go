package checkpoint

import (
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reasonix/reasonix/internal/benchtest"
)

// TestCheckpointBench prints what checkpoints cost on a generated
// 10,000-file workspace: the first one, an incremental one with one file
// changed, and restores. It runs only under `make bench`
// (REASONIX_BENCH=1) because timings are not assertions.
func TestCheckpointBench(t *testing.T) {
	if os.Getenv("REASONIX_BENCH") != "1" {
		t.Skip("figures only: set REASONIX_BENCH=1 (make bench)")
	}
	const nfiles = 10000
	ws := t.TempDir()
	total := genWorkspace(t, ws, nfiles)
	home := t.TempDir()

	// First checkpoint, into an empty store each time.
	var first *Report
	var st *Store
	firstT := benchtest.Median(3, func() {
		h := filepath.Join(home, fmt.Sprint(time.Now().UnixNano()))
		s, err := Open(ws, Options{Home: h})
		must(t, err)
		st = s
		first = checkpoint(t, st, Labels{Turn: 1})
	})
	if first.Hashed != nfiles+1 { // and .gitignore
		t.Fatalf("first checkpoint hashed %d files, want %d", first.Hashed, nfiles+1)
	}
	// The floor: copying the same files with os.ReadFile and os.WriteFile.
	floorT := benchtest.Median(3, func() { copyTree(t, ws, filepath.Join(t.TempDir(), "copy")) })
	fmt.Printf("checkpoint: first of %d files (%.1f MB): %.0fms, %.2fx a plain copy (%.0fms), %d hashed, %d blobs stored\n",
		nfiles, float64(total)/1e6, benchtest.Ms(firstT), float64(firstT)/float64(floorT), benchtest.Ms(floorT), first.Hashed, first.NewBlobs)

	unchanged := benchtest.Median(5, func() { checkpoint(t, st, Labels{Turn: 2}) })
	var inc *Report
	i := 0
	incT := benchtest.Median(5, func() {
		i++
		write(t, ws, "d007/f0042.go", fmt.Sprintf("package d007 // edit %d\n", i))
		inc = checkpoint(t, st, Labels{Turn: 3})
	})
	if inc.Hashed != 1 {
		t.Errorf("incremental checkpoint hashed %d files, want 1", inc.Hashed)
	}
	fmt.Printf("checkpoint: incremental, one file changed: %.1fms (%d hashed; nothing changed: %.1fms)\n",
		benchtest.Ms(incT), inc.Hashed, benchtest.Ms(unchanged))
	data, err := os.ReadFile(st.manifestPath(inc.ID))
	must(t, err)
	fmt.Printf("checkpoint: manifest %.0f KB per checkpoint of %d files\n", float64(len(data))/1e3, nfiles)

	// Restores, each preceded by its own undo checkpoint.
	base := checkpoint(t, st, Labels{Turn: 4})
	one := benchtest.Median(5, func() {
		i++
		write(t, ws, "d003/f0007.go", fmt.Sprintf("changed %d\n", i))
		r := restore(t, st, base.ID)
		if len(r.Restored) != 1 {
			t.Fatalf("restore: %+v", r)
		}
	})
	hundred := benchtest.Median(3, func() {
		for j := range 100 {
			write(t, ws, fmt.Sprintf("d%03d/f%04d.go", j, j), "changed\n")
		}
		r := restore(t, st, base.ID)
		if len(r.Restored) != 100 {
			t.Fatalf("restore: %d restored", len(r.Restored))
		}
	})
	fmt.Printf("checkpoint: restore, one file changed: %.1fms; 100 files changed: %.1fms (undo checkpoint included)\n",
		benchtest.Ms(one), benchtest.Ms(hundred))
}

// genWorkspace writes n source-like files in 100 directories, sizes 200 B
// to 16 KB, and ages them; it returns their total size.
func genWorkspace(t testing.TB, ws string, n int) int64 {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	must(t, os.WriteFile(filepath.Join(ws, ".gitignore"), []byte("*.o\n/build/\n"), 0o644))
	var total int64
	line := []byte("\tif err := do(ctx, x); err != nil { return fmt.Errorf(\"step: %w\", err) }\n")
	for i := range n {
		dir := filepath.Join(ws, fmt.Sprintf("d%03d", i%100))
		if i < 100 {
			must(t, os.MkdirAll(dir, 0o755))
		}
		size := 200 + rng.IntN(16<<10)
		buf := make([]byte, 0, size+len(line))
		buf = fmt.Appendf(buf, "package d%03d // file %d\n", i%100, i)
		for len(buf) < size {
			buf = append(buf, line...)
		}
		must(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d.go", i/100)), buf, 0o644))
		total += int64(len(buf))
	}
	age(t, ws)
	return total
}

// copyTree copies the regular files below src to dst, one after another.
func copyTree(t testing.TB, src, dst string) {
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	must(t, err)
}
