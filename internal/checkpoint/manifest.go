package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Checkpoint snapshots the workspace and records it under labels. The
// report lists what was left out and how much work it took.
func (s *Store) Checkpoint(ctx context.Context, l Labels) (*Report, error) {
	unlock, err := s.lock(false)
	if err != nil {
		return nil, err
	}
	defer unlock()
	m, st, p, err := s.scan(ctx)
	if err != nil {
		return nil, err
	}
	if err := s.commit(m, l, "", p); err != nil {
		return nil, err
	}
	return &Report{Info: m.Info, Skipped: m.Skipped, Hashed: st.hashed, NewBlobs: st.newBlobs, NewBytes: st.newBytes}, nil
}

// commit gives m an id and labels and writes its manifest, made durable
// with what the scan that found m left pending (see settle).
func (s *Store) commit(m *Manifest, l Labels, restores string, pend pending) error {
	m.Created = time.Now()
	m.Session, m.Turn, m.Note, m.Restores = l.Session, l.Turn, l.Note, restores
	for range 10 {
		m.ID = newID(m.Created)
		path := s.manifestPath(m.ID)
		if _, err := os.Lstat(path); err == nil {
			continue // taken: draw again
		}
		data, err := encodeManifest(m, s.workspace)
		if err != nil {
			return err
		}
		return s.settle(pend, path, data)
	}
	return errors.New("checkpoint: could not draw an unused checkpoint id")
}

// newID names a checkpoint: its UTC creation time to the second, which
// sorts, and random hex, which keeps processes apart.
func newID(t time.Time) string {
	var b [3]byte
	rand.Read(b[:])
	return t.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

func (s *Store) manifestPath(id string) string {
	return filepath.Join(s.dir, manifestsDir, id+manifestExt)
}

// header is a manifest's first line.
type header struct {
	Format    string `json:"format"`
	Version   int    `json:"version"`
	Workspace string `json:"workspace"`
	Info
	Records int `json:"records"` // lines after the header, to tell a whole manifest
}

// record is one line after the header: a file, a symlink, an empty
// directory or a skipped entry. Paths and link targets that are not UTF-8
// (JSON strings cannot hold them) go in RawPath and RawLink instead.
type record struct {
	Path     string      `json:"path,omitempty"`
	RawPath  []byte      `json:"raw_path,omitempty"`
	Hash     string      `json:"hash,omitempty"`
	Mode     fs.FileMode `json:"mode,omitempty"`
	Size     int64       `json:"size,omitempty"`
	Link     string      `json:"link,omitempty"`
	RawLink  []byte      `json:"raw_link,omitempty"`
	EmptyDir bool        `json:"empty_dir,omitempty"`
	Skipped  string      `json:"skipped,omitempty"` // the reason
	Dir      bool        `json:"dir,omitempty"`     // a skipped directory
}

func newRecord(path, link string) record {
	var r record
	if utf8.ValidString(path) {
		r.Path = path
	} else {
		r.RawPath = []byte(path)
	}
	if utf8.ValidString(link) {
		r.Link = link
	} else {
		r.RawLink = []byte(link)
	}
	return r
}

func (r *record) path() string {
	if r.RawPath != nil {
		return string(r.RawPath)
	}
	return r.Path
}

func (r *record) link() string {
	if r.RawLink != nil {
		return string(r.RawLink)
	}
	return r.Link
}

const manifestFormat = "reasonix checkpoint"

func encodeManifest(m *Manifest, ws string) ([]byte, error) {
	var b bytes.Buffer
	b.Grow(len(m.Files) * 140)
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	h := header{Format: manifestFormat, Version: storeVersion, Workspace: ws, Info: m.Info,
		Records: len(m.Files) + len(m.Dirs) + len(m.Skipped)}
	if err := enc.Encode(h); err != nil {
		return nil, err
	}
	var line []byte
	for _, f := range m.Files {
		// The common case by hand: encoding/json costs more than the rest
		// of a checkpoint of an unchanged workspace.
		if line = appendFileRecord(line[:0], &f); line != nil {
			b.Write(line)
			continue
		}
		r := newRecord(f.Path, f.Link)
		r.Hash, r.Mode, r.Size = f.Hash, f.Mode, f.Size
		if err := enc.Encode(r); err != nil {
			return nil, err
		}
	}
	for _, d := range m.Dirs {
		r := newRecord(d, "")
		r.EmptyDir = true
		if err := enc.Encode(r); err != nil {
			return nil, err
		}
	}
	for _, sk := range m.Skipped {
		r := newRecord(sk.Path, "")
		r.Size, r.Skipped, r.Dir = sk.Size, sk.Reason, sk.Dir
		if err := enc.Encode(r); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// appendFileRecord appends f's record line, as encoding/json would write
// it, when its strings need no escaping; otherwise it returns nil.
func appendFileRecord(b []byte, f *File) []byte {
	if !plainJSON(f.Path) || !plainJSON(f.Link) {
		return nil
	}
	b = append(b, `{"path":"`...)
	b = append(b, f.Path...)
	if f.IsLink() {
		b = append(b, `","link":"`...)
		b = append(b, f.Link...)
		return append(b, "\"}\n"...)
	}
	b = append(b, `","hash":"`...)
	b = append(b, f.Hash...)
	b = append(b, `","mode":`...)
	b = strconv.AppendUint(b, uint64(f.Mode), 10)
	b = append(b, `,"size":`...)
	b = strconv.AppendInt(b, f.Size, 10)
	return append(b, "}\n"...)
}

// plainJSON reports whether s is printable ASCII without '"' or '\\',
// which a JSON string holds as it is.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// readHeader reads a manifest's first line.
func readHeader(r *bufio.Reader, ws string) (header, error) {
	var h header
	line, err := r.ReadBytes('\n')
	if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
		return h, fmt.Errorf("no header: %w", err)
	}
	if err := json.Unmarshal(line, &h); err != nil {
		return h, fmt.Errorf("header: %w", err)
	}
	if h.Format != manifestFormat {
		return h, errors.New("not a checkpoint manifest")
	}
	if h.Version > storeVersion {
		return h, fmt.Errorf("written by a newer Reasonix (format %d)", h.Version)
	}
	if !sameWorkspace(h.Workspace, ws) {
		return h, fmt.Errorf("belongs to workspace %s", h.Workspace)
	}
	return h, nil
}

// loadManifest reads and checks the manifest of id.
func (s *Store) loadManifest(id string) (*Manifest, error) {
	f, err := os.Open(s.manifestPath(id))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	h, err := readHeader(r, s.workspace)
	if err == nil && h.ID != id {
		err = fmt.Errorf("header names checkpoint %q", h.ID)
	}
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s: damaged manifest: %w", id, err)
	}
	m := &Manifest{Info: h.Info}
	dec := json.NewDecoder(r)
	n := 0
	for {
		var rec record
		if err := dec.Decode(&rec); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("checkpoint %s: damaged manifest: %w", id, err)
		}
		n++
		p, link := rec.path(), rec.link()
		if !validRel(p) {
			return nil, fmt.Errorf("checkpoint %s: damaged manifest: bad path %q", id, p)
		}
		switch {
		case rec.Skipped != "":
			m.Skipped = append(m.Skipped, Skip{Path: p, Dir: rec.Dir, Size: rec.Size, Reason: rec.Skipped})
		case rec.EmptyDir:
			m.Dirs = append(m.Dirs, p)
		case link != "":
			m.Files = append(m.Files, File{Path: p, Link: link})
		case validHash(rec.Hash):
			m.Files = append(m.Files, File{Path: p, Hash: rec.Hash, Mode: rec.Mode.Perm(), Size: rec.Size})
		default:
			return nil, fmt.Errorf("checkpoint %s: damaged manifest: bad entry for %q", id, p)
		}
	}
	if n != h.Records {
		return nil, fmt.Errorf("checkpoint %s: damaged manifest: %d of %d entries", id, n, h.Records)
	}
	return m, nil
}

// validRel reports whether p is a clean relative slash path inside the
// workspace, so a manifest cannot name a file outside it.
func validRel(p string) bool {
	if p == "" || strings.HasPrefix(p, "/") || strings.ContainsRune(p, 0) {
		return false
	}
	if runtime.GOOS == "windows" && (strings.ContainsAny(p, `\:`)) {
		return false
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." || alwaysSkipped(seg) {
			return false
		}
	}
	return true
}

// ids returns the ids of the store's manifests, skipping temporary files.
func (s *Store) ids() ([]string, error) {
	ents, err := os.ReadDir(filepath.Join(s.dir, manifestsDir))
	if err != nil {
		return nil, fmt.Errorf("checkpoint: list: %w", err)
	}
	var ids []string
	for _, e := range ents {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, manifestExt) || !e.Type().IsRegular() {
			continue
		}
		ids = append(ids, strings.TrimSuffix(name, manifestExt))
	}
	return ids, nil
}

// Count returns how many checkpoints the store holds, from a directory
// listing alone (cheap enough to decide when to Prune).
func (s *Store) Count() (int, error) {
	ids, err := s.ids()
	return len(ids), err
}

// List returns the checkpoints of session, newest first; an empty session
// lists every checkpoint of the workspace. Manifests that cannot be read
// are left out (Prune removes them).
func (s *Store) List(session string) ([]Info, error) {
	ids, err := s.ids()
	if err != nil {
		return nil, err
	}
	var out []Info
	for _, id := range ids {
		info, err := s.info(id)
		if err != nil {
			continue
		}
		if session == "" || info.Session == session {
			out = append(out, info)
		}
	}
	sortNewest(out)
	return out, nil
}

func sortNewest(infos []Info) {
	sort.Slice(infos, func(i, j int) bool {
		if !infos[i].Created.Equal(infos[j].Created) {
			return infos[i].Created.After(infos[j].Created)
		}
		return infos[i].ID > infos[j].ID
	})
}

// info reads the header of id's manifest.
func (s *Store) info(id string) (Info, error) {
	f, err := os.Open(s.manifestPath(id))
	if err != nil {
		return Info{}, err
	}
	defer f.Close()
	h, err := readHeader(bufio.NewReader(f), s.workspace)
	if err == nil && h.ID != id {
		err = fmt.Errorf("header names checkpoint %q", h.ID)
	}
	return h.Info, err
}

// Get returns the checkpoint id names: a full id or a prefix matching one
// checkpoint. The error wraps ErrNotFound when there is none.
func (s *Store) Get(id string) (*Manifest, error) {
	full, err := s.resolve(id)
	if err != nil {
		return nil, err
	}
	m, err := s.loadManifest(full)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("checkpoint %q: %w", id, ErrNotFound)
	}
	return m, err
}

// resolve expands an id or unique id prefix.
func (s *Store) resolve(id string) (string, error) {
	if id == "" || strings.ContainsAny(id, `/\`) || strings.HasPrefix(id, ".") {
		return "", fmt.Errorf("checkpoint %q: %w", id, ErrNotFound)
	}
	if _, err := os.Lstat(s.manifestPath(id)); err == nil {
		return id, nil
	}
	ids, err := s.ids()
	if err != nil {
		return "", err
	}
	var match []string
	for _, c := range ids {
		if strings.HasPrefix(c, id) {
			match = append(match, c)
		}
	}
	switch len(match) {
	case 0:
		return "", fmt.Errorf("checkpoint %q: %w", id, ErrNotFound)
	case 1:
		return match[0], nil
	}
	sort.Strings(match)
	if len(match) > 5 {
		match = append(match[:5], "…")
	}
	return "", fmt.Errorf("checkpoint %q is ambiguous: it could be %s", id, strings.Join(match, ", "))
}
