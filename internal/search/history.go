package search

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Caps of a [History]. They keep one search well under 100 ms over a
// thousand sessions and bound the memory the index holds.
const (
	// DefaultMaxFiles is how many session and archive files are indexed,
	// newest first.
	DefaultMaxFiles = 4000
	// MaxMessageBytes of each message are indexed and kept for snippets.
	MaxMessageBytes = 4 << 10
	// maxFileBytes of a file are read.
	maxFileBytes = 32 << 20
	// maxLine is the longest JSONL line read.
	maxLine = 16 << 20
)

const archiveExt = ".archive.jsonl"

// Dir is one project's sessions directory.
type Dir struct {
	// Project names the project in hits (its workspace).
	Project string
	Path    string
}

// Hit is one message that matched a search.
type Hit struct {
	// Ref locates the message for [History.Around]: "<session>:<line>",
	// or "<session>.archive:<line>" for a message a compaction folded.
	Ref      string    `json:"ref"`
	Session  string    `json:"session"`
	Project  string    `json:"project,omitempty"`
	Archived bool      `json:"archived,omitempty"`
	Line     int       `json:"line"`
	Role     string    `json:"role"`
	Updated  time.Time `json:"updated"`
	Score    float64   `json:"score"`
	Snippet  string    `json:"snippet"`
}

// History searches the sessions of some projects. It is safe for
// concurrent use; each search re-reads only the files that changed.
type History struct {
	// MaxFiles caps the files indexed (0: DefaultMaxFiles).
	MaxFiles int

	mu    sync.Mutex
	files map[string]*file
}

// file is one indexed session or archive file.
type file struct {
	path     string
	project  string
	session  string
	archived bool
	size     int64
	mtime    time.Time
	ix       *index
	total    int64 // terms in all documents
	docs     []doc
}

type doc struct {
	line int32
	role string
	text string
}

// NewHistory returns an empty history index.
func NewHistory() *History { return &History{files: map[string]*file{}} }

// refresh brings the index up to date with dirs and returns the files to
// search, newest first.
func (h *History) refresh(dirs []Dir) ([]*file, error) {
	type entry struct {
		path, project string
		info          fs.FileInfo
	}
	var found []entry
	for _, d := range dirs {
		ents, err := os.ReadDir(d.Path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("history: %w", err)
		}
		for _, e := range ents {
			if e.IsDir() || !strings.HasSuffix(e.Name(), ".jsonl") {
				continue
			}
			info, err := e.Info()
			if err != nil {
				continue
			}
			found = append(found, entry{filepath.Join(d.Path, e.Name()), d.Project, info})
		}
	}
	sort.Slice(found, func(i, j int) bool { return found[i].info.ModTime().After(found[j].info.ModTime()) })
	limit := h.MaxFiles
	if limit <= 0 {
		limit = DefaultMaxFiles
	}
	if len(found) > limit {
		found = found[:limit]
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*file, len(found))
	var stale []int
	for i, e := range found {
		f := h.files[e.path]
		if f == nil || f.size != e.info.Size() || !f.mtime.Equal(e.info.ModTime()) {
			stale = append(stale, i)
			continue
		}
		out[i] = f
	}
	// Files are read and indexed in parallel: the first search of a
	// process reads them all.
	var wg sync.WaitGroup
	next := make(chan int)
	for range min(runtime.GOMAXPROCS(0), len(stale)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				e := found[i]
				if nf, err := readFile(e.path, e.project, e.info); err == nil {
					out[i] = nf
				} // else unreadable now (being replaced): skipped this time
			}
		}()
	}
	for _, i := range stale {
		next <- i
	}
	close(next)
	wg.Wait()
	keep := make(map[string]*file, len(found))
	kept := out[:0]
	for i, f := range out {
		if f != nil {
			keep[found[i].path] = f
			kept = append(kept, f)
		}
	}
	h.files = keep
	return kept, nil
}

// line is what the index reads of one JSONL line.
type line struct {
	Type      string `json:"type"`
	Role      string `json:"role"`
	Content   string `json:"content"`
	ToolCalls []struct {
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// messageText is the searchable text of a message line, capped.
func (l *line) text() string {
	s := l.Content
	for _, c := range l.ToolCalls {
		if len(s) >= MaxMessageBytes {
			break
		}
		s += "\n" + c.Function.Name + " " + c.Function.Arguments
	}
	if len(s) > MaxMessageBytes {
		s = clip(s, MaxMessageBytes)
	}
	return s
}

func readFile(path, project string, info fs.FileInfo) (*file, error) {
	data, err := readCapped(path, maxFileBytes)
	if err != nil {
		return nil, err
	}
	name := filepath.Base(path)
	nf := &file{path: path, project: project, size: info.Size(), mtime: info.ModTime(),
		archived: strings.HasSuffix(name, archiveExt)}
	nf.session = strings.TrimSuffix(strings.TrimSuffix(name, archiveExt), ".jsonl")
	bd := newBuilder()
	n := 0
	for len(data) > 0 {
		raw := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			raw, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		n++
		if n == 1 && !nf.archived {
			continue // the header
		}
		// Cheap filters before decoding: records and system prompts are
		// not conversation.
		if !bytes.Contains(raw, []byte(`"role"`)) || bytes.HasPrefix(raw, []byte(`{"type"`)) ||
			bytes.HasPrefix(raw, []byte(`{"role":"system"`)) {
			continue
		}
		var l line
		if json.Unmarshal(raw, &l) != nil || l.Type != "" || l.Role == "" || l.Role == "system" {
			continue
		}
		t := l.text()
		terms, c := counts(t)
		if c == 0 {
			continue
		}
		bd.add(terms, c)
		nf.total += int64(c)
		nf.docs = append(nf.docs, doc{line: int32(n), role: l.Role, text: t})
	}
	nf.ix = bd.done()
	return nf, nil
}

// readCapped reads at most max bytes of path.
func readCapped(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, max))
}

// Search returns the best limit messages for query across dirs, best
// first.
func (h *History) Search(dirs []Dir, query string, limit int) ([]Hit, error) {
	if strings.TrimSpace(query) == "" {
		return nil, errors.New("history: the query is empty")
	}
	if limit <= 0 {
		limit = 10
	}
	files, err := h.refresh(dirs)
	if err != nil {
		return nil, err
	}
	// Collection statistics across every file: BM25's idf and average
	// length are global, the postings per file.
	var ndocs, total int64
	for _, f := range files {
		ndocs += int64(len(f.docs))
		total += f.total
	}
	if ndocs == 0 {
		return nil, nil
	}
	avg := float64(total) / float64(ndocs)
	terms := uniq(Tokens(query))
	idf := make([]float64, len(terms))
	for i, t := range terms {
		df := 0
		for _, f := range files {
			df += len(f.ix.postings[t])
		}
		idf[i] = math.Log(1 + (float64(ndocs)-float64(df)+0.5)/(float64(df)+0.5))
	}
	type cand struct {
		f     *file
		doc   int32
		score float64
		order int
	}
	better := func(a, c cand) bool {
		if a.score != c.score {
			return a.score > c.score
		}
		if a.order != c.order {
			return a.order < c.order // newer file first
		}
		return a.doc > c.doc
	}
	// all is the best limit so far, best first; few hits beat its last.
	all := make([]cand, 0, limit+1)
	var acc []float64
	for fi, f := range files {
		if cap(acc) < len(f.docs) {
			acc = make([]float64, len(f.docs))
		}
		acc = acc[:len(f.docs)]
		clear(acc)
		for i, t := range terms {
			for _, p := range f.ix.postings[t] {
				tf, dl := float64(p.tf), float64(f.ix.lens[p.doc])
				acc[p.doc] += idf[i] * tf * (k1 + 1) / (tf + k1*(1-b+b*dl/avg))
			}
		}
		for d, s := range acc {
			if s == 0 {
				continue
			}
			c := cand{f, int32(d), s, fi}
			if len(all) == limit && !better(c, all[limit-1]) {
				continue
			}
			k := sort.Search(len(all), func(i int) bool { return better(c, all[i]) })
			all = append(all, cand{})
			copy(all[k+1:], all[k:])
			all[k] = c
			if len(all) > limit {
				all = all[:limit]
			}
		}
	}
	out := make([]Hit, 0, len(all))
	for _, c := range all {
		d := c.f.docs[c.doc]
		ref := c.f.session
		if c.f.archived {
			ref += ".archive"
		}
		out = append(out, Hit{Ref: ref + ":" + strconv.Itoa(int(d.line)), Session: c.f.session, Project: c.f.project,
			Archived: c.f.archived, Line: int(d.line), Role: d.role, Updated: c.f.mtime,
			Score: math.Round(c.score*100) / 100, Snippet: Snippet(d.text, query, 240)})
	}
	return out, nil
}

func uniq(ss []string) []string {
	seen := map[string]bool{}
	out := ss[:0]
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// Message is one message of a transcript read around a hit.
type Message struct {
	Line    int    `json:"line"`
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Around reads the messages within radius lines of the one ref names
// (see [Hit.Ref]), from a session or archive file in one of dirs; each
// message is clipped to maxBytes. It opens only files named by a session
// id found in dirs, never a path the caller makes up.
func Around(dirs []Dir, ref string, radius, maxBytes int) ([]Message, string, error) {
	name, num, ok := strings.Cut(strings.TrimSpace(ref), ":")
	at, err := strconv.Atoi(num)
	if !ok || err != nil || at < 1 {
		return nil, "", fmt.Errorf("history: ref %q is not <session>:<line> as search prints it", ref)
	}
	archived := strings.HasSuffix(name, ".archive")
	id := strings.TrimSuffix(name, ".archive")
	if id == "" || strings.ContainsAny(id, `/\.`) || strings.Contains(id, "..") {
		return nil, "", fmt.Errorf("history: %q is not a session id", id)
	}
	file := id + ".jsonl"
	if archived {
		file = id + archiveExt
	}
	var path string
	for _, d := range dirs {
		p := filepath.Join(d.Path, file)
		if st, err := os.Lstat(p); err == nil && st.Mode().IsRegular() {
			path = p
			break
		}
	}
	if path == "" {
		return nil, "", fmt.Errorf("history: no session %s in the searched projects", name)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, "", fmt.Errorf("history: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(io.LimitReader(f, maxFileBytes))
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	var out []Message
	n := 0
	for sc.Scan() {
		n++
		if n < at-radius {
			continue
		}
		if n > at+radius {
			break
		}
		var l line
		if json.Unmarshal(sc.Bytes(), &l) != nil || l.Type != "" || l.Role == "" || l.Role == "system" {
			continue
		}
		c := l.Content
		for _, tc := range l.ToolCalls {
			c += fmt.Sprintf("\n(call %s %s)", tc.Function.Name, clip(tc.Function.Arguments, 500))
		}
		if len(c) > maxBytes {
			c = clip(c, maxBytes) + fmt.Sprintf(" [… %d more bytes]", len(c)-maxBytes)
		}
		out = append(out, Message{Line: n, Role: l.Role, Content: c})
	}
	if n < at {
		return nil, "", fmt.Errorf("history: %s has %d lines, not %d", name, n, at)
	}
	return out, path, nil
}

// clip keeps at most n bytes of s, cut at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n]
}
