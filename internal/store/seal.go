package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// A session file lives in the workspace, where a confined command may
// write: a prompt-injected model could forge a user message, a note or a
// goal there, or change a past tool result, and a resumed session would
// send it on as the person's. So Reasonix keeps a seal of every session
// file outside the workspace, in its home, which confined commands cannot
// write: for each line it wrote, where the line ends and its SHA-256.
// Loading checks the file against it line by line and refuses a file
// that is not what Reasonix last wrote (see ModifiedError).
//
// The seal's entries are written before the line they seal, one small
// O_APPEND write per transcript write, so a crash leaves at most one
// entry whose line is missing or torn, never a line without an entry:
// any byte of the file that no entry covers was written by something
// else. Checking costs one hash per line of the file at load, which Load
// reads anyway; appending costs one hash of the new line and one write.

// sealMagic starts every seal file; entries of sealEntrySize bytes
// follow: the byte offset just past the line (big-endian uint64) and
// the line's SHA-256.
const (
	sealMagic     = "RXSEAL1\n"
	sealEntrySize = 8 + sha256.Size
	// legacyName lists, one id per line, the sessions a folder held when
	// Reasonix began sealing it: they load unsealed, with a notice; any
	// other file without a seal is not Reasonix's.
	legacyName = "legacy"
)

// sealEntry is one line as Reasonix wrote it.
type sealEntry struct {
	end int64
	sum [sha256.Size]byte
}

// Seals keeps the seals of one sessions folder under the Reasonix home.
// A nil *Seals seals nothing and checks nothing (no home: tests, runs
// without a state directory).
type Seals struct {
	home, sessions string
	dir            func() string
	// ext ends the names of the files sealed; isFile says which names
	// in the folder are such files (for the legacy list).
	ext    string
	isFile func(name string) bool
}

// NewSeals returns the seals of the sessions folder sessionsDir, kept in
// <home>/seals/<hash of the folder's resolved path>; nil when home is
// empty. Nothing is read or made until a session is loaded or written.
func NewSeals(home, sessionsDir string) *Seals {
	return newSeals(home, sessionsDir, ".jsonl", isSessionFile)
}

// newSeals is [NewSeals] for a folder of files ending in ext.
func newSeals(home, sessionsDir, ext string, isFile func(string) bool) *Seals {
	if home == "" || sessionsDir == "" {
		return nil
	}
	s := &Seals{home: home, sessions: sessionsDir, ext: ext, isFile: isFile}
	s.dir = sync.OnceValue(func() string {
		p := sealKey(sessionsDir)
		sum := sha256.Sum256([]byte(p))
		return filepath.Join(home, "seals", hex.EncodeToString(sum[:16]))
	})
	return s
}

// sealKey is the path a sessions folder's seals are found by: absolute,
// with the symlinks of its workspace resolved, so the same project
// reached two ways has one set of seals.
func sealKey(sessionsDir string) string {
	p, err := filepath.Abs(sessionsDir)
	if err != nil {
		p = filepath.Clean(sessionsDir)
	}
	// .reasonix/sessions may not exist yet; its workspace does.
	ws := filepath.Dir(filepath.Dir(p))
	if r, err := filepath.EvalSymlinks(ws); err == nil {
		return filepath.Join(r, filepath.Base(filepath.Dir(p)), filepath.Base(p))
	}
	return p
}

// Dir is the folder holding the seals ("" for nil).
func (s *Seals) Dir() string {
	if s == nil {
		return ""
	}
	return s.dir()
}

func (s *Seals) path(id string) string { return filepath.Join(s.dir(), id+".seal") }

// ensure makes the seals folder when it does not exist, listing the
// session files the sessions folder holds then as legacy (written before
// sealing began). The folder appears whole or not at all: it is made
// under a temporary name and renamed, so a crash never leaves one without
// its legacy list (which would refuse every older session).
func (s *Seals) ensure() error {
	dir := s.dir()
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	parent := filepath.Dir(dir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return fmt.Errorf("create seals folder: %w", err)
	}
	tmp, err := os.MkdirTemp(parent, tempPattern(filepath.Base(dir)))
	if err != nil {
		return fmt.Errorf("create seals folder: %w", err)
	}
	var names bytes.Buffer
	ents, err := os.ReadDir(s.sessions)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		os.RemoveAll(tmp)
		return fmt.Errorf("list sessions: %w", err)
	}
	for _, e := range ents {
		if !e.IsDir() && s.isFile(e.Name()) {
			names.WriteString(strings.TrimSuffix(e.Name(), s.ext) + "\n")
		}
	}
	werr := os.WriteFile(filepath.Join(tmp, legacyName), names.Bytes(), 0o600)
	if werr == nil {
		// For a person looking in the home: which project these are.
		werr = os.WriteFile(filepath.Join(tmp, "sessions-folder"), []byte(sealKey(s.sessions)+"\n"), 0o600)
	}
	if werr == nil {
		werr = os.Rename(tmp, dir)
		if werr != nil {
			if _, err := os.Stat(dir); err == nil {
				werr = nil // another Reasonix made it first
			}
		}
	}
	if werr != nil || dirExists(tmp) {
		os.RemoveAll(tmp)
	}
	if werr != nil {
		return fmt.Errorf("create seals folder: %w", werr)
	}
	return nil
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

// isLegacy reports whether id was in the sessions folder when sealing
// began, and whether sealing has begun at all.
func (s *Seals) isLegacy(id string) (legacy, begun bool, err error) {
	data, err := os.ReadFile(filepath.Join(s.dir(), legacyName))
	if errors.Is(err, fs.ErrNotExist) {
		if dirExists(s.dir()) {
			return false, true, nil
		}
		return false, false, nil
	}
	if err != nil {
		return false, true, fmt.Errorf("read seals: %w", err)
	}
	for _, n := range strings.Split(string(data), "\n") {
		if n == id {
			return true, true, nil
		}
	}
	return false, true, nil
}

// readSeal reads the entries of session id's seal; ok is false when it
// has none.
func (s *Seals) readSeal(id string) (entries []sealEntry, ok bool, err error) {
	p := s.path(id)
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("read seal: %w", err)
	}
	if !bytes.HasPrefix(data, []byte(sealMagic)) {
		return nil, false, fmt.Errorf("%s: not a Reasonix seal", p)
	}
	data = data[len(sealMagic):]
	// A partial last entry is a write a crash cut short: its line was
	// never written (entries go first).
	n := len(data) / sealEntrySize
	entries = make([]sealEntry, n)
	for i := range entries {
		b := data[i*sealEntrySize:]
		entries[i].end = int64(binary.BigEndian.Uint64(b))
		copy(entries[i].sum[:], b[8:sealEntrySize])
	}
	return entries, true, nil
}

// appendEntries adds to dst the entries of buf, whole lines written at
// offset off.
func appendEntries(dst []byte, off int64, buf []byte) []byte {
	for len(buf) > 0 {
		i := bytes.IndexByte(buf, '\n')
		line := buf
		if i >= 0 {
			line = buf[:i+1]
		}
		buf = buf[len(line):]
		off += int64(len(line))
		dst = binary.BigEndian.AppendUint64(dst, uint64(off))
		sum := sha256.Sum256(line)
		dst = append(dst, sum[:]...)
	}
	return dst
}

// encodeEntries is a whole seal file holding entries.
func encodeEntries(entries []sealEntry) []byte {
	out := make([]byte, 0, len(sealMagic)+len(entries)*sealEntrySize)
	out = append(out, sealMagic...)
	for _, e := range entries {
		out = binary.BigEndian.AppendUint64(out, uint64(e.end))
		out = append(out, e.sum[:]...)
	}
	return out
}

// writeSeal replaces session id's seal with entries (atomically) and
// opens it to append to.
func (s *Seals) writeSeal(id string, entries []sealEntry) (*os.File, error) {
	return s.writeSealBytes(id, encodeEntries(entries)[len(sealMagic):])
}

// writeSealBytes is writeSeal with the entries encoded.
func (s *Seals) writeSealBytes(id string, entries []byte) (*os.File, error) {
	if err := s.ensure(); err != nil {
		return nil, err
	}
	p := s.path(id)
	data := make([]byte, 0, len(sealMagic)+len(entries))
	data = append(append(data, sealMagic...), entries...)
	// Not synced: every new session (each run's, each subagent's) writes
	// one, and a sync costs about a millisecond on the path to the first
	// request. A seal a power cut loses only makes its session read as
	// changed (fail-safe; `reasonix fork` recovers it), never a forged
	// file as Reasonix's.
	if err := replaceFile(p, data, 0, false); err != nil {
		return nil, fmt.Errorf("write seal: %w", err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, fmt.Errorf("open seal: %w", err)
	}
	return f, nil
}

// ModifiedError is a session file that is not what Reasonix last wrote:
// a line changed, added or removed by something else (a command run in
// the workspace, a person's editor). Line is the first line that differs
// (1-based).
type ModifiedError struct {
	Path string
	ID   string
	Line int
	Why  string
	// What the file is: "session" when empty, else what a [FileSeals]
	// was made for ("plan", "plan progress").
	What string
}

func (e *ModifiedError) Error() string {
	what := e.What
	if what == "" {
		what = "session"
	}
	return fmt.Sprintf("%s:%d: %s %s was changed outside Reasonix: %s", e.Path, e.Line, what, e.ID, e.Why)
}

// LoadMode says what Load does with a session file that is not what
// Reasonix last wrote.
type LoadMode int

const (
	// Refuse returns a *ModifiedError.
	Refuse LoadMode = iota
	// KeepSealed loads the lines before the first one that differs (what
	// Reasonix wrote), with a notice; the way to rescue a session.
	KeepSealed
	// AcceptModified loads the file as it stands, changes and all: the
	// person has said they are theirs.
	AcceptModified
)

// verifier checks a session file's lines against its seal while Load
// reads them.
type verifier struct {
	path, id string
	entries  []sealEntry
	sealed   bool // a seal exists
	// got are the entries of the lines read, for a new seal (a legacy
	// file's, adopted on resume).
	got []sealEntry
}

// errTorn marks the line a crash cut short after its entry was written.
var errTorn = errors.New("torn")

// check checks line n (1-based), which ends at offset end.
func (v *verifier) check(n int, line []byte, end int64) error {
	e := sealEntry{end: end, sum: sha256.Sum256(line)}
	if !v.sealed {
		if line[len(line)-1] == '\n' {
			v.got = append(v.got, e)
		}
		return nil
	}
	i := n - 1
	if i >= len(v.entries) {
		return &ModifiedError{Path: v.path, ID: v.id, Line: n, Why: "this line and any after it were added after the last line Reasonix wrote"}
	}
	want := v.entries[i]
	if want == e {
		v.got = append(v.got, e)
		return nil
	}
	if i == len(v.entries)-1 && line[len(line)-1] != '\n' && end < want.end {
		return errTorn
	}
	return &ModifiedError{Path: v.path, ID: v.id, Line: n, Why: "this line is not the one Reasonix wrote there"}
}

// finish checks that the file did not end early: have lines of it
// matched their entries.
func (v *verifier) finish(have int) error {
	if !v.sealed {
		return nil
	}
	// The newest entry may be one whose line a crash kept from the file
	// (or left torn).
	if have >= len(v.entries)-1 {
		return nil
	}
	return &ModifiedError{Path: v.path, ID: v.id, Line: have + 1,
		Why: fmt.Sprintf("the file ends before it: Reasonix wrote %d lines, it has %d", len(v.entries), have)}
}

// newVerifier finds the seal of the session file path, or says why it
// has none: a legacy file (a notice) or one Reasonix did not write.
func (s *Seals) newVerifier(path string) (*verifier, string, error) {
	id := strings.TrimSuffix(filepath.Base(path), ".jsonl")
	v := &verifier{path: path, id: id}
	entries, ok, err := s.readSeal(id)
	if err != nil {
		return nil, "", err
	}
	if ok {
		v.entries, v.sealed = entries, true
		return v, "", nil
	}
	legacy, begun, err := s.isLegacy(id)
	if err != nil {
		return nil, "", err
	}
	if begun && !legacy {
		return v, "", &ModifiedError{Path: path, ID: id, Line: 1,
			Why: "Reasonix has no seal for it and it was not there when Reasonix began sealing this project's sessions, so Reasonix did not write it"}
	}
	return v, fmt.Sprintf("%s has no seal (written before Reasonix sealed sessions): nothing shows whether it was changed since; it is sealed from now on", path), nil
}
