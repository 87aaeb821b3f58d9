package checkpoint

import (
	"os"
	"path/filepath"
	"sync"
)

// maxFileSyncs is the number of new blobs up to which a checkpoint syncs
// each of them (and the directories that received them) rather than the
// whole file system. A syncfs waits for every dirty page of the file
// system, other programs' included: one took 160 ms on a machine busy
// with builds, to make one 6-byte blob durable, while an fsync of the
// blob and its directory took about 1 ms. Past this many files, the one
// syncfs is cheaper than the fsyncs.
const maxFileSyncs = 32

// syncBlobs makes the blobs a scan added (by hash), and the directory
// entries that name them, reach the disk before a manifest names them.
// Where there is no syncfs, each blob was synced before its rename.
func (s *Store) syncBlobs(added []string) error {
	s.shardMu.Lock()
	made, fresh := s.made, s.fresh
	if len(added) > 0 {
		s.made, s.fresh = nil, false
	}
	s.shardMu.Unlock()
	if len(added) == 0 || syncEachBlob {
		return nil
	}
	if len(added) > maxFileSyncs {
		s.logSync("syncfs", s.dir)
		return syncStore(s.dir)
	}
	// The syncs are independent: all of them, in parallel, come before
	// the manifest; one at a time they would wait for the disk in turn.
	paths := make([]string, 0, 2*len(added)+4)
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			paths = append(paths, p)
		}
	}
	for _, h := range added {
		add(s.blobPath(h))
	}
	for _, h := range added {
		add(filepath.Dir(s.blobPath(h)))
	}
	// A new shard is an entry of blobs/; a store this process made is
	// entries of its parents (the marker was synced when it was written).
	if len(made) > 0 || fresh {
		add(filepath.Join(s.dir, blobsDir))
	}
	if fresh {
		add(s.dir)
		add(filepath.Dir(s.dir))
		add(filepath.Dir(filepath.Dir(s.dir)))
	}
	errs := make([]error, len(paths))
	var wg sync.WaitGroup
	for i, p := range paths {
		wg.Go(func() { errs[i] = syncPath(p) })
	}
	wg.Wait()
	for i, p := range paths {
		if errs[i] != nil {
			return errs[i]
		}
		s.logSync("fsync", p)
	}
	return nil
}

// syncPath flushes one file or directory to the disk.
func syncPath(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (s *Store) logSync(op, path string) {
	if s.syncLog != nil {
		s.syncLog(op, path)
	}
}
