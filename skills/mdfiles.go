package skills

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// MarkdownFiles lists the *.md files of dir and of its subfolders, sorted:
// agent and command files live in such trees (.claude/agents/cl/x.md,
// .claude/commands/git/commit.md). Hidden entries are skipped, an
// unreadable subfolder does not hide the rest, a symlinked file counts,
// and a missing dir has none.
func MarkdownFiles(dir string) ([]string, error) {
	st, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) || err == nil && !st.IsDir() {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir {
				return err
			}
			return nil
		}
		name := d.Name()
		if p != dir && strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() || !strings.EqualFold(filepath.Ext(name), ".md") {
			return nil
		}
		// Stat rather than d.Type so a symlinked file counts.
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Strings(out)
	return out, nil
}
