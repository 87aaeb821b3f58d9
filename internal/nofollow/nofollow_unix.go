//go:build unix

package nofollow

import (
	"errors"
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
	// ReadFlags opens a file to read without blocking on a FIFO or
	// taking a terminal; what was opened is judged by its stat.
	ReadFlags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY
	// DirFlags opens a folder to list it or to name files in it.
	DirFlags = unix.O_RDONLY | unix.O_DIRECTORY
)

// Open opens abs, an absolute path free of symlinks, failing when a
// symlink is on it (its last component included): in one system call
// where the kernel can refuse symlinks on a path (openat2's
// RESOLVE_NO_SYMLINKS, O_NOFOLLOW_ANY), else one component at a time
// with O_NOFOLLOW.
func Open(abs string, flag int, perm fs.FileMode) (*os.File, error) {
	flag |= unix.O_CLOEXEC
	fd, err, done := openNoLinks(abs, flag, uint32(perm.Perm()))
	if !done {
		fd, err = openByComponents(abs, flag, uint32(perm.Perm()))
	}
	if err != nil {
		return nil, pathError("open", abs, err)
	}
	return os.NewFile(uintptr(fd), abs), nil
}

// openByComponents opens abs from / one component at a time, none of
// them followed if it is a symlink.
func openByComponents(abs string, flag int, perm uint32) (int, error) {
	dfd, err := unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	for _, c := range strings.Split(filepath.Dir(abs), string(filepath.Separator)) {
		if c == "" {
			continue
		}
		next, err := unix.Openat(dfd, c, pathFlags|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		unix.Close(dfd)
		if err != nil {
			return -1, err
		}
		dfd = next
	}
	defer unix.Close(dfd)
	base := filepath.Base(abs)
	if base == string(filepath.Separator) {
		return unix.Openat(dfd, ".", flag, perm)
	}
	return unix.Openat(dfd, base, flag|unix.O_NOFOLLOW, perm)
}

// IsLinkErr reports whether err is what opening through a symlink with
// symlinks refused gives.
func IsLinkErr(err error) bool {
	return errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EMLINK)
}

// MkdirIn makes the folder name in d (0755; one that exists will do) and
// opens it, not following it if it is a symlink.
func MkdirIn(d *os.File, name string) (*os.File, error) {
	path := filepath.Join(d.Name(), name)
	if err := unix.Mkdirat(int(d.Fd()), name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
		return nil, &fs.PathError{Op: "mkdir", Path: path, Err: err}
	}
	fd, err := unix.Openat(int(d.Fd()), name, DirFlags|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, pathError("open", path, err)
	}
	return os.NewFile(uintptr(fd), path), nil
}

// CreateTempIn makes a new file in d, mode 0600, named prefix and a
// random number, and returns it with its name.
func CreateTempIn(d *os.File, prefix string) (*os.File, string, error) {
	var err error
	for range 100 {
		name := prefix + strconv.FormatUint(uint64(rand.Uint32()), 10)
		var fd int
		fd, err = unix.Openat(int(d.Fd()), name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err == nil {
			return os.NewFile(uintptr(fd), filepath.Join(d.Name(), name)), name, nil
		}
		if !errors.Is(err, unix.EEXIST) {
			break
		}
	}
	return nil, "", &fs.PathError{Op: "create", Path: filepath.Join(d.Name(), prefix+"*"), Err: err}
}

// CreateIn makes the new file name in d, mode 0600 (it must not exist).
func CreateIn(d *os.File, name string) (*os.File, error) {
	fd, err := unix.Openat(int(d.Fd()), name, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return nil, &fs.PathError{Op: "create", Path: filepath.Join(d.Name(), name), Err: err}
	}
	return os.NewFile(uintptr(fd), filepath.Join(d.Name(), name)), nil
}

// SymlinkIn makes name in d a symlink to target.
func SymlinkIn(target string, d *os.File, name string) error {
	if err := unix.Symlinkat(target, int(d.Fd()), name); err != nil {
		return &os.LinkError{Op: "symlink", Old: target, New: filepath.Join(d.Name(), name), Err: err}
	}
	return nil
}

// RenameIn renames from in d to to in e.
func RenameIn(d *os.File, from string, e *os.File, to string) error {
	if err := unix.Renameat(int(d.Fd()), from, int(e.Fd()), to); err != nil {
		return &os.LinkError{Op: "rename", Old: filepath.Join(d.Name(), from), New: filepath.Join(e.Name(), to), Err: err}
	}
	return nil
}

// RemoveIn deletes the file, symlink or empty folder name in d, as
// os.Remove does.
func RemoveIn(d *os.File, name string) error {
	err := unix.Unlinkat(int(d.Fd()), name, 0)
	if err == nil {
		return nil
	}
	err1 := unix.Unlinkat(int(d.Fd()), name, unix.AT_REMOVEDIR)
	if err1 == nil {
		return nil
	}
	// rmdir of a file says ENOTDIR everywhere: then unlink's error is
	// the one that counts.
	if err1 != unix.ENOTDIR {
		err = err1
	}
	return &fs.PathError{Op: "remove", Path: filepath.Join(d.Name(), name), Err: err}
}

// LinkCount is the number of names of the file fi describes.
func LinkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
