//go:build linux && !mips && !mipsle && !mips64 && !mips64le

package permission

import (
	"path/filepath"

	"golang.org/x/sys/unix"
)

// busSockets lists the sockets of paths that exist now, each as the file
// it is (symlinks followed), for the helper to hide.
func busSockets(paths []string) []hiddenFile {
	var out []hiddenFile
	for _, p := range paths {
		r, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		var st unix.Stat_t
		if unix.Lstat(r, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFSOCK {
			continue
		}
		out = append(out, hiddenFile{path: r, dev: uint64(st.Dev), ino: st.Ino})
	}
	return out
}

// redactFiles lists the files of list that exist now, each as the file it
// is, with the variables the helper leaves out of the copy it mounts.
func redactFiles(list []Redaction) []hiddenFile {
	var out []hiddenFile
	for _, r := range list {
		p, err := filepath.EvalSymlinks(r.Path)
		var st unix.Stat_t
		if err != nil || len(r.Names) == 0 || unix.Lstat(p, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
			continue
		}
		out = append(out, hiddenFile{path: p, dev: uint64(st.Dev), ino: st.Ino, redact: r.Names})
	}
	return out
}
