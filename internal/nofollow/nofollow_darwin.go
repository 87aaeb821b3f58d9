package nofollow

import (
	"errors"

	"golang.org/x/sys/unix"
)

const pathFlags = unix.O_RDONLY

// openNoLinks opens with O_NOFOLLOW_ANY (macOS 11); done is false where
// the system does not know the flag.
func openNoLinks(abs string, flag int, perm uint32) (fd int, err error, done bool) {
	fd, err = unix.Open(abs, flag|unix.O_NOFOLLOW_ANY, perm)
	if errors.Is(err, unix.EINVAL) {
		return -1, err, false
	}
	return fd, err, true
}
