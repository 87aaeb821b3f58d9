package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reasonix/reasonix/internal/gitignore"
)

// alwaysSkipped names directories a checkpoint never holds, at any depth:
// version control internals and Reasonix's own state.
func alwaysSkipped(name string) bool { return name == ".git" || name == ".reasonix" }

// scanStats counts a scan's work.
type scanStats struct {
	hashed   int
	newBlobs int
	newBytes int64
}

// scan captures the workspace: it walks it, stores the content of new and
// changed files, and returns the manifest (without id or labels), counts,
// and what is still to be made durable with the manifest (the new blobs
// and stat cache: see settle). The caller holds the lock.
func (s *Store) scan(ctx context.Context) (*Manifest, scanStats, pending, error) {
	var st scanStats
	var p pending
	start := time.Now()
	w := &walker{ctx: ctx, s: s}
	if err := w.dir(s.workspace, "", s.rootRules()); err != nil {
		return nil, st, p, err
	}
	cache := s.loadStatCache()
	next := make(map[string]statEntry, len(w.files))
	results := make([]fileResult, len(w.files))
	var hashed, newBlobs atomic.Int64
	var newBytes atomic.Int64
	var idx atomic.Int64
	// Hashing is CPU work, storing is file-system work that blocks in
	// system calls: more workers than CPUs keep both busy.
	workers := min(max(8, 2*runtime.GOMAXPROCS(0)), max(1, len(w.files)))
	work := func() {
		for {
			i := int(idx.Add(1) - 1)
			if i >= len(w.files) || ctx.Err() != nil {
				return
			}
			r := &results[i]
			rel := w.files[i]
			abs := filepath.Join(s.workspace, filepath.FromSlash(rel))
			fi, err := os.Lstat(abs)
			if err != nil {
				r.skip = &Skip{Path: rel, Reason: "unreadable: " + errText(err)}
				continue
			}
			if fi.Mode()&fs.ModeSymlink != 0 { // replaced since the walk
				r.file, r.skip = linkFile(abs, rel)
				continue
			}
			if !fi.Mode().IsRegular() {
				r.skip = &Skip{Path: rel, Reason: "not a regular file"}
				continue
			}
			if s.maxSize >= 0 && fi.Size() > s.maxSize {
				r.skip = tooBig(rel, fi.Size(), s.maxSize)
				continue
			}
			ino, ctime := sysStat(fi)
			k := statKey{size: fi.Size(), mtime: fi.ModTime().UnixNano(), ctime: ctime, ino: ino}
			f := &File{Path: rel, Mode: fi.Mode().Perm(), Size: fi.Size()}
			if e, ok := cache[rel]; ok && e.key == k {
				f.Hash = e.hash
			} else {
				if s.testHook != nil {
					s.testHook(rel)
				}
				h, n, added, err := s.storeFile(abs, fi.Size())
				hashed.Add(1)
				if errors.Is(err, errTooBig) {
					r.skip = tooBig(rel, n, s.maxSize)
					continue
				}
				if err != nil {
					r.skip = &Skip{Path: rel, Reason: "unreadable: " + errText(err)}
					continue
				}
				if added {
					newBlobs.Add(1)
					newBytes.Add(n)
					r.added = true
				}
				f.Hash, f.Size = h, n
			}
			r.file = f
			// A file modified this close to the scan may change again
			// within the same mtime tick: hash it again next time.
			if time.Unix(0, k.mtime).Before(start.Add(-s.racyWindow)) && f.Size == k.size {
				r.cache = &statEntry{key: k, hash: f.Hash}
			}
		}
	}
	// One of the workers is this goroutine: a workspace of a few files
	// needs no other, and a new goroutine can wait a millisecond for a
	// core on a busy machine.
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, st, p, err
	}
	m := &Manifest{Files: w.links, Dirs: w.empty, Skipped: w.skipped}
	for i, r := range results {
		if r.file != nil {
			m.Files = append(m.Files, *r.file)
		}
		if r.skip != nil {
			m.Skipped = append(m.Skipped, *r.skip)
		}
		if r.cache != nil {
			next[w.files[i]] = *r.cache
		}
	}
	sort.Slice(m.Files, func(i, j int) bool { return m.Files[i].Path < m.Files[j].Path })
	sort.Strings(m.Dirs)
	sort.Slice(m.Skipped, func(i, j int) bool { return m.Skipped[i].Path < m.Skipped[j].Path })
	for _, f := range m.Files {
		m.NumFiles++
		m.Bytes += f.Size
	}
	for _, r := range results {
		if r.added {
			p.added = append(p.added, r.file.Hash)
		}
	}
	if !sameCache(cache, next) {
		p.cache = next
	}
	st.hashed, st.newBlobs, st.newBytes = int(hashed.Load()), int(newBlobs.Load()), newBytes.Load()
	return m, st, p, nil
}

// pending is what a scan leaves to be made durable with the manifest that
// names it (Store.settle): the blobs it added and the new stat cache.
type pending struct {
	added []string             // hashes of the new blobs
	cache map[string]statEntry // nil when the cache did not change
}

// fileResult is what a scan worker found for one file.
type fileResult struct {
	file  *File
	skip  *Skip
	cache *statEntry
	added bool // the file's content is a new blob
}

// rootRules returns the ignore rules that apply at the workspace root
// before its own .gitignore: the enclosing repository's, then Options.Ignore.
func (s *Store) rootRules() *gitignore.Matcher {
	m := gitignore.Enclosing(s.workspace)
	if len(s.extra) > 0 {
		m = m.Add("", gitignore.Parse([]byte(strings.Join(s.extra, "\n"))))
	}
	return m
}

func tooBig(rel string, size, limit int64) *Skip {
	return &Skip{Path: rel, Size: size, Reason: fmt.Sprintf("larger than %s", byteSize(limit))}
}

func linkFile(abs, rel string) (*File, *Skip) {
	target, err := os.Readlink(abs)
	if err != nil {
		return nil, &Skip{Path: rel, Reason: "unreadable symlink: " + errText(err)}
	}
	if target == "" {
		return nil, &Skip{Path: rel, Reason: "symlink with an empty target"}
	}
	return &File{Path: rel, Link: target}, nil
}

// errText is err without the path a PathError repeats.
func errText(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

func byteSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// walker lists the workspace's entries that a checkpoint holds.
type walker struct {
	ctx     context.Context
	s       *Store
	files   []string // regular files, to stat and hash
	links   []File   // symlinks, read during the walk
	empty   []string // empty directories
	skipped []Skip
}

func (w *walker) dir(abs, rel string, ign *gitignore.Matcher) error {
	if err := w.ctx.Err(); err != nil {
		return err
	}
	ents, err := os.ReadDir(abs)
	if err != nil {
		if rel == "" {
			return fmt.Errorf("checkpoint: read workspace: %w", err)
		}
		w.skipped = append(w.skipped, Skip{Path: rel, Dir: true, Reason: "unreadable directory: " + errText(err)})
		return nil
	}
	if len(ents) == 0 && rel != "" {
		w.empty = append(w.empty, rel)
		return nil
	}
	for _, e := range ents {
		if e.Name() == ".gitignore" {
			ign = ign.LoadDir(abs, rel)
			break
		}
	}
	for _, e := range ents {
		name := e.Name()
		if alwaysSkipped(name) {
			continue
		}
		r := name
		if rel != "" {
			r = rel + "/" + name
		}
		if r == w.s.skipRel {
			continue
		}
		isDir := e.IsDir()
		if ign.Ignored(r, isDir) {
			continue
		}
		a := filepath.Join(abs, name)
		switch t := e.Type(); {
		case isDir:
			if err := w.dir(a, r, ign); err != nil {
				return err
			}
		case t&fs.ModeSymlink != 0:
			f, skip := linkFile(a, r)
			if f != nil {
				w.links = append(w.links, *f)
			} else {
				w.skipped = append(w.skipped, *skip)
			}
		case t.IsRegular():
			w.files = append(w.files, r)
		default:
			w.skipped = append(w.skipped, Skip{Path: r, Reason: "not a regular file"})
		}
	}
	return nil
}
