package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// inMemory is the size up to which a file is read whole before hashing;
// larger ones stream to a temporary blob while they are hashed.
const inMemory = 1 << 20

// blobPath returns where the content with hash h is stored.
func (s *Store) blobPath(h string) string {
	return filepath.Join(s.dir, blobsDir, h[:2], h)
}

// hasBlob reports whether the store holds the content with hash h.
func (s *Store) hasBlob(h string) bool {
	_, err := os.Lstat(s.blobPath(h))
	return err == nil
}

// errTooBig reports a file that grew past the cap while it was read.
var errTooBig = errors.New("file grew past the size cap")

// storeFile hashes the file at abs and stores its content unless the store
// has it. It returns the hash, the bytes read and whether a blob was added.
func (s *Store) storeFile(abs string, size int64) (h string, n int64, added bool, err error) {
	f, err := os.Open(abs)
	if err != nil {
		return "", 0, false, err
	}
	defer f.Close()
	limit := s.maxSize
	if limit < 0 {
		limit = 1<<63 - 2
	}
	r := io.LimitReader(f, limit+1)
	if size <= inMemory {
		data, err := io.ReadAll(r)
		if err != nil {
			return "", 0, false, err
		}
		if int64(len(data)) > limit {
			return "", 0, false, errTooBig
		}
		sum := sha256.Sum256(data)
		h = hex.EncodeToString(sum[:])
		if s.hasBlob(h) {
			return h, int64(len(data)), false, nil
		}
		if err := s.putBlob(h, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
			return "", 0, false, err
		}
		return h, int64(len(data)), true, nil
	}
	// Stream into a temporary file in blobs/ while hashing, then rename it
	// into its shard, or drop it when the content is already stored.
	tmp, err := os.CreateTemp(filepath.Join(s.dir, blobsDir), tmpPrefix+"*")
	if err != nil {
		return "", 0, false, err
	}
	defer os.Remove(tmp.Name()) // a no-op after the rename
	hw := sha256.New()
	n, err = io.Copy(io.MultiWriter(tmp, hw), r)
	if err == nil && syncEachBlob {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", 0, false, err
	}
	if n > limit {
		return "", 0, false, errTooBig
	}
	h = hex.EncodeToString(hw.Sum(nil))
	if s.hasBlob(h) {
		return h, n, false, nil
	}
	if err := s.shard(h); err != nil {
		return "", 0, false, err
	}
	if err := os.Rename(tmp.Name(), s.blobPath(h)); err != nil {
		return "", 0, false, err
	}
	return h, n, true, nil
}

// putBlob writes a blob through a temporary file in its shard.
func (s *Store) putBlob(h string, write func(io.Writer) error) error {
	if err := s.shard(h); err != nil {
		return err
	}
	dir := filepath.Join(s.dir, blobsDir, h[:2])
	f, err := os.CreateTemp(dir, tmpPrefix+"*")
	if err != nil {
		return err
	}
	err = write(f)
	if err == nil && syncEachBlob {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), s.blobPath(h))
	}
	if err != nil {
		os.Remove(f.Name())
	}
	return err
}

// shard makes sure the directory of hash h's blob exists.
func (s *Store) shard(h string) error {
	s.shardMu.Lock()
	defer s.shardMu.Unlock()
	if s.shards[h[:2]] {
		return nil
	}
	dir := filepath.Join(s.dir, blobsDir, h[:2])
	err := os.Mkdir(dir, 0o700)
	if err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if err == nil {
		s.made = append(s.made, dir)
	}
	if s.shards == nil {
		s.shards = map[string]bool{}
	}
	s.shards[h[:2]] = true
	return nil
}

// copyBlob writes the content with hash h to w, checking it against h.
func (s *Store) copyBlob(h string, w io.Writer) error {
	f, err := os.Open(s.blobPath(h))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("content %s is missing from the store", h[:12])
		}
		return err
	}
	defer f.Close()
	hw := sha256.New()
	if _, err := io.Copy(io.MultiWriter(w, hw), f); err != nil {
		return err
	}
	if got := hex.EncodeToString(hw.Sum(nil)); got != h {
		return fmt.Errorf("content %s in the store is damaged (it hashes to %s)", h[:12], got[:12])
	}
	return nil
}
