package checkpoint

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/reasonix/reasonix/internal/store"
)

// maxFileSyncs is the number of new blobs up to which a checkpoint syncs
// each of them (and the directories that received them) rather than the
// whole file system. A syncfs waits for every dirty page of the file
// system, other programs' included: one took 160 ms on a machine busy
// with builds, to make one 6-byte blob durable, while an fsync of the
// blob and its directory took about 1 ms. Past this many files, the one
// syncfs is cheaper than the fsyncs.
const maxFileSyncs = 32

// settle makes a scan's new blobs durable together with the files that
// name them: the manifest at path (none when path is empty) and the new
// stat cache. Those two are written to temporary files first, synced in
// one batch with the blobs and the directories that received them (see
// syncBlobs), and renamed into place once the whole batch has reached the
// disk. So neither can survive a power loss that lost content it names,
// and a checkpoint waits for the disk once, not once per file.
func (s *Store) settle(p pending, path string, data []byte) error {
	type staged struct {
		f         *os.File // open until synced; nil once closed
		tmp, path string
		what      string
		renamed   bool
	}
	var files []*staged
	defer func() {
		for _, f := range files {
			if f.f != nil {
				f.f.Close()
			}
			if !f.renamed {
				os.Remove(f.tmp)
			}
		}
	}()
	stage := func(path string, data []byte, what string) error {
		f, err := writeTemp(path, data)
		if err != nil {
			return fmt.Errorf("checkpoint: %s: %w", what, err)
		}
		files = append(files, &staged{f: f, tmp: f.Name(), path: path, what: what})
		return nil
	}
	// The cache before the manifest: a cache that cannot be saved fails
	// the checkpoint before it exists, as it always has.
	if p.cache != nil {
		if err := stage(filepath.Join(s.dir, statFile), encodeStatCache(p.cache), "save stat cache"); err != nil {
			return err
		}
	}
	if path != "" {
		if err := stage(path, data, "write manifest"); err != nil {
			return err
		}
	}
	// Synced through the descriptors they were written with: opening
	// them again by name would cost two more system calls each.
	open := make([]*os.File, len(files))
	for i, f := range files {
		open[i] = f.f
	}
	if err := s.syncBlobs(p.added, open); err != nil {
		return fmt.Errorf("checkpoint: sync store: %w", err)
	}
	for _, f := range files {
		err := f.f.Close()
		f.f = nil
		if err != nil {
			return fmt.Errorf("checkpoint: %s: %w", f.what, err)
		}
	}
	for _, f := range files {
		if err := os.Rename(f.tmp, f.path); err != nil {
			return fmt.Errorf("checkpoint: %s: %w", f.what, err)
		}
		f.renamed = true
		s.logSync("rename", f.path)
	}
	return nil
}

// writeTemp writes data to a new temporary file beside path, unsynced,
// and returns it open.
func writeTemp(path string, data []byte) (*os.File, error) {
	f, err := os.CreateTemp(filepath.Dir(path), tmpPrefix+"*")
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// syncBlobs makes the blobs a scan added (by hash), and the directory
// entries that name them, reach the disk, and with them files (the
// temporary files of the manifest and stat cache that will name them,
// open): all in parallel, as one batch, the last on the calling goroutine
// (a goroutine more can wait a millisecond for a core on a busy machine).
// Where there is no syncfs, each blob was synced before its rename, and
// only files are synced here.
func (s *Store) syncBlobs(added []string, files []*os.File) error {
	s.shardMu.Lock()
	made, fresh := s.made, s.fresh
	if len(added) > 0 {
		s.made = nil
	}
	s.fresh = false
	s.shardMu.Unlock()
	if syncEachBlob {
		added = nil
	}
	if len(added) > maxFileSyncs {
		// The file system at once: files included.
		s.logSync("syncfs", s.dir)
		return syncStore(s.dir)
	}
	// The syncs are independent: all of them, in parallel, come before
	// the manifest's rename; one at a time they would wait for the disk
	// in turn.
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
	// its marker, not synced when it was written, and entries of its
	// parents. Its first batch syncs them whether or not blobs were added:
	// no manifest is renamed into place before its marker is on disk.
	if len(added) > 0 && (len(made) > 0 || fresh) {
		add(filepath.Join(s.dir, blobsDir))
	}
	if fresh {
		add(filepath.Join(s.dir, markerFile))
		add(s.dir)
		add(filepath.Dir(s.dir))
		add(filepath.Dir(filepath.Dir(s.dir)))
	}
	n := len(files) + len(paths)
	errs := make([]error, n)
	name := func(i int) string {
		if i < len(files) {
			return files[i].Name()
		}
		return paths[i-len(files)]
	}
	do := func(i int) {
		if i < len(files) {
			errs[i] = files[i].Sync()
		} else {
			errs[i] = store.SyncPath(paths[i-len(files)])
		}
	}
	var wg sync.WaitGroup
	for i := range n - 1 {
		wg.Go(func() { do(i) })
	}
	if n > 0 {
		do(n - 1)
	}
	wg.Wait()
	for i := range n {
		p := name(i)
		if errs[i] != nil {
			if fresh {
				// The marker may not be on disk: the next batch syncs it.
				s.shardMu.Lock()
				s.fresh = true
				s.shardMu.Unlock()
			}
			return errs[i]
		}
		s.logSync("fsync", p)
	}
	return nil
}

func (s *Store) logSync(op, path string) {
	if s.syncLog != nil {
		s.syncLog(op, path)
	}
}
