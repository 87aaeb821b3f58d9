// Package store keeps Reasonix's durable state: sessions as append-only
// JSONL transcripts, saved plans and goals. Every write is either an
// O_APPEND of one whole line or a temp-file rename, so a crash mid-write
// never leaves a file that cannot be read back.
package store

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/reasonix/reasonix/providers"
)

// Header is the first line of a session file.
type Header struct {
	// Type is "session"; files written before it existed have none.
	Type    string    `json:"type,omitempty"`
	ID      string    `json:"id"`
	Role    string    `json:"role"`
	Parent  string    `json:"parent,omitempty"`
	Model   string    `json:"model,omitempty"`
	Cwd     string    `json:"cwd,omitempty"`
	Created time.Time `json:"created"`
	// Title is set from the first prompt (see Meta) when a session starts
	// without one.
	Title string `json:"title,omitempty"`
	// ForkOf names the session and turn a fork was taken from.
	ForkOf string `json:"fork_of,omitempty"`
	// Step is the plan step a plan worker session carried out. Such a
	// session is part of a plan run, not a conversation of the user's, so
	// `--continue` never picks it.
	Step string `json:"step,omitempty"`
}

// Transcript appends messages of one session to its JSONL file.
type Transcript struct {
	mu   sync.Mutex
	f    *os.File
	path string
	// seal, when set, is the session's seal (see Seals), appended to
	// before each write; end is the file's length as Reasonix wrote it.
	seal *os.File
	end  int64
	// sealEnd is the seal's length: a line that fails to be written
	// takes its entry back.
	sealEnd int64
	// dirMu guards newName: set by Create, whose rename made the file's
	// name, until a Sync has synced the directory that holds it.
	dirMu   sync.Mutex
	newName bool
}

// PathFor is the file of session id in dir.
func PathFor(dir, id string) string { return filepath.Join(dir, id+".jsonl") }

// Create makes the transcript file <dir>/<id>.jsonl holding its header
// and then the records given (a session's first messages and its state),
// and opens it to append to. They are written to a temporary file that is
// renamed into place, so the file appears whole or not at all: a crash
// while it is made leaves no session that cannot be read back, at most a
// hidden temporary file (SweepTemps removes it later). The temporary file
// reaches the disk before the rename, so after a power cut the name holds
// those records or does not exist, never an empty or partial file; the
// name itself is made durable by the first Sync, which syncs the
// directory too. The file is readable by its owner alone.
//
// It also seals the file (see Seals): the seal, holding the new file's
// lines, is written first. A nil s seals nothing (a file as Reasonix
// wrote it before sessions were sealed).
func (s *Seals) Create(dir string, h Header, first ...any) (*Transcript, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create sessions dir: %w", err)
	}
	path := filepath.Join(dir, h.ID+".jsonl")
	if h.Type == "" {
		h.Type = "session"
	}
	if h.Created.IsZero() {
		h.Created = time.Now().UTC()
	}
	var buf bytes.Buffer
	for _, v := range append([]any{h}, first...) {
		if err := encodeLine(&buf, v); err != nil {
			return nil, err
		}
	}
	if _, err := os.Lstat(path); err == nil {
		// Ids carry 64 random bits; this is the O_EXCL a rename lacks.
		return nil, fmt.Errorf("create session file: %s exists", path)
	}
	var seal *os.File
	var sealEnd int64
	if s != nil {
		// Before the file: a crash between them leaves a seal of a file
		// that does not exist, never a file without its seal.
		entries := appendEntries(nil, 0, buf.Bytes())
		f, err := s.writeSealBytes(h.ID, entries)
		if err != nil {
			return nil, err
		}
		seal, sealEnd = f, int64(len(sealMagic)+len(entries))
	}
	// The temporary file's mode, 0600, stays (perm 0): a conversation is
	// the person's own (and a chmod to 0644 would ignore a stricter
	// umask). Synced before the rename; the directory's sync waits for
	// the first Sync, which a session runs behind its next request, so a
	// new session's file costs one wait for the disk before it can be
	// appended to, not two.
	if err := renameInto(path, buf.Bytes(), 0); err != nil {
		closeIf(seal)
		return nil, fmt.Errorf("create session file: %w", err)
	}
	// Opened again under its own name: Windows renames no open file.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		closeIf(seal)
		return nil, fmt.Errorf("open session file: %w", err)
	}
	return &Transcript{f: f, path: path, newName: true, seal: seal, end: int64(buf.Len()), sealEnd: sealEnd}, nil
}

func closeIf(f *os.File) {
	if f != nil {
		f.Close()
	}
}

// Path returns the transcript's file path.
func (t *Transcript) Path() string { return t.path }

// Append writes one message as one line.
func (t *Transcript) Append(m providers.Message) error { return t.writeLine(m) }

// encodeLine appends v to buf as one JSON line.
func encodeLine(buf *bytes.Buffer, v any) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode transcript line: %w", err)
	}
	return nil
}

func (t *Transcript) writeLine(v any) error {
	var buf bytes.Buffer
	if err := encodeLine(&buf, v); err != nil {
		return err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.seal != nil {
		// The line's entry goes first: a crash between the two leaves an
		// entry without its line, which Load allows, never a line
		// without an entry, which Load refuses.
		var e [sealEntrySize]byte
		n, err := t.seal.Write(appendEntries(e[:0], t.end, buf.Bytes()))
		if err != nil {
			// Part of an entry reads as none (Load ignores it), but the
			// next must start where this one did.
			_ = t.seal.Truncate(t.sealEnd)
			return fmt.Errorf("seal %s: %w", t.path, err)
		}
		t.sealEnd += int64(n)
	}
	// One write per line: with O_APPEND the line lands whole or, after a
	// crash, as a torn tail that Read skips.
	if _, err := t.f.Write(buf.Bytes()); err != nil {
		if t.seal != nil {
			// Nothing of the line stays, in the file or in the seal, so
			// the next line is sealed where it lands.
			_ = t.f.Truncate(t.end)
			if t.seal.Truncate(t.sealEnd-sealEntrySize) == nil {
				t.sealEnd -= sealEntrySize
			}
		}
		return fmt.Errorf("append to %s: %w", t.path, err)
	}
	t.end += int64(buf.Len())
	return nil
}

// Open opens a loaded transcript to append to it (a resumed session
// keeps its id and file). With seals, what follows the lines loaded (a
// torn tail) is cut off, so the next line starts on a line of its own,
// and the seal is written anew for the lines loaded: a file that had
// none (written before sealing began, or accepted as changed) is sealed
// from now on.
func Open(l *Loaded) (*Transcript, error) {
	path := l.Path
	if _, err := readHeader(path); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open session: %w", err)
	}
	t := &Transcript{f: f, path: path}
	if l.seals == nil {
		return t, nil
	}
	if st, err := f.Stat(); err == nil && st.Size() > l.end {
		if err := f.Truncate(l.end); err != nil {
			f.Close()
			return nil, fmt.Errorf("cut the torn end of %s: %w", path, err)
		}
	}
	t.end = l.end
	t.sealEnd = int64(len(sealMagic) + len(l.entries)*sealEntrySize)
	t.seal, err = l.seals.writeSeal(l.Header.ID, l.entries)
	if err != nil {
		f.Close()
		return nil, err
	}
	return t, nil
}

// Record appends a typed record (Meta, Mark) as one line.
func (t *Transcript) Record(v any) error { return t.writeLine(v) }

// Sync flushes the file to disk; sessions call it at the end of each
// step. Appends go on while it waits for the disk (an *os.File may be
// used concurrently), so a sync running behind the next request does not
// hold up the lines that request adds. The first Sync of a file Create
// made also syncs its directory, so the file's name survives a power cut
// as its content does.
func (t *Transcript) Sync() error {
	if t.seal != nil {
		// The seal first: on the disk, a line without its entry reads as
		// a forgery, an entry without its line as a crash.
		if err := t.seal.Sync(); err != nil {
			return fmt.Errorf("sync the seal of %s: %w", t.path, err)
		}
	}
	if err := t.f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", t.path, err)
	}
	t.dirMu.Lock()
	defer t.dirMu.Unlock()
	if t.newName {
		if err := SyncPath(filepath.Dir(t.path)); err != nil {
			return fmt.Errorf("sync %s: %w", filepath.Dir(t.path), err)
		}
		t.newName = false
	}
	return nil
}

// Close closes the file.
func (t *Transcript) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.seal != nil {
		t.seal.Close()
	}
	return t.f.Close()
}

// WriteFileAtomic writes data to path through a temp file and rename.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	if err := renameInto(path, data, perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// renameInto writes data to a hidden temporary file beside path (in an
// existing directory), syncs it and renames it into place, so path holds
// all of data or is as it was, even after a power cut (without the sync
// the rename may reach the disk before the data, leaving an empty file
// under the name); the temporary file is removed on failure. perm,
// unless 0, replaces the temporary file's 0600. The temporary file's
// name carries the process id (see tempPattern), so SweepTemps can tell one
// a killed process left from one still being written.
func renameInto(path string, data []byte, perm os.FileMode) error {
	return replaceFile(path, data, perm, true)
}

// replaceFile is renameInto, whose temporary file is synced before the
// rename only when durable is set.
func replaceFile(path string, data []byte, perm os.FileMode, durable bool) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), tempPattern(filepath.Base(path)))
	if err != nil {
		return err
	}
	name := tmp.Name()
	_, werr := tmp.Write(data)
	if werr == nil && durable {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil && perm != 0 {
		werr = os.Chmod(name, perm)
	}
	if werr == nil {
		werr = os.Rename(name, path)
	}
	if werr != nil {
		os.Remove(name)
	}
	return werr
}

// NewID returns a time-sortable id with a random suffix, so concurrent
// subagents started in the same instant never collide. The suffix is 64
// bits: with 32, a burst of 10,000 ids within one second collides about
// once in a hundred runs (birthday bound), and a collision makes Create
// fail on the existing file.
func NewID(prefix string) string {
	// Unique, not secret (ids are listed and typed by people): the
	// runtime's per-process ChaCha8 stream, not crypto/rand, whose first
	// read sets up the getrandom state on the way to the first request.
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], rand.Uint64())
	return fmt.Sprintf("%s%s-%s", prefix, time.Now().UTC().Format("20060102-150405"), hex.EncodeToString(b[:]))
}

// Archive appends the originals a compaction replaced to the archive
// beside the session file path: the compaction record (without the new
// history), then each message, one per line, synced.
func Archive(path string, c Compaction, originals []providers.Message) error {
	f, err := os.OpenFile(ArchivePath(path), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open session archive: %w", err)
	}
	t := &Transcript{f: f, path: ArchivePath(path)}
	c.Messages = nil
	c.Type = TypeCompaction
	werr := t.writeLine(c)
	for _, m := range originals {
		if werr != nil {
			break
		}
		werr = t.Append(m)
	}
	if werr == nil {
		werr = t.Sync()
	}
	if cerr := t.Close(); werr == nil {
		werr = cerr
	}
	return werr
}
