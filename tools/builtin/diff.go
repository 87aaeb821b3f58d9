package builtin

import (
	"path/filepath"

	udiff "github.com/aymanbagabas/go-udiff"
)

// diffContext is the number of unchanged lines shown around each change.
const diffContext = 3

// UnifiedDiff returns a unified diff that turns old into new, labelled with
// path in git style (a/path, b/path), and the number of added and removed
// lines. Identical inputs give an empty diff and zero counts.
func UnifiedDiff(path, old, new string) (diff string, added, removed int) {
	if old == new {
		return "", 0, 0
	}
	from, to := "a/"+path, "b/"+path
	if filepath.IsAbs(path) {
		from, to = path, path
	}
	u, err := udiff.ToUnifiedDiff(from, to, old, udiff.Lines(old, new), diffContext)
	if err != nil {
		// Edits computed from the same inputs are always consistent; fall
		// back to a whole-file replacement rather than failing a preview.
		return wholeFileDiff(from, to, old, new)
	}
	for _, h := range u.Hunks {
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Insert:
				added++
			case udiff.Delete:
				removed++
			}
		}
	}
	return u.String(), added, removed
}

// wholeFileDiff renders new as a replacement of every line of old.
func wholeFileDiff(from, to, old, new string) (string, int, int) {
	var edits []udiff.Edit
	edits = append(edits, udiff.Edit{Start: 0, End: len(old), New: new})
	s, err := udiff.ToUnified(from, to, old, edits, diffContext)
	if err != nil {
		return "", countLines(new), countLines(old)
	}
	return s, countLines(new), countLines(old)
}

// countLines counts lines the way a diff does: a final line without a
// newline still counts.
func countLines(s string) int {
	return len(splitLines(s))
}
