package builtin

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// On Windows the file tools open paths by name: making a symlink there
// takes a privilege or developer mode, and the commands are not confined
// by an OS sandbox that this would bypass.

const (
	readFlags = os.O_RDONLY
	dirFlags  = os.O_RDONLY
)

func openNoFollow(abs string, flag int, perm fs.FileMode) (*os.File, error) {
	return os.OpenFile(abs, flag, perm)
}

func isLinkErr(error) bool { return false }

func openDirNoFollow(dir string, create bool) (*os.File, error) {
	if create {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	}
	return os.Open(dir)
}

// atomicWrite replaces abs with data so readers never see a half-written
// file: it writes a temporary file in the same directory and renames it.
func atomicWrite(abs string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(abs)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create directory %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(abs)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create temporary file: %w", err)
	}
	name := tmp.Name()
	fail := func(err error) error {
		_ = tmp.Close()
		_ = os.Remove(name)
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
		_ = os.Remove(name)
		return fmt.Errorf("close %s: %w", abs, err)
	}
	if err := os.Rename(name, abs); err != nil {
		_ = os.Remove(name)
		return fmt.Errorf("replace %s: %w", abs, err)
	}
	return nil
}

func removeNoFollow(abs string) error { return os.Remove(abs) }

func renameNoFollow(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return os.Rename(src, dst)
}

func linkCount(fs.FileInfo) uint64 { return 1 }
