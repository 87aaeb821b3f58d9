package builtin

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/reasonix/reasonix/internal/nofollow"
)

// The file tools run in Reasonix's own process, outside the sandbox, on
// paths the guard resolved: every file they read, write, create, move or
// delete is reached without following a symlink anywhere on its path
// (internal/nofollow), so a confined command that swaps a folder for a
// symlink between the guard's look and the open makes the call fail.

// readRegular reads the regular file at abs (see openNoFollow) whole, up
// to max bytes (errTooBig past it), and returns its stat. A FIFO or a
// device is refused without blocking, and so is a file with more than
// one name: the guard refused hard links when it looked, so one now is a
// swap too.
func readRegular(abs string, max int64) ([]byte, fs.FileInfo, error) {
	f, fi, err := openRegular(abs)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, fi, errTooBig
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fi, err
	}
	if int64(len(data)) > max {
		return nil, fi, errTooBig
	}
	return data, fi, nil
}

// openRegular opens the regular file at abs for reading without following
// a symlink on its path, and returns it with its stat; see readRegular.
func openRegular(abs string) (*os.File, fs.FileInfo, error) {
	f, err := nofollow.Open(abs, nofollow.ReadFlags, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, &fs.PathError{Op: "open", Path: abs, Err: fmt.Errorf("not a regular file (%v)", fi.Mode().Type())}
	}
	if n := nofollow.LinkCount(fi); n > 1 {
		f.Close()
		return nil, nil, &fs.PathError{Op: "open", Path: abs, Err: fmt.Errorf("%w: it is a hard link (%d names for one file), which may share its content with a file outside the workspace", errHardLink, n)}
	}
	return f, fi, nil
}

// errHardLink marks a file refused because it has more than one name.
var errHardLink = errors.New("hard link refused")

// readDirNoFollow lists the directory dir, sorted by name as
// os.ReadDir does, without following a symlink on its path.
func readDirNoFollow(dir string) ([]os.DirEntry, error) {
	f, err := nofollow.Open(dir, nofollow.DirFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	slices.SortFunc(ents, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, err
}
