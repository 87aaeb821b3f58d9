package permission

import (
	"io/fs"
	"syscall"
)

// changeTime is the file's status change time (ctime) in nanoseconds, 0
// where unknown. Unlike the modification time, no call can set it: the
// kernel stamps it on every change of content or metadata.
func changeTime(fi fs.FileInfo) int64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return st.Ctim.Nano()
	}
	return 0
}
