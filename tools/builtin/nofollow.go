package builtin

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// The file tools run in Reasonix's own process, outside the sandbox, on
// paths the guard resolved: absolute and free of symlinks at the moment
// it looked. A confined command running meanwhile (a background job) can
// swap a folder on that path for a symlink to a file the guard refuses
// (~/.ssh, a control folder, anywhere outside the workspace) between that
// look and the tool's open. So every file the tools read, write, create,
// move or delete is reached without following a symlink anywhere on its
// path (nofollow_*.go): a link that appeared since the check makes the
// call fail instead of reaching its target.

// errLinkOnPath explains the failure a symlink on a checked path causes.
const errLinkOnPath = "a symlink is on the way to it, where the path was checked to have none (a folder swapped for a link since the check); it is not followed"

// linkError rewords err when a symlink on the path caused it.
func linkError(op, path string, err error) error {
	if isLinkErr(err) {
		return &fs.PathError{Op: op, Path: path, Err: fmt.Errorf("%w: %s", err, errLinkOnPath)}
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

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
	f, err := openNoFollow(abs, readFlags, 0)
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
	if n := linkCount(fi); n > 1 {
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
	f, err := openNoFollow(dir, dirFlags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	ents, err := f.ReadDir(-1)
	slices.SortFunc(ents, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return ents, err
}
