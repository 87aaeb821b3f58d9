package nofollow

import (
	"errors"

	"golang.org/x/sys/unix"
)

// pathFlags opens the folders on a path one at a time without needing to
// read them.
const pathFlags = unix.O_PATH

// openNoLinks is openat2 with RESOLVE_NO_SYMLINKS (Linux 5.6); done is
// false where the kernel or a seccomp filter lacks it.
func openNoLinks(abs string, flag int, perm uint32) (fd int, err error, done bool) {
	how := unix.OpenHow{Flags: uint64(flag), Resolve: unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS}
	if flag&(unix.O_CREAT|unix.O_TMPFILE) != 0 {
		how.Mode = uint64(perm)
	}
	fd, err = unix.Openat2(unix.AT_FDCWD, abs, &how)
	if errors.Is(err, unix.ENOSYS) {
		return -1, err, false
	}
	return fd, err, true
}
