//go:build unix

package builtin

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

const (
	// readFlags opens a file to read without blocking on a FIFO; what it
	// opened is judged by its stat.
	readFlags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY
	dirFlags  = unix.O_RDONLY | unix.O_DIRECTORY
)

// openNoFollow opens abs, an absolute path the guard resolved, failing
// when a symlink is on its path (its last component included): in one
// system call where the kernel can refuse symlinks on a path (openat2's
// RESOLVE_NO_SYMLINKS, O_NOFOLLOW_ANY), else one component at a time
// with O_NOFOLLOW.
func openNoFollow(abs string, flag int, perm fs.FileMode) (*os.File, error) {
	flag |= unix.O_CLOEXEC
	fd, err, done := openNoLinks(abs, flag, uint32(perm.Perm()))
	if !done {
		fd, err = openByComponents(abs, flag, uint32(perm.Perm()))
	}
	if err != nil {
		return nil, linkError("open", abs, err)
	}
	return os.NewFile(uintptr(fd), abs), nil
}

// openByComponents opens abs from / one component at a time, none of
// them followed if it is a symlink.
func openByComponents(abs string, flag int, perm uint32) (int, error) {
	dfd, err := openParent(abs)
	if err != nil {
		return -1, err
	}
	defer unix.Close(dfd)
	base := filepath.Base(abs)
	if base == string(filepath.Separator) {
		return unix.Openat(dfd, ".", flag, perm)
	}
	return unix.Openat(dfd, base, flag|unix.O_NOFOLLOW, perm)
}

// openParent opens the folder holding abs, following no symlink.
func openParent(abs string) (int, error) {
	fd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for _, c := range strings.Split(filepath.Dir(abs), string(filepath.Separator)) {
		if c == "" {
			continue
		}
		next, err := unix.Openat(fd, c, pathFlags|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

// isLinkErr reports whether err is what opening through a symlink with
// symlinks refused gives.
func isLinkErr(err error) bool {
	return errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK)
}

// openDirNoFollow opens the folder dir without following a symlink on
// its path; with create it first makes the folders missing on it (0755),
// each inside the one opened before it.
func openDirNoFollow(dir string, create bool) (*os.File, error) {
	f, err := openNoFollow(dir, dirFlags, 0)
	if err == nil || !create || !errors.Is(err, fs.ErrNotExist) {
		return f, err
	}
	parent := filepath.Dir(dir)
	if parent == dir {
		return nil, err
	}
	p, err := openDirNoFollow(parent, true)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	base := filepath.Base(dir)
	if err := unix.Mkdirat(int(p.Fd()), base, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, &fs.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	fd, err := unix.Openat(int(p.Fd()), base, dirFlags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, linkError("open", dir, err)
	}
	return os.NewFile(uintptr(fd), dir), nil
}

// atomicWrite replaces abs with data so readers never see a half-written
// file: it writes a temporary file in the same directory and renames it
// over abs. The folder is opened once, without following a symlink on
// its path (made first where missing), and both files are named relative
// to it, so no swap of a folder on the way can send the write elsewhere.
func atomicWrite(abs string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(abs)
	d, err := openDirNoFollow(dir, true)
	if err != nil {
		return fmt.Errorf("create directory %s: %w", dir, err)
	}
	defer d.Close()
	dfd := int(d.Fd())
	base := filepath.Base(abs)
	var name string
	fd := -1
	for range 100 {
		name = "." + base + ".tmp-" + strconv.FormatUint(uint64(rand.Uint32()), 10)
		fd, err = unix.Openat(dfd, name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if !errors.Is(err, unix.EEXIST) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	tmp := os.NewFile(uintptr(fd), filepath.Join(dir, name))
	fail := func(err error) error {
		_ = tmp.Close()
		_ = unix.Unlinkat(dfd, name, 0)
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
		_ = unix.Unlinkat(dfd, name, 0)
		return fmt.Errorf("close %s: %w", abs, err)
	}
	if err := unix.Renameat(dfd, name, dfd, base); err != nil {
		_ = unix.Unlinkat(dfd, name, 0)
		return fmt.Errorf("replace %s: %w", abs, err)
	}
	return nil
}

// removeNoFollow deletes the file abs names in a folder opened without
// following a symlink on its path.
func removeNoFollow(abs string) error {
	d, err := openDirNoFollow(filepath.Dir(abs), false)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := unix.Unlinkat(int(d.Fd()), filepath.Base(abs), 0); err != nil {
		return &fs.PathError{Op: "remove", Path: abs, Err: err}
	}
	return nil
}

// renameNoFollow renames the entry src to dst (whose missing folders it
// makes), both named in folders opened without following a symlink on
// their paths; src itself may be a symlink, which is moved, not followed.
func renameNoFollow(src, dst string) error {
	s, err := openDirNoFollow(filepath.Dir(src), false)
	if err != nil {
		return err
	}
	defer s.Close()
	d, err := openDirNoFollow(filepath.Dir(dst), true)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := unix.Renameat(int(s.Fd()), filepath.Base(src), int(d.Fd()), filepath.Base(dst)); err != nil {
		return &os.LinkError{Op: "rename", Old: src, New: dst, Err: err}
	}
	return nil
}

// linkCount is the number of names of the file fi describes.
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
