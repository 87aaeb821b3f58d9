// Package nofollow reaches files without following a symlink anywhere on
// their paths. Reasonix's own process runs outside the sandbox and works
// on paths it checked (the file tools after the guard, a checkpoint's
// restore after its own look): a confined command running meanwhile (a
// background job) can swap a folder on such a path for a symlink to a
// file the check refused (~/.ssh, a control folder, anything outside the
// workspace) between the check and the open. Through this package the
// call fails instead of reaching the link's target: the path must be
// absolute and free of symlinks, as a checked path is; writes, renames
// and deletes name the file relative to its folder, opened that way.
package nofollow

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// LinkOnPath explains the failure a symlink on a checked path causes.
const LinkOnPath = "a symlink is on the way to it, where the path was checked to have none (a folder swapped for a link since the check); it is not followed"

// pathError wraps err for op on path, saying so when a symlink caused it.
func pathError(op, path string, err error) error {
	if IsLinkErr(err) {
		err = fmt.Errorf("%w: %s", err, LinkOnPath)
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}

// OpenDir opens the folder dir (see Open); with create it first makes the
// folders missing on the way (0755), each inside the one opened before.
func OpenDir(dir string, create bool) (*os.File, error) {
	f, err := Open(dir, DirFlags, 0)
	if err == nil || !create || !errors.Is(err, fs.ErrNotExist) {
		return f, err
	}
	parent := filepath.Dir(dir)
	if parent == dir {
		return nil, err
	}
	p, err := OpenDir(parent, true)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	return MkdirIn(p, filepath.Base(dir))
}

// WriteFile replaces abs with data so readers never see a half-written
// file: a temporary file in the same folder (made where missing), renamed
// over abs, both named relative to the folder opened once (OpenDir).
func WriteFile(abs string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(abs)
	d, err := OpenDir(dir, true)
	if err != nil {
		return fmt.Errorf("create directory %s: %w", dir, err)
	}
	defer d.Close()
	tmp, name, err := CreateTempIn(d, "."+filepath.Base(abs)+".tmp-")
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	fail := func(err error) error {
		_ = tmp.Close()
		_ = RemoveIn(d, name)
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(fmt.Errorf("write %s: %w", abs, err))
	}
	if err := tmp.Sync(); err != nil {
		return fail(fmt.Errorf("sync %s: %w", abs, err))
	}
	if err := tmp.Chmod(mode); err != nil {
		return fail(fmt.Errorf("chmod %s: %w", abs, err))
	}
	if err := tmp.Close(); err != nil {
		_ = RemoveIn(d, name)
		return fmt.Errorf("close %s: %w", abs, err)
	}
	if err := RenameIn(d, name, d, filepath.Base(abs)); err != nil {
		_ = RemoveIn(d, name)
		return fmt.Errorf("replace %s: %w", abs, err)
	}
	return nil
}

// Remove deletes the file abs names, in its folder opened by OpenDir.
func Remove(abs string) error {
	d, err := OpenDir(filepath.Dir(abs), false)
	if err != nil {
		return err
	}
	defer d.Close()
	return RemoveIn(d, filepath.Base(abs))
}

// Rename renames the entry src to dst (whose missing folders it makes),
// both in folders opened by OpenDir; src itself may be a symlink, which
// is moved, not followed.
func Rename(src, dst string) error {
	s, err := OpenDir(filepath.Dir(src), false)
	if err != nil {
		return err
	}
	defer s.Close()
	d, err := OpenDir(filepath.Dir(dst), true)
	if err != nil {
		return err
	}
	defer d.Close()
	return RenameIn(s, filepath.Base(src), d, filepath.Base(dst))
}
