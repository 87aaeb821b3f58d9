//go:build linux

package builtin

import (
	"os"

	"golang.org/x/sys/unix"
)

// listFile returns the file the watcher's list is kept in: memory only,
// reachable by no path, closed on exec (the watcher gets it explicitly).
func listFile() (*os.File, error) {
	fd, err := unix.MemfdCreate("reasonix-reaper", unix.MFD_CLOEXEC)
	if err != nil {
		return tempListFile()
	}
	return os.NewFile(uintptr(fd), "reasonix-reaper"), nil
}
