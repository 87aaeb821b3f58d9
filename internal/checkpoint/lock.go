package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/reasonix/reasonix/internal/flock"
)

// lock takes the store's lock file, shared or exclusive, blocking until it
// is granted; the lock is per open file, so it also orders goroutines of
// one process. The returned function releases it. A process that dies
// releases its locks with its files.
func (s *Store) lock(exclusive bool) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(s.dir, lockFile), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: lock: %w", err)
	}
	if err := flock.Lock(f, exclusive); err != nil {
		f.Close()
		return nil, fmt.Errorf("checkpoint: lock %s: %w", f.Name(), err)
	}
	return func() {
		flock.Unlock(f)
		f.Close()
	}, nil
}
