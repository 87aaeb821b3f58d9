// Package checkpoint snapshots a workspace's files so that an agent's
// changes can be rewound (Claude Code's /rewind).
//
// A checkpoint is a snapshot of the whole workspace, not a log of tool
// edits, so changes made by shell commands are captured and rewound like
// those of the file tools. It holds every file git would see: .gitignore
// files (nested ones too, with negation), .git/info/exclude and the
// .gitignore files of an enclosing repository are honoured, and .git and
// .reasonix directories are always left out. Files over a size cap and
// entries that cannot be read are skipped, and the checkpoint says so.
//
// The caller checkpoints before the first change of each user turn and
// labels the checkpoint with the session and turn:
//
//	st, err := checkpoint.Open(workspace, checkpoint.Options{Home: home})
//	rep, err := st.Checkpoint(ctx, checkpoint.Labels{Session: sid, Turn: 3})
//	…
//	res, err := st.Restore(ctx, rep.ID, checkpoint.Labels{Session: sid, Turn: 5})
//	// res.Undo is a checkpoint of the workspace just before the restore:
//	// Restore(ctx, res.Undo, …) reverts the restore.
//	st.Prune(50)
//
// # Storage
//
// The store lives outside the project, under the Reasonix home, one
// directory per workspace; the project's .git, index, branches and stash
// are never touched, and git is not run:
//
//	<home>/checkpoints/<key>/             key: first 16 hex digits of SHA-256(absolute workspace path)
//	  store.json                          marks the directory as a store; names its workspace
//	  lock                                flock (LockFileEx on Windows): shared by checkpoints, exclusive for Restore and Prune
//	  blobs/<h[:2]>/<h>                   file contents, named by their SHA-256 h, deduplicated
//	  manifests/<id>.jsonl                one per checkpoint: a header line, then one line per entry
//	  statcache                           path → size, mtime, ctime, inode, hash
//
// Every file is written to a temporary ".tmp-*" file in its directory and
// renamed into place, so a crash leaves either the old file or the new one,
// never a torn one; stray temporary files are ignored and removed by Prune.
// New blobs reach the disk before the manifest and stat cache that name
// them (on Linux an fsync of each new blob and of the directories that
// received it, or one syncfs past 32 new blobs; elsewhere an fsync per
// blob before its rename), and manifests and the stat cache are synced
// before their rename (a checkpoint's in the same parallel batch as its
// blobs, renamed once the batch is done), so a power loss does not leave
// a checkpoint naming lost content either. Blob contents are
// checked against their names when restored.
//
// The stat cache makes checkpoints incremental: a file whose size, mtime,
// ctime and inode are unchanged since an earlier checkpoint is not read
// again. Entries for files modified within two seconds of a scan are not
// trusted ("racily clean", as git calls them) and are hashed next time.
//
// Several processes may use one store at once. Checkpoints (and Preview)
// hold the store's lock shared: their writes are renames of complete files,
// and a blob's name is its content. Restore holds it exclusively, so no
// checkpoint sees a half-restored workspace, and so does Prune, so no
// content goes while a checkpoint may still name it.
package checkpoint

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// DefaultMaxFileSize is the size above which files are skipped when
// Options.MaxFileSize is zero.
const DefaultMaxFileSize = 10 << 20

const (
	storeFormat  = "reasonix checkpoint store"
	storeVersion = 1
	markerFile   = "store.json"
	lockFile     = "lock"
	blobsDir     = "blobs"
	manifestsDir = "manifests"
	statFile     = "statcache"
	tmpPrefix    = ".tmp-"
	manifestExt  = ".jsonl"
)

// ErrNotFound is returned (wrapped) for a checkpoint id that names no
// checkpoint of the store.
var ErrNotFound = errors.New("no such checkpoint")

// ErrNotStore is returned (wrapped) by Open when the store's directory
// exists but is not a checkpoint store, or belongs to another workspace.
var ErrNotStore = errors.New("not a Reasonix checkpoint store")

// Options configures a Store.
type Options struct {
	// Home is the Reasonix home (config.Home); the store lives in
	// <Home>/checkpoints/<key>. Required.
	Home string
	// MaxFileSize is the largest file captured, in bytes; larger ones are
	// skipped and listed in the checkpoint's report. 0 means
	// DefaultMaxFileSize, a negative value means no limit.
	MaxFileSize int64
	// Ignore holds extra gitignore lines applied at the workspace root with
	// the precedence of .git/info/exclude: below every .gitignore file, so
	// a "!" line in one re-includes. An example is "node_modules/".
	Ignore []string
}

// Labels are the caller's names for a checkpoint.
type Labels struct {
	Session string // session id
	Turn    int    // user turn, counted from 1; 0 when not tied to a turn
	Note    string // free text shown in listings
}

// Info describes one checkpoint.
type Info struct {
	ID      string    `json:"id"`
	Created time.Time `json:"created"`
	Session string    `json:"session,omitempty"`
	Turn    int       `json:"turn,omitempty"`
	Note    string    `json:"note,omitempty"`
	// Restores is set on the checkpoint Restore takes of the workspace
	// before changing it: the id of the checkpoint it then restored.
	// Restoring this checkpoint undoes that restore.
	Restores string `json:"restores,omitempty"`
	NumFiles int    `json:"files"` // regular files and symlinks
	Bytes    int64  `json:"bytes"` // total size of the regular files
}

// File is one regular file or symlink of a checkpoint.
type File struct {
	Path string      `json:"path"`           // relative to the workspace, slash-separated
	Hash string      `json:"hash,omitempty"` // SHA-256 of the content, hex; "" for a symlink
	Mode fs.FileMode `json:"mode,omitempty"` // permission bits of a regular file
	Size int64       `json:"size,omitempty"` // bytes of a regular file
	Link string      `json:"link,omitempty"` // a symlink's target; non-empty exactly for symlinks
}

// IsLink reports whether f is a symlink.
func (f *File) IsLink() bool { return f.Link != "" }

// Skip is an entry a checkpoint left out, and why. Restore leaves such
// paths alone.
type Skip struct {
	Path   string `json:"path"`
	Dir    bool   `json:"dir,omitempty"`  // a directory (unreadable): everything below it is left out
	Size   int64  `json:"size,omitempty"` // for files over the size cap
	Reason string `json:"reason"`
}

// Manifest is a checkpoint's full content.
type Manifest struct {
	Info
	Files   []File   // sorted by Path
	Dirs    []string // empty directories, sorted
	Skipped []Skip   // sorted by Path
}

// Report is the result of Checkpoint.
type Report struct {
	Info
	// Skipped lists what the checkpoint left out (files over the size cap,
	// unreadable files and directories, sockets and devices), by path.
	Skipped []Skip
	// Hashed counts the files read and hashed; the others were unchanged
	// since an earlier checkpoint, by the stat cache.
	Hashed int
	// NewBlobs and NewBytes count the contents the store did not hold yet.
	NewBlobs int
	NewBytes int64
}

// Store is the checkpoint store of one workspace. Its methods are safe for
// concurrent use, also by several processes.
type Store struct {
	dir       string // the store directory
	workspace string // absolute, symlinks resolved
	maxSize   int64  // < 0: no cap
	extra     []string
	skipRel   string // the store's path in the workspace, when Home is inside it

	racyWindow time.Duration    // entries modified this close to a scan are not cached
	testHook   func(rel string) // called before each file is hashed (tests)

	shardMu sync.Mutex
	shards  map[string]bool       // blob shard directories known to exist
	made    []string              // shard directories made since the last sync
	fresh   bool                  // this process made the store; its directories are not synced yet
	syncLog func(op, path string) // called for each sync (tests)
}

// marker is the content of store.json.
type marker struct {
	Format    string `json:"format"`
	Version   int    `json:"version"`
	Workspace string `json:"workspace"`
}

// Open opens the checkpoint store of workspace (a directory), creating it
// when absent. It fails with ErrNotStore when the store's directory exists
// but holds something else, or the store of another workspace.
func Open(workspace string, opts Options) (*Store, error) {
	if opts.Home == "" {
		return nil, errors.New("checkpoint: no Reasonix home given")
	}
	ws, err := canonical(workspace)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: workspace: %w", err)
	}
	if fi, err := os.Stat(ws); err != nil {
		return nil, fmt.Errorf("checkpoint: workspace: %w", err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("checkpoint: workspace %s is not a directory", ws)
	}
	home, err := filepath.Abs(opts.Home)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: home: %w", err)
	}
	s := &Store{
		dir:        filepath.Join(home, "checkpoints", key(ws)),
		workspace:  ws,
		maxSize:    opts.MaxFileSize,
		extra:      opts.Ignore,
		racyWindow: 2 * time.Second,
	}
	if s.maxSize == 0 {
		s.maxSize = DefaultMaxFileSize
	}
	if err := s.init(); err != nil {
		return nil, err
	}
	// Home inside the workspace: do not checkpoint the store itself.
	if d, err := canonical(s.dir); err == nil {
		if r, err := filepath.Rel(ws, d); err == nil && r != "." && !strings.HasPrefix(r, "..") && !filepath.IsAbs(r) {
			s.skipRel = filepath.ToSlash(r)
		}
	}
	return s, nil
}

// canonical returns p absolute, with symlinks resolved, so one workspace
// has one key however it is reached.
func canonical(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// key names a workspace's store directory.
func key(ws string) string {
	if runtime.GOOS == "windows" {
		ws = strings.ToLower(ws) // paths are case-insensitive there
	}
	sum := sha256.Sum256([]byte(ws))
	return hex.EncodeToString(sum[:])[:16]
}

// sameWorkspace compares workspace paths as the platform does.
func sameWorkspace(a, b string) bool {
	if runtime.GOOS == "windows" {
		return strings.EqualFold(a, b)
	}
	return a == b
}

// init checks or creates the store directory. The marker is written (and
// renamed into place) before anything else, so another process never sees
// our files without it. It is synced with the first checkpoint's batch
// (syncBlobs), before any manifest can be renamed into place; a crash
// before that may leave the store's directories with an empty marker (or
// none), and such a store, holding nothing a checkpoint names, is taken
// as one whose creation was cut short (interrupted).
func (s *Store) init() error {
	if fi, err := os.Stat(s.dir); err == nil && !fi.IsDir() {
		return fmt.Errorf("checkpoint: %s: %w (a file, not a directory)", s.dir, ErrNotStore)
	}
	p := filepath.Join(s.dir, markerFile)
	data, err := os.ReadFile(p)
	if err == nil && interrupted(data) {
		err = fs.ErrNotExist
	}
	switch {
	case err == nil:
		var m marker
		if err := json.Unmarshal(data, &m); err != nil || m.Format != storeFormat {
			return fmt.Errorf("checkpoint: %s: %w (unreadable %s)", s.dir, ErrNotStore, markerFile)
		}
		if m.Version > storeVersion {
			return fmt.Errorf("checkpoint: %s was written by a newer Reasonix (format %d, this one reads %d)", s.dir, m.Version, storeVersion)
		}
		if !sameWorkspace(m.Workspace, s.workspace) {
			return fmt.Errorf("checkpoint: %s: %w: it belongs to workspace %s, not %s", s.dir, ErrNotStore, m.Workspace, s.workspace)
		}
	case errors.Is(err, fs.ErrNotExist):
		if ents, err := os.ReadDir(s.dir); err == nil {
			for _, e := range ents {
				if !createdFirst(s.dir, e) {
					return fmt.Errorf("checkpoint: %s: %w (it has no %s but holds %s); move it away", s.dir, ErrNotStore, markerFile, e.Name())
				}
			}
		}
		if err := os.MkdirAll(s.dir, 0o700); err != nil {
			return fmt.Errorf("checkpoint: create store: %w", err)
		}
		s.fresh = true
		data, _ := json.MarshalIndent(marker{Format: storeFormat, Version: storeVersion, Workspace: s.workspace}, "", "  ")
		if err := writeAtomic(p, append(data, '\n'), false); err != nil {
			return fmt.Errorf("checkpoint: create store: %w", err)
		}
	default:
		return fmt.Errorf("checkpoint: open store: %w", err)
	}
	for _, d := range []string{blobsDir, manifestsDir} {
		if err := os.MkdirAll(filepath.Join(s.dir, d), 0o700); err != nil {
			return fmt.Errorf("checkpoint: create store: %w", err)
		}
	}
	return nil
}

// interrupted reports whether a marker's content is what a crash before its
// first sync can leave: nothing, or zero bytes where the text was.
func interrupted(data []byte) bool {
	for _, b := range data {
		if b != 0 {
			return false
		}
	}
	return true
}

// createdFirst reports whether e is something a store holds before its
// marker is synced: the empty marker, the blobs and manifests directories,
// the lock, temporary files, a stat cache (renamed into place after the
// blobs it names are synced). Blobs may be inside; a manifest may not: it
// is renamed into place after the marker's sync.
func createdFirst(dir string, e fs.DirEntry) bool {
	switch name := e.Name(); {
	case strings.HasPrefix(name, tmpPrefix), name == markerFile, name == lockFile, name == statFile:
		return true
	case name == blobsDir:
		return e.IsDir()
	case name == manifestsDir:
		if !e.IsDir() {
			return false
		}
		ents, err := os.ReadDir(filepath.Join(dir, name))
		if err != nil {
			return false
		}
		for _, m := range ents {
			if !strings.HasPrefix(m.Name(), tmpPrefix) {
				return false
			}
		}
		return true
	}
	return false
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// Workspace returns the workspace's absolute path, symlinks resolved.
func (s *Store) Workspace() string { return s.workspace }

// writeAtomic writes data to path through a temporary file in the same
// directory and a rename; with sync the data reaches the disk first.
func writeAtomic(path string, data []byte, sync bool) error {
	f, err := os.CreateTemp(filepath.Dir(path), tmpPrefix+"*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
