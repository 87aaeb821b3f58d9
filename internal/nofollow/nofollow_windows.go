package nofollow

import (
	"io/fs"
	"os"
	"path/filepath"
)

// On Windows files are reached by name: making a symlink there takes a
// privilege or developer mode, and commands are not confined by an OS
// sandbox that a swap would get them past.

const (
	// ReadFlags opens a file to read.
	ReadFlags = os.O_RDONLY
	// DirFlags opens a folder.
	DirFlags = os.O_RDONLY
)

// Open is os.OpenFile here.
func Open(abs string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(abs, flag, perm)
}

// IsLinkErr is false here.
func IsLinkErr(error) bool { return false }

// MkdirIn makes the folder name in d and opens it.
func MkdirIn(d *os.File, name string) (*os.File, error) {
	p := filepath.Join(d.Name(), name)
	if err := os.Mkdir(p, 0o755); err != nil && !os.IsExist(err) {
		return nil, err
	}
	return os.Open(p)
}

// CreateTempIn is os.CreateTemp in d's folder.
func CreateTempIn(d *os.File, prefix string) (*os.File, string, error) {
	f, err := os.CreateTemp(d.Name(), prefix+"*")
	if err != nil {
		return nil, "", err
	}
	return f, filepath.Base(f.Name()), nil
}

// CreateIn makes the new file name in d's folder.
func CreateIn(d *os.File, name string) (*os.File, error) {
	return os.OpenFile(filepath.Join(d.Name(), name), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
}

// SymlinkIn is os.Symlink in d's folder.
func SymlinkIn(target string, d *os.File, name string) error {
	return os.Symlink(target, filepath.Join(d.Name(), name))
}

// RenameIn is os.Rename between the folders.
func RenameIn(d *os.File, from string, e *os.File, to string) error {
	return os.Rename(filepath.Join(d.Name(), from), filepath.Join(e.Name(), to))
}

// RemoveIn is os.Remove in d's folder.
func RemoveIn(d *os.File, name string) error { return os.Remove(filepath.Join(d.Name(), name)) }

// LinkCount is 1 here: hard links are not checked on this platform.
func LinkCount(fs.FileInfo) uint64 { return 1 }
