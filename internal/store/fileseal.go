package store

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// FileSeals keeps the seals of a folder of JSON files Reasonix rewrites
// whole: saved plans and the progress of their runs. They live in the
// workspace, where a confined command may write, and what they hold is
// acted on later: a plan's steps become workers' prompts, run with the
// plan's approval, and a run's progress decides which steps --resume
// skips. So, as with sessions (see Seals), Reasonix keeps a seal of each
// in its home, which confined commands cannot write: the size and
// SHA-256 of the whole file as Reasonix last wrote it, and refuses to
// read one that does not match (a *ModifiedError).
//
// A write puts the new content's entry in the seal before the file,
// keeping the previous entry beside it until the file is in place, so
// a crash between the two writes leaves a file that still reads.
type FileSeals struct {
	s    *Seals
	what string
}

// NewFileSeals returns the seals of the files <id>.json in dir, kept
// under home as [NewSeals] keeps a sessions folder's; what names such a
// file in messages ("plan"). It is nil when home is empty: a nil
// *FileSeals writes and reads without sealing or checking.
func NewFileSeals(home, dir, what string) *FileSeals {
	s := newSeals(home, dir, ".json", isSealedJSON)
	if s == nil {
		return nil
	}
	return &FileSeals{s: s, what: what}
}

// isSealedJSON says whether a name in a sealed folder is one of its
// files (not a temporary file being written).
func isSealedJSON(name string) bool {
	return strings.HasSuffix(name, ".json") && !strings.HasPrefix(name, ".")
}

func (f *FileSeals) id(path string) string { return strings.TrimSuffix(filepath.Base(path), ".json") }

// wholeEntry is the seal entry of a file's whole content.
func wholeEntry(data []byte) sealEntry {
	return sealEntry{end: int64(len(data)), sum: sha256.Sum256(data)}
}

// setSeal replaces id's seal with entries.
func (f *FileSeals) setSeal(id string, entries ...sealEntry) error {
	sf, err := f.s.writeSeal(id, entries)
	if err != nil {
		return err
	}
	return sf.Close()
}

// Write writes data to path (atomically, making its folder; perm as
// [WriteFileAtomic]) and seals it as what Reasonix wrote there.
func (f *FileSeals) Write(path string, data []byte, perm os.FileMode) error {
	if f == nil {
		return WriteFileAtomic(path, data, perm)
	}
	id := f.id(path)
	e := wholeEntry(data)
	// A seal that cannot be read is replaced: the file is rewritten whole.
	old, _, _ := f.s.readSeal(id)
	if len(old) > 1 {
		old = old[:1]
	}
	if err := f.setSeal(id, append([]sealEntry{e}, old...)...); err != nil {
		return fmt.Errorf("seal %s: %w", path, err)
	}
	if err := WriteFileAtomic(path, data, perm); err != nil {
		if len(old) > 0 {
			f.setSeal(id, old...) // the file is as it was; so is its seal
		}
		return err
	}
	if err := f.setSeal(id, e); err != nil {
		return fmt.Errorf("seal %s: %w", path, err)
	}
	return nil
}

// Read reads the file at path and checks it against its seal. A file
// that is not what Reasonix last wrote, or that has no seal and was not
// in the folder when sealing began there, is a *ModifiedError unless
// mode is AcceptModified (the person took it as it stands: it is sealed
// as it is now). A file from before sealing began reads with a notice
// and is sealed from then on. Errors reading the file itself are
// returned unwrapped, so callers can test for fs.ErrNotExist.
func (f *FileSeals) Read(path string, mode LoadMode) (data []byte, notice string, err error) {
	data, err = os.ReadFile(path)
	if err != nil || f == nil {
		return data, "", err
	}
	id := f.id(path)
	got := wholeEntry(data)
	entries, sealed, err := f.s.readSeal(id)
	if err != nil {
		return nil, "", err
	}
	if sealed {
		for _, e := range entries {
			if e != got {
				continue
			}
			if len(entries) > 1 {
				// A crash came between a write's seal and its file.
				if err := f.setSeal(id, got); err != nil {
					return nil, "", fmt.Errorf("seal %s: %w", path, err)
				}
			}
			return data, "", nil
		}
		if mode != AcceptModified {
			why := "its content is not what Reasonix last wrote there"
			if len(entries) > 0 && entries[0].end != got.end {
				why += fmt.Sprintf(" (Reasonix wrote %d bytes, it has %d)", entries[0].end, got.end)
			}
			return nil, "", &ModifiedError{Path: path, ID: id, Line: 1, Why: why, What: f.what}
		}
		notice = fmt.Sprintf("%s was changed outside Reasonix; taken as it stands, as asked, and sealed so", path)
	} else {
		legacy, begun, err := f.s.isLegacy(id)
		if err != nil {
			return nil, "", err
		}
		switch {
		case begun && !legacy && mode != AcceptModified:
			return nil, "", &ModifiedError{Path: path, ID: id, Line: 1, What: f.what,
				Why: "Reasonix has no seal for it and it was not there when Reasonix began sealing this folder, so Reasonix did not write it"}
		case begun && !legacy:
			notice = fmt.Sprintf("%s has no seal (Reasonix did not write it); taken as it stands, as asked, and sealed so", path)
		default:
			notice = fmt.Sprintf("%s has no seal (written before Reasonix sealed its %s files): nothing shows whether it was changed since; it is sealed from now on", path, f.what)
		}
	}
	if err := f.setSeal(id, got); err != nil {
		return nil, "", fmt.Errorf("seal %s: %w", path, err)
	}
	return data, notice, nil
}
