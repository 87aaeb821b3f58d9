//go:build !unix

package permission

import "io/fs"

func inode(fs.FileInfo) uint64 { return 0 }

// linkCount is 1 here: hard links are not checked on this platform.
func linkCount(fs.FileInfo) uint64 { return 1 }
