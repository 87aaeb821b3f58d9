package builtin

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"

	"github.com/reasonix/reasonix/internal/gitignore"
	"github.com/reasonix/reasonix/internal/nofollow"
)

// walkEntry is one file or directory found by a walk.
type walkEntry struct {
	Abs   string
	Rel   string // relative to the workspace root, slash-separated
	IsDir bool
	Entry fs.DirEntry
}

// walkOptions configures walk.
type walkOptions struct {
	// Root is the workspace root: .gitignore files from Root down to Start apply.
	Root string
	// Start is the absolute directory to walk.
	Start string
	// Workers bounds parallelism; 0 means GOMAXPROCS, 1 walks in one goroutine.
	Workers int
	// NoIgnore turns .gitignore handling off (.git and node_modules stay skipped).
	NoIgnore bool
}

// relTo returns p relative to root with forward slashes, "" for root itself.
func relTo(root, p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil || r == "." {
		return ""
	}
	return filepath.ToSlash(r)
}

type dirJob struct {
	abs, rel string
	ign      *gitignore.Matcher
}

// walk visits every non-ignored entry below opts.Start (not Start itself)
// in parallel. visit runs concurrently from several goroutines; returning
// filepath.SkipDir for a directory prunes it. Symbolic links are reported but
// never followed. Entries arrive in no particular order: callers sort.
func walk(ctx context.Context, opts walkOptions, visit func(e walkEntry) error) error {
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if rel := relTo(opts.Root, opts.Start); rel == ".." || strings.HasPrefix(rel, "../") {
		// A guard may confine to directories outside the root; their
		// ignore files are theirs alone.
		opts.Root = opts.Start
	}
	var ign *gitignore.Matcher
	if !opts.NoIgnore {
		ign = gitignore.Ancestors(opts.Root, opts.Start)
	}
	w := &walker{ctx: ctx, opts: opts, visit: visit}
	w.cond = sync.NewCond(&w.mu)
	w.stack = []dirJob{{abs: opts.Start, rel: relTo(opts.Root, opts.Start), ign: ign}}
	w.pending = 1
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run()
		}()
	}
	// Wake idle workers when the caller gives up, so they notice and exit.
	stop := context.AfterFunc(ctx, func() {
		w.mu.Lock()
		w.cond.Broadcast()
		w.mu.Unlock()
	})
	wg.Wait()
	stop()
	if w.err != nil {
		return w.err
	}
	return ctx.Err()
}

type walker struct {
	ctx   context.Context
	opts  walkOptions
	visit func(walkEntry) error

	mu      sync.Mutex
	cond    *sync.Cond
	stack   []dirJob // LIFO keeps the walk roughly depth-first, which is kind to caches
	pending int      // directories queued or being read
	err     error
}

func (w *walker) run() {
	for {
		w.mu.Lock()
		for len(w.stack) == 0 && w.pending > 0 && w.err == nil && w.ctx.Err() == nil {
			w.cond.Wait()
		}
		if len(w.stack) == 0 || w.err != nil || w.ctx.Err() != nil {
			w.mu.Unlock()
			return
		}
		job := w.stack[len(w.stack)-1]
		w.stack = w.stack[:len(w.stack)-1]
		w.mu.Unlock()

		subdirs, err := w.readDir(job)

		w.mu.Lock()
		if err != nil && w.err == nil {
			w.err = err
		}
		w.stack = append(w.stack, subdirs...)
		w.pending += len(subdirs) - 1
		if w.pending == 0 || len(subdirs) > 0 || w.err != nil {
			w.cond.Broadcast()
		}
		w.mu.Unlock()
	}
}

// readDir lists one directory, visits its entries and returns the
// subdirectories still to walk. Unreadable directories are skipped silently,
// like unreadable files: a search reports what it can see.
func (w *walker) readDir(job dirJob) ([]dirJob, error) {
	f, err := nofollow.Open(job.abs, nofollow.DirFlags, 0)
	if err != nil {
		return nil, nil
	}
	ents, _ := f.ReadDir(-1)
	f.Close()
	ign := job.ign
	if !w.opts.NoIgnore {
		for _, e := range ents {
			if e.Name() == ".gitignore" {
				ign = ign.LoadDir(job.abs, job.rel)
				break
			}
		}
	}
	var subdirs []dirJob
	for _, e := range ents {
		if w.ctx.Err() != nil {
			return nil, nil
		}
		name := e.Name()
		if alwaysSkipped(name) {
			continue
		}
		rel := name
		if job.rel != "" {
			rel = job.rel + "/" + name
		}
		isDir := e.IsDir()
		if ign.Ignored(rel, isDir) {
			continue
		}
		abs := job.abs + string(os.PathSeparator) + name
		err := w.visit(walkEntry{Abs: abs, Rel: rel, IsDir: isDir, Entry: e})
		if err == filepath.SkipDir {
			continue
		}
		if err != nil {
			return nil, err
		}
		if isDir {
			subdirs = append(subdirs, dirJob{abs: abs, rel: rel, ign: ign})
		}
	}
	return subdirs, nil
}
