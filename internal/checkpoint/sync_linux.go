package checkpoint

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncEachBlob is false where one syncfs flushes every new blob at once.
const syncEachBlob = false

// syncStore flushes the file system holding the store, new blobs included.
func syncStore(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return unix.Syncfs(int(f.Fd()))
}
