package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// EnsureIgnored creates dir and a .gitignore inside it that ignores
// everything, itself included. Transcripts and goal state live in the
// workspace; without this, git would list them and the search tools would
// find the model's own past queries in them. An existing file is kept
// unless it is empty: what a process killed between the file's create
// and its write, or a power cut before its data reached the disk, leaves
// behind, which would let git see the transcripts from then on.
func EnsureIgnored(dir string) error {
	p := filepath.Join(dir, ".gitignore")
	if st, err := os.Stat(p); err == nil && st.Size() > 0 {
		return nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("check %s: %w", p, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := os.WriteFile(p, []byte("# Reasonix state: not part of the project\n*\n"), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}
