// Package gitignore matches slash-separated paths against .gitignore rules
// the way git does: nested .gitignore files, where a deeper file overrides a
// shallower one and within a file the last matching line wins; "!"
// negation; directory-only patterns ("build/"); patterns anchored by a
// slash; "**" segments; and the repository's .git/info/exclude at the lowest
// precedence.
//
// A Matcher is a chain of rule sets, one per .gitignore file, each linked to
// those of the directories above it, so a walk extends the chain as it
// descends and siblings share their parent's rules instead of copying them:
//
//	m := gitignore.Enclosing(root)     // rules from outside root (may be nil)
//	m = m.LoadDir(root, "")            // root's own .gitignore
//	if m.Ignored("sub/x.o", false) { … }
//	m = m.LoadDir(filepath.Join(root, "sub"), "sub") // entering sub
//
// A nil *Matcher is valid and ignores nothing. As in git, once a directory is
// ignored nothing below it can be re-included: walkers must prune ignored
// directories rather than ask about their contents.
package gitignore

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/reasonix/reasonix/internal/regular"
)

// Pattern is one compiled line of a .gitignore file.
type Pattern struct {
	negate   bool
	dirOnly  bool
	anchored bool // contains a slash before its end: matched against the path below the file's directory
	deep     bool // anchored and has a "**" segment
	// segs is the pattern split on "/"; "**" segments match any number of path segments.
	segs []string
	// kind lets the common shapes ("name", "*.ext", "prefix*") skip path.Match,
	// which dominates walk time in repositories with long ignore files.
	kind int
	lit  string
}

const (
	kindGlob = iota
	kindExact
	kindSuffix
	kindPrefix
)

// Parse compiles .gitignore text. Blank lines, comments and malformed lines
// are dropped, as git does.
func Parse(data []byte) []Pattern {
	var pats []Pattern
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		if p, ok := ParseLine(sc.Text()); ok {
			pats = append(pats, p)
		}
	}
	return pats
}

// ParseLine compiles one line of a .gitignore file; ok is false for blank
// lines, comments and lines that are not valid patterns.
func ParseLine(line string) (p Pattern, ok bool) {
	line = strings.TrimSuffix(line, "\r")
	if line == "" || line[0] == '#' {
		return p, false
	}
	line = trimTrailingSpaces(line)
	if line == "" {
		return p, false
	}
	if line[0] == '!' {
		p.negate = true
		line = line[1:]
	} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		p.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return p, false
	}
	if strings.Contains(line, "/") {
		p.anchored = true
		line = strings.TrimLeft(line, "/")
		if line == "" {
			return p, false
		}
	}
	p.segs = strings.Split(line, "/")
	for i, s := range p.segs {
		// fnmatch spells class negation "[!...]"; path.Match wants "[^...]".
		s = strings.ReplaceAll(s, "[!", "[^")
		if s != "**" && strings.Contains(s, "**") {
			// "**" inside a segment is an ordinary star in gitignore.
			for strings.Contains(s, "**") {
				s = strings.ReplaceAll(s, "**", "*")
			}
		}
		if s != "**" {
			if _, err := path.Match(s, ""); err != nil {
				return p, false
			}
		} else {
			p.deep = true
		}
		p.segs[i] = s
	}
	if !p.anchored {
		s := p.segs[0]
		switch {
		case !hasMeta(s):
			p.kind, p.lit = kindExact, unescape(s)
		case s[0] == '*' && !hasMeta(s[1:]):
			p.kind, p.lit = kindSuffix, unescape(s[1:])
		case s[len(s)-1] == '*' && !hasMeta(s[:len(s)-1]):
			p.kind, p.lit = kindPrefix, unescape(s[:len(s)-1])
		}
	}
	return p, true
}

func trimTrailingSpaces(s string) string {
	for strings.HasSuffix(s, " ") && !strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-1]
	}
	if strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-2] + " "
	}
	return s
}

func hasMeta(s string) bool { return strings.ContainsAny(s, `*?[\`) }

func unescape(s string) string { return strings.ReplaceAll(s, `\`, "") }

// Match reports whether rel, slash-separated and relative to the directory
// of the pattern's .gitignore file, matches the pattern. Negation is not
// applied: a "!pat" line matches what "pat" matches.
func (p *Pattern) Match(rel string, isDir bool) bool {
	if p.dirOnly && !isDir {
		return false
	}
	if !p.anchored {
		name := rel
		if i := strings.LastIndexByte(rel, '/'); i >= 0 {
			name = rel[i+1:]
		}
		switch p.kind {
		case kindExact:
			return name == p.lit
		case kindSuffix:
			return strings.HasSuffix(name, p.lit)
		case kindPrefix:
			return strings.HasPrefix(name, p.lit)
		}
		ok, _ := path.Match(p.segs[0], name)
		return ok
	}
	if !p.deep {
		// One path segment per pattern segment, matched without splitting
		// rel: this runs for every entry of a walk, for every such rule.
		for i, ps := range p.segs {
			seg, rest, more := strings.Cut(rel, "/")
			if more != (i < len(p.segs)-1) {
				return false
			}
			if ok, _ := path.Match(ps, seg); !ok {
				return false
			}
			rel = rest
		}
		return true
	}
	return matchSegs(p.segs, strings.Split(rel, "/"))
}

// matchSegs matches pattern segments against path segments; "**" spans zero
// or more segments, except that a trailing "**" needs at least one, because
// "dir/**" names what is inside dir, not dir itself.
func matchSegs(pat, segs []string) bool {
	for len(pat) > 0 {
		if pat[0] == "**" {
			rest := pat[1:]
			if len(rest) == 0 {
				return len(segs) > 0
			}
			for i := 0; i <= len(segs); i++ {
				if matchSegs(rest, segs[i:]) {
					return true
				}
			}
			return false
		}
		if len(segs) == 0 {
			return false
		}
		if ok, _ := path.Match(pat[0], segs[0]); !ok {
			return false
		}
		pat, segs = pat[1:], segs[1:]
	}
	return len(segs) == 0
}

// Matcher is the effective rule set of one directory of a walk: the
// patterns of its own .gitignore chained to those of the directories above.
// Matchers are immutable and safe for concurrent use; nil ignores nothing.
type Matcher struct {
	parent   *Matcher
	base     string // directory of the file relative to the walk root, slash-separated, "" for the root
	above    string // for files above the walk root: the path from the file's directory down to the root
	patterns []Pattern
}

// Add returns m extended with patterns read from a .gitignore file in the
// directory base (relative to the walk root, slash-separated, "" for the
// root itself). The rules of the new link take precedence over m's. With no
// patterns it returns m.
func (m *Matcher) Add(base string, patterns []Pattern) *Matcher {
	if len(patterns) == 0 {
		return m
	}
	return &Matcher{parent: m, base: base, patterns: patterns}
}

// LoadDir returns m extended with the .gitignore file of dir, whose path
// relative to the walk root is base ("" for the root), or m itself when dir
// has none or it cannot be read.
func (m *Matcher) LoadDir(dir, base string) *Matcher {
	data, err := regular.ReadFile(filepath.Join(dir, ".gitignore"))
	if err != nil {
		return m
	}
	return m.Add(base, Parse(data))
}

// Ignored reports whether rel (relative to the walk root, slash-separated)
// is excluded. The deepest file with a matching line decides, and within a
// file the last matching line wins.
func (m *Matcher) Ignored(rel string, isDir bool) bool {
	for f := m; f != nil; f = f.parent {
		sub := rel
		switch {
		case f.base != "":
			if !strings.HasPrefix(rel, f.base+"/") {
				continue
			}
			sub = rel[len(f.base)+1:]
		case f.above != "":
			sub = f.above + "/" + rel
		}
		for i := len(f.patterns) - 1; i >= 0; i-- {
			if f.patterns[i].Match(sub, isDir) {
				return !f.patterns[i].negate
			}
		}
	}
	return false
}

// Ancestors loads the .gitignore files of root and of every directory
// between root and start, so walking a subdirectory honours the same rules
// as walking the whole tree. start's own file is left out: a walk loads it
// when it reads start, and loading it here too would chain it twice. It
// returns nil when start is root or no file applies.
func Ancestors(root, start string) *Matcher {
	rel := relTo(root, start)
	if rel == "" {
		return nil
	}
	m := (*Matcher)(nil).LoadDir(root, "")
	parts := strings.Split(rel, "/")
	for i := 0; i < len(parts)-1; i++ {
		base := strings.Join(parts[:i+1], "/")
		m = m.LoadDir(filepath.Join(root, filepath.FromSlash(base)), base)
	}
	return m
}

// Enclosing returns the rules that reach root from outside it: the
// info/exclude file of the git repository that contains root, then the
// .gitignore files of the directories from the repository's top down to
// root's parent. root's own .gitignore is not included (load it with
// LoadDir, as for any directory of a walk). It returns nil when root is in
// no repository or no rules apply. The global core.excludesFile is not read.
func Enclosing(root string) *Matcher {
	root, err := filepath.Abs(root)
	if err != nil {
		return nil
	}
	top, gitDir := findRepo(root)
	if top == "" {
		return nil
	}
	rel := relTo(top, root)
	var m *Matcher
	if data, err := regular.ReadFile(filepath.Join(gitDir, "info", "exclude")); err == nil {
		m = m.addAbove(rel, Parse(data))
	}
	if rel == "" {
		return m
	}
	parts := strings.Split(rel, "/")
	for i := range parts {
		dir := filepath.Join(top, filepath.FromSlash(strings.Join(parts[:i], "/")))
		if data, err := regular.ReadFile(filepath.Join(dir, ".gitignore")); err == nil {
			m = m.addAbove(strings.Join(parts[i:], "/"), Parse(data))
		}
	}
	return m
}

// addAbove chains patterns of a file in a directory above the walk root; down
// is the path from that directory to the root ("" when it is the root).
func (m *Matcher) addAbove(down string, patterns []Pattern) *Matcher {
	if len(patterns) == 0 {
		return m
	}
	return &Matcher{parent: m, above: down, patterns: patterns}
}

// findRepo returns the top directory of the git repository containing dir
// and its git directory, or "" when there is none. A .git file (worktrees,
// submodules) names the git directory with a "gitdir:" line. dir is absolute.
func findRepo(dir string) (top, gitDir string) {
	for {
		p := filepath.Join(dir, ".git")
		if fi, err := os.Stat(p); err == nil {
			if fi.IsDir() {
				return dir, p
			}
			if data, err := regular.ReadFile(p); err == nil {
				line, _, _ := strings.Cut(string(data), "\n")
				if g, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:"); ok {
					g = strings.TrimSpace(g)
					if !filepath.IsAbs(g) {
						g = filepath.Join(dir, g)
					}
					return dir, g
				}
			}
			return dir, p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", ""
		}
		dir = parent
	}
}

// relTo returns p relative to root with forward slashes, "" for root itself.
func relTo(root, p string) string {
	r, err := filepath.Rel(root, p)
	if err != nil || r == "." {
		return ""
	}
	return filepath.ToSlash(r)
}
