// Package store keeps Reasonix's durable state: sessions as append-only
// JSONL transcripts, saved plans and goals. Every write is either an
// O_APPEND of one whole line or a temp-file rename, so a crash mid-write
// never leaves a file that cannot be read back.
package store

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/reasonix/reasonix/providers"
)

// Header is the first line of a session file.
type Header struct {
	ID      string    `json:"id"`
	Role    string    `json:"role"`
	Parent  string    `json:"parent,omitempty"`
	Model   string    `json:"model,omitempty"`
	Created time.Time `json:"created"`
	Title   string    `json:"title,omitempty"`
}

// Transcript appends messages of one session to its JSONL file.
type Transcript struct {
	mu   sync.Mutex
	f    *os.File
	path string
}

// Create opens a new transcript file <dir>/<id>.jsonl and writes its header.
func Create(dir string, h Header) (*Transcript, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("create sessions dir: %w", err)
	}
	path := filepath.Join(dir, h.ID+".jsonl")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_EXCL, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create session file: %w", err)
	}
	t := &Transcript{f: f, path: path}
	if err := t.writeLine(h); err != nil {
		f.Close()
		return nil, err
	}
	return t, nil
}

// Path returns the transcript's file path.
func (t *Transcript) Path() string { return t.path }

// Append writes one message as one line.
func (t *Transcript) Append(m providers.Message) error { return t.writeLine(m) }

func (t *Transcript) writeLine(v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("encode transcript line: %w", err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	// One write per line: with O_APPEND the line lands whole or, after a
	// crash, as a torn tail that Read skips.
	if _, err := t.f.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("append to %s: %w", t.path, err)
	}
	return nil
}

// Close closes the file.
func (t *Transcript) Close() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.f.Close()
}

// Read loads a transcript. A torn last line (a crash mid-append) is
// dropped; a damaged line in the middle is an error naming the line.
func Read(path string) (Header, []providers.Message, error) {
	var h Header
	f, err := os.Open(path)
	if err != nil {
		return h, nil, fmt.Errorf("open session: %w", err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var msgs []providers.Message
	for n := 1; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 {
			complete := line[len(line)-1] == '\n'
			var perr error
			if n == 1 {
				perr = json.Unmarshal(line, &h)
			} else {
				var m providers.Message
				if perr = json.Unmarshal(line, &m); perr == nil {
					msgs = append(msgs, m)
				}
			}
			if perr != nil {
				if !complete {
					break // torn tail
				}
				return h, msgs, fmt.Errorf("%s:%d: %w", path, n, perr)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return h, msgs, fmt.Errorf("read session: %w", err)
		}
	}
	return h, msgs, nil
}

// WriteFileAtomic writes data to path through a temp file and rename.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	name := tmp.Name()
	_, werr := tmp.Write(data)
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(name, perm)
	}
	if werr == nil {
		werr = os.Rename(name, path)
	}
	if werr != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", path, werr)
	}
	return nil
}

// NewID returns a time-sortable id with a random suffix, so concurrent
// subagents started in the same instant never collide. The suffix is 64
// bits: with 32, a burst of 10,000 ids within one second collides about
// once in a hundred runs (birthday bound), and a collision makes Create
// fail on the existing file.
func NewID(prefix string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s%s-%s", prefix, time.Now().UTC().Format("20060102-150405"), hex.EncodeToString(b[:]))
}
