package checkpoint

import (
	"io/fs"
	"syscall"
)

// sysStat returns the inode and change time of fi, where the platform has them.
func sysStat(fi fs.FileInfo) (ino uint64, ctime int64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino), st.Ctimespec.Nano()
	}
	return 0, 0
}
