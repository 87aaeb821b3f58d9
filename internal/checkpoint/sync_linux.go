package checkpoint

import (
	"os"

	"golang.org/x/sys/unix"
)

// syncEachBlob is false where new blobs are synced after the walk
// (syncBlobs): each of them, or the file system at once.
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
