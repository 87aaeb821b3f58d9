//go:build unix

package checkpoint

import (
	"errors"
	"os"
	"syscall"
)

func lockFD(f *os.File, exclusive bool) error {
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}

func unlockFD(f *os.File) { syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
