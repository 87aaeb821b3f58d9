// Package memory keeps the facts a person asked Reasonix to remember, one
// Markdown file per fact: the project's in <workspace>/.reasonix/memory/,
// the user's in <home>/memory/. Forgetting moves a file to .archive/
// beside them, so nothing is lost. Writing here is the remember and forget
// tools' business, and each of their calls needs a person's yes (the
// memory directories are control paths of the permission gate).
package memory

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/reasonix/reasonix/internal/search"
	"github.com/reasonix/reasonix/internal/store"
)

// Scopes of a memory.
const (
	ScopeProject = "project"
	ScopeUser    = "user"
)

// Limits of one memory.
const (
	MaxContent     = 16 << 10
	MaxDescription = 200
	archiveDir     = ".archive"
)

// Store is the two memory directories.
type Store struct {
	// Project is <workspace>/.reasonix/memory, User <home>/memory; an
	// empty one is not available.
	Project, User string
}

// New returns the store of a workspace and a Reasonix home.
func New(workspace, home string) Store {
	s := Store{}
	if workspace != "" {
		s.Project = filepath.Join(workspace, ".reasonix", "memory")
	}
	if home != "" {
		s.User = filepath.Join(home, "memory")
	}
	return s
}

// Memory is one remembered fact.
type Memory struct {
	Name        string    `json:"name"`
	Scope       string    `json:"scope"`
	Description string    `json:"description,omitempty"`
	Content     string    `json:"content"`
	Updated     time.Time `json:"updated"`
	Path        string    `json:"path"`
}

// validName reports whether name matches ^[a-z0-9][a-z0-9_-]{0,63}$,
// written out because compiling that regexp at package init cost 0.5-1 ms
// and 700 allocations on every start of the binary.
func validName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case (c == '_' || c == '-') && i > 0:
		default:
			return false
		}
	}
	return true
}

// CheckName refuses a name that is not 1-64 lower-case letters, digits,
// '-' and '_' (so it can never leave the memory directory).
func CheckName(name string) error {
	if !validName(name) {
		return fmt.Errorf("memory name %q: use 1-64 lower-case letters, digits, '-' or '_' (e.g. build-command)", name)
	}
	return nil
}

// Dir is the directory of scope.
func (s Store) Dir(scope string) (string, error) {
	switch scope {
	case ScopeProject, "":
		if s.Project == "" {
			return "", errors.New("memory: no project memory in this run")
		}
		return s.Project, nil
	case ScopeUser:
		if s.User == "" {
			return "", errors.New("memory: no user memory in this run (no Reasonix home)")
		}
		return s.User, nil
	}
	return "", fmt.Errorf("memory: scope %q is not %q or %q", scope, ScopeProject, ScopeUser)
}

// Path is the file of the memory name in scope.
func (s Store) Path(scope, name string) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	dir, err := s.Dir(scope)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, name+".md"), nil
}

// ArchivePath is where forgetting the memory at path moves it.
func ArchivePath(path string, now time.Time) string {
	name := strings.TrimSuffix(filepath.Base(path), ".md")
	return filepath.Join(filepath.Dir(path), archiveDir, name+"-"+now.UTC().Format("20060102T150405Z")+".md")
}

// Save writes (or replaces) a memory.
func (s Store) Save(scope, name, description, content string, now time.Time) (Memory, bool, error) {
	p, err := s.Path(scope, name)
	if err != nil {
		return Memory{}, false, err
	}
	content = strings.TrimSpace(content)
	if content == "" {
		return Memory{}, false, errors.New("memory: the content is empty")
	}
	if len(content) > MaxContent {
		return Memory{}, false, fmt.Errorf("memory: the content is %d bytes; keep a memory under %d", len(content), MaxContent)
	}
	description = strings.Join(strings.Fields(description), " ")
	if len(description) > MaxDescription {
		return Memory{}, false, fmt.Errorf("memory: the description is %d bytes; keep it under %d", len(description), MaxDescription)
	}
	if scope == "" {
		scope = ScopeProject
	}
	_, statErr := os.Stat(p)
	existed := statErr == nil
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return Memory{}, false, fmt.Errorf("memory: %w", err)
	}
	if scope == ScopeProject {
		// .reasonix holds session transcripts: keep it out of git, as
		// every writer of .reasonix does.
		_ = store.EnsureIgnored(filepath.Dir(filepath.Dir(p)))
	}
	m := Memory{Name: name, Scope: scope, Description: description, Content: content, Updated: now.UTC().Truncate(time.Second), Path: p}
	if err := store.WriteFileAtomic(p, []byte(m.render()), 0o644); err != nil {
		return Memory{}, false, fmt.Errorf("memory: %w", err)
	}
	return m, existed, nil
}

func (m Memory) render() string {
	var b strings.Builder
	b.WriteString("---\n")
	if m.Description != "" {
		fmt.Fprintf(&b, "description: %s\n", m.Description)
	}
	fmt.Fprintf(&b, "updated: %s\n---\n\n%s\n", m.Updated.Format(time.RFC3339), m.Content)
	return b.String()
}

// Forget moves a memory to the archive and returns where it went.
func (s Store) Forget(scope, name string, now time.Time) (string, error) {
	p, err := s.Path(scope, name)
	if err != nil {
		return "", err
	}
	if _, err := os.Lstat(p); err != nil {
		return "", fmt.Errorf("memory: no %s memory %q", orProject(scope), name)
	}
	dst := ArchivePath(p, now)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", fmt.Errorf("memory: %w", err)
	}
	if err := os.Rename(p, dst); err != nil {
		return "", fmt.Errorf("memory: %w", err)
	}
	return dst, nil
}

func orProject(scope string) string {
	if scope == "" {
		return ScopeProject
	}
	return scope
}

// Read returns one memory.
func (s Store) Read(scope, name string) (Memory, error) {
	p, err := s.Path(scope, name)
	if err != nil {
		return Memory{}, err
	}
	m, err := readFile(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Memory{}, fmt.Errorf("memory: no %s memory %q", orProject(scope), name)
		}
		return Memory{}, err
	}
	m.Scope = orProject(scope)
	return m, nil
}

func readFile(p string) (Memory, error) {
	f, err := os.Open(p)
	if err != nil {
		return Memory{}, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Memory{}, err
	}
	m := Memory{Name: strings.TrimSuffix(filepath.Base(p), ".md"), Path: p, Updated: st.ModTime().UTC().Truncate(time.Second)}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), MaxContent*4)
	var body []string
	front := 0 // 0 before, 1 inside, 2 after the frontmatter
	for n := 0; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case n == 0 && l == "---":
			front = 1
		case front == 1 && l == "---":
			front = 2
		case front == 1:
			k, v, _ := strings.Cut(l, ":")
			v = strings.TrimSpace(v)
			switch strings.TrimSpace(k) {
			case "description":
				m.Description = v
			case "updated":
				if t, err := time.Parse(time.RFC3339, v); err == nil {
					m.Updated = t
				}
			}
		default:
			body = append(body, l)
		}
	}
	m.Content = strings.TrimSpace(strings.Join(body, "\n"))
	if len(m.Content) > MaxContent {
		m.Content = m.Content[:MaxContent]
	}
	return m, sc.Err()
}

// List returns the memories of scope ("" or "all": both), newest first.
func (s Store) List(scope string) ([]Memory, error) {
	var scopes []string
	switch scope {
	case "", "all":
		scopes = []string{ScopeProject, ScopeUser}
	case ScopeProject, ScopeUser:
		scopes = []string{scope}
	default:
		return nil, fmt.Errorf("memory: scope %q is not project, user or all", scope)
	}
	var out []Memory
	for _, sc := range scopes {
		dir, err := s.Dir(sc)
		if err != nil {
			continue
		}
		ents, err := os.ReadDir(dir)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			return nil, fmt.Errorf("memory: %w", err)
		}
		for _, e := range ents {
			name := strings.TrimSuffix(e.Name(), ".md")
			if !e.Type().IsRegular() || name == e.Name() || CheckName(name) != nil {
				continue
			}
			m, err := readFile(filepath.Join(dir, e.Name()))
			if err != nil {
				continue
			}
			m.Scope = sc
			out = append(out, m)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Updated.After(out[j].Updated) })
	return out, nil
}

// Search returns the memories of scope that share a term with query,
// best first (the count of query terms each contains, then newest).
func (s Store) Search(scope, query string, limit int) ([]Memory, error) {
	all, err := s.List(scope)
	if err != nil {
		return nil, err
	}
	terms := search.Tokens(query)
	if len(terms) == 0 {
		return nil, errors.New("memory: the query is empty")
	}
	type scored struct {
		m Memory
		n int
	}
	var hits []scored
	for _, m := range all {
		have := map[string]bool{}
		for _, t := range search.Tokens(m.Name + " " + m.Description + " " + m.Content) {
			have[t] = true
		}
		n := 0
		for _, t := range terms {
			if have[t] {
				n++
			}
		}
		if n > 0 {
			hits = append(hits, scored{m, n})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool { return hits[i].n > hits[j].n })
	out := make([]Memory, 0, len(hits))
	for _, h := range hits {
		if limit > 0 && len(out) == limit {
			break
		}
		out = append(out, h.m)
	}
	return out, nil
}
