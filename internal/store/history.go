package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/reasonix/reasonix/internal/flock"
)

// Prompt history: every prompt a person sends, per project, in
// <home>/history/<key>.jsonl, one {"time":…,"text":…} line each, so the
// composer can recall them after a restart (Up, Ctrl-R) as a shell does.
//
// The file is bounded: once it holds more than twice the cap, the next
// Add rewrites it with the newest cap entries (temp file and rename).
// Each Add is one O_APPEND write of one whole line, under an advisory
// lock on the file (internal/flock: flock on Unix, LockFileEx on Windows), so two
// processes neither interleave partial lines nor lose each other's lines
// to a rewrite; a line torn by a crash is skipped on read.

// HistoryCap is the number of prompts a history keeps by default.
const HistoryCap = 1000

// maxHistoryText bounds one remembered prompt; a longer one (a pasted
// file) is not written, so the file stays small enough to read at start.
const maxHistoryText = 64 << 10

// HistoryEntry is one line of a history file.
type HistoryEntry struct {
	Time time.Time `json:"time"`
	Text string    `json:"text"`
}

// History is one project's prompt history file. Its methods are safe for
// concurrent use, and other processes may use the same file at once.
type History struct {
	path string
	cap  int

	mu sync.Mutex
	// What this History last saw of the file, so an Add reads it again
	// only when another process has changed it: the file, its line count
	// (damaged lines included), the text of its last entry, and whether it
	// ends inside a line.
	seen  os.FileInfo
	lines int
	last  string
	torn  bool
}

// HistoryPath is the history file of the project at workspace:
// <home>/history/<first 16 hex digits of sha256(absolute workspace)>.jsonl.
func HistoryPath(home, workspace string) string {
	abs, err := filepath.Abs(workspace)
	if err != nil {
		abs = filepath.Clean(workspace)
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(home, "history", hex.EncodeToString(sum[:])[:16]+".jsonl")
}

// NewHistory returns the history kept at path, holding up to limit
// entries (HistoryCap if limit <= 0). Nothing is read or created until
// Load or Add.
func NewHistory(path string, limit int) *History {
	if limit <= 0 {
		limit = HistoryCap
	}
	return &History{path: path, cap: limit}
}

// Path is the history's file.
func (h *History) Path() string { return h.path }

// Load returns the newest entries, up to the cap, oldest first. A missing
// file is an empty history; damaged and torn lines are skipped, and so are
// consecutive duplicates.
func (h *History) Load() ([]HistoryEntry, error) {
	data, err := os.ReadFile(h.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read prompt history: %w", err)
	}
	entries, _ := parseHistory(data)
	if len(entries) > h.cap {
		entries = entries[len(entries)-h.cap:]
	}
	return entries, nil
}

// Add appends text as the newest entry, unless it is blank, too long, or
// the same as the newest entry. When the file has grown past twice the
// cap it is rewritten with the newest cap entries.
func (h *History) Add(text string) error {
	if strings.TrimSpace(text) == "" || len(text) > maxHistoryText {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	f, err := h.openLocked()
	if err != nil {
		return fmt.Errorf("prompt history: %w", err)
	}
	defer func() {
		if f != nil {
			flock.Unlock(f)
			f.Close()
		}
	}()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("prompt history: %w", err)
	}
	if !h.fresh(st) {
		if err := h.rescan(f, st); err != nil {
			return err
		}
	}
	if text == h.last {
		return nil
	}
	line, err := json.Marshal(HistoryEntry{Time: time.Now().UTC(), Text: text})
	if err != nil {
		return fmt.Errorf("prompt history: %w", err)
	}
	line = append(line, '\n')
	if h.torn {
		// Close the torn line first, so this one stays whole; the
		// damaged line is skipped on read.
		line = append([]byte{'\n'}, line...)
	}
	// One write: with O_APPEND the line lands whole, after every other
	// process's lines.
	if _, err := f.Write(line); err != nil {
		h.seen = nil
		return fmt.Errorf("append to %s: %w", h.path, err)
	}
	h.lines++
	h.last, h.torn = text, false
	if st, err := f.Stat(); err == nil {
		h.seen = st
	} else {
		h.seen = nil
	}
	if h.lines <= 2*h.cap {
		return nil
	}
	data, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<62))
	if err != nil {
		return fmt.Errorf("read prompt history: %w", err)
	}
	if runtime.GOOS == "windows" {
		// Windows will not rename over a file that is open, and has no
		// lock here: the rewrite is best effort there.
		flock.Unlock(f)
		f.Close()
		f = nil
	}
	return h.rewrite(data)
}

// fresh reports whether st is the file as this History last left it.
func (h *History) fresh(st os.FileInfo) bool {
	return h.seen != nil && os.SameFile(h.seen, st) && h.seen.Size() == st.Size() && h.seen.ModTime().Equal(st.ModTime())
}

// rescan reads the file to learn its line count, last entry and tail.
func (h *History) rescan(f *os.File, st os.FileInfo) error {
	data, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<62))
	if err != nil {
		h.seen = nil
		return fmt.Errorf("read prompt history: %w", err)
	}
	entries, lines := parseHistory(data)
	h.seen, h.lines, h.last = st, lines, ""
	if len(entries) > 0 {
		h.last = entries[len(entries)-1].Text
	}
	h.torn = len(data) > 0 && data[len(data)-1] != '\n'
	return nil
}

// rewrite replaces the file with the newest cap entries of data.
func (h *History) rewrite(data []byte) error {
	entries, _ := parseHistory(data)
	if len(entries) > h.cap {
		entries = entries[len(entries)-h.cap:]
	}
	var buf bytes.Buffer
	for _, e := range entries {
		line, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("prompt history: %w", err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	h.seen = nil
	if err := WriteFileAtomic(h.path, buf.Bytes(), 0o600); err != nil {
		return fmt.Errorf("compact prompt history: %w", err)
	}
	if st, err := os.Stat(h.path); err == nil {
		h.seen, h.lines, h.torn = st, len(entries), false
	}
	return nil
}

// openLocked opens the file for appending, creating it and its directory,
// and locks it. A rewrite by another process replaces the file while this
// one waits for the lock; then the lock is on the old file, so it is
// taken again on the new one.
func (h *History) openLocked() (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(h.path), 0o755); err != nil {
		return nil, err
	}
	for try := 0; ; try++ {
		f, err := os.OpenFile(h.path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return nil, err
		}
		if err := flock.Lock(f, true); err != nil {
			f.Close()
			return nil, err
		}
		fst, ferr := f.Stat()
		pst, perr := os.Stat(h.path)
		if ferr == nil && perr == nil && os.SameFile(fst, pst) || try == 10 {
			return f, nil
		}
		flock.Unlock(f)
		f.Close()
	}
}

// parseHistory reads the entries of a history file, skipping damaged
// lines, a torn last line and consecutive duplicates; lines counts every
// complete line.
func parseHistory(data []byte) (entries []HistoryEntry, lines int) {
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break // torn: a write cut short
		}
		line := data[:i]
		data = data[i+1:]
		lines++
		var e HistoryEntry
		if json.Unmarshal(line, &e) != nil || strings.TrimSpace(e.Text) == "" {
			continue
		}
		if n := len(entries); n > 0 && entries[n-1].Text == e.Text {
			continue
		}
		entries = append(entries, e)
	}
	return entries, lines
}
