//go:build !windows

package store

import "os"

// syncDir makes the entries of dir durable (a rename into it): POSIX
// promises a file's new name survives a power cut only once its
// directory is synced.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}
