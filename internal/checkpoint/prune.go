package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// PruneReport is the result of Prune.
type PruneReport struct {
	Removed   []string // ids of the checkpoints deleted, newest first
	Damaged   []string // manifests deleted because they could not be read
	Blobs     int      // stored contents deleted, no longer referenced
	Bytes     int64    // their size
	TempFiles int      // stray temporary files deleted (left by crashes)
}

// Prune keeps the newest keep checkpoints of the workspace and deletes the
// others, then the contents no remaining checkpoint references, damaged
// manifests and stray temporary files. It holds the store's lock
// exclusively, waiting for running checkpoints and restores to finish.
func (s *Store) Prune(keep int) (*PruneReport, error) {
	if keep < 0 {
		return nil, fmt.Errorf("checkpoint: prune: keep %d checkpoints?", keep)
	}
	unlock, err := s.lock(true)
	if err != nil {
		return nil, err
	}
	defer unlock()
	rep := &PruneReport{}
	ids, err := s.ids()
	if err != nil {
		return nil, err
	}
	var infos []Info
	for _, id := range ids {
		info, err := s.info(id)
		if err != nil {
			if os.Remove(s.manifestPath(id)) == nil {
				rep.Damaged = append(rep.Damaged, id)
			}
			continue
		}
		infos = append(infos, info)
	}
	sortNewest(infos)
	referenced := map[string]bool{}
	kept := 0
	for _, info := range infos {
		if kept < keep {
			m, err := s.loadManifest(info.ID)
			if err == nil {
				kept++
				for _, f := range m.Files {
					if f.Hash != "" {
						referenced[f.Hash] = true
					}
				}
				continue
			}
			if os.Remove(s.manifestPath(info.ID)) == nil {
				rep.Damaged = append(rep.Damaged, info.ID)
			}
			continue
		}
		if err := os.Remove(s.manifestPath(info.ID)); err != nil {
			return rep, fmt.Errorf("checkpoint: prune: %w", err)
		}
		rep.Removed = append(rep.Removed, info.ID)
	}
	// Under the exclusive lock nobody is writing: every temporary file is
	// a crash's leftover.
	for _, d := range []string{s.dir, filepath.Join(s.dir, manifestsDir), filepath.Join(s.dir, blobsDir)} {
		rep.TempFiles += removeTemps(d)
	}
	shards, err := os.ReadDir(filepath.Join(s.dir, blobsDir))
	if err != nil {
		return rep, fmt.Errorf("checkpoint: prune: %w", err)
	}
	var errs []error
	for _, sh := range shards {
		if !sh.IsDir() {
			continue
		}
		dir := filepath.Join(s.dir, blobsDir, sh.Name())
		ents, err := os.ReadDir(dir)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, e := range ents {
			name := e.Name()
			switch {
			case strings.HasPrefix(name, tmpPrefix):
				if os.Remove(filepath.Join(dir, name)) == nil {
					rep.TempFiles++
				}
			case !referenced[name]:
				var size int64
				if fi, err := e.Info(); err == nil {
					size = fi.Size()
				}
				if err := os.Remove(filepath.Join(dir, name)); err != nil {
					errs = append(errs, err)
					continue
				}
				rep.Blobs++
				rep.Bytes += size
			}
		}
	}
	// The stat cache must not vouch for contents that are gone.
	cache := s.loadStatCache()
	for p, e := range cache {
		if !referenced[e.hash] {
			delete(cache, p)
		}
	}
	if err := s.saveStatCache(cache); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return rep, fmt.Errorf("checkpoint: prune: %w", errors.Join(errs...))
	}
	return rep, nil
}

// removeTemps deletes the temporary files directly in dir.
func removeTemps(dir string) int {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), tmpPrefix) && os.Remove(filepath.Join(dir, e.Name())) == nil {
			n++
		}
	}
	return n
}
