package builtin

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"strings"
)

// ignoreRule is one compiled line of a .gitignore file.
type ignoreRule struct {
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

// ignoreFile is the rule set of one .gitignore file, chained to the files of
// its ancestors so a directory's effective rules are shared, not copied.
type ignoreFile struct {
	parent *ignoreFile
	base   string // directory of the file relative to the walk root, slash-separated, "" for the root
	rules  []ignoreRule
}

// parseIgnore compiles .gitignore text. Malformed lines are dropped, as git does.
func parseIgnore(data []byte) []ignoreRule {
	var rules []ignoreRule
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		if r, ok := parseIgnoreLine(sc.Text()); ok {
			rules = append(rules, r)
		}
	}
	return rules
}

func parseIgnoreLine(line string) (ignoreRule, bool) {
	var r ignoreRule
	line = strings.TrimSuffix(line, "\r")
	if line == "" || line[0] == '#' {
		return r, false
	}
	line = trimTrailingSpaces(line)
	if line == "" {
		return r, false
	}
	if line[0] == '!' {
		r.negate = true
		line = line[1:]
	} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return r, false
	}
	if strings.Contains(line, "/") {
		r.anchored = true
		line = strings.TrimLeft(line, "/")
		if line == "" {
			return r, false
		}
	}
	r.segs = strings.Split(line, "/")
	for i, s := range r.segs {
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
				return r, false
			}
		} else {
			r.deep = true
		}
		r.segs[i] = s
	}
	if !r.anchored {
		s := r.segs[0]
		switch {
		case !hasMeta(s):
			r.kind, r.lit = kindExact, unescape(s)
		case s[0] == '*' && !hasMeta(s[1:]):
			r.kind, r.lit = kindSuffix, unescape(s[1:])
		case s[len(s)-1] == '*' && !hasMeta(s[:len(s)-1]):
			r.kind, r.lit = kindPrefix, unescape(s[:len(s)-1])
		}
	}
	return r, true
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

// match reports whether rel (slash-separated, relative to the rule's file) matches.
func (r *ignoreRule) match(rel string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	if !r.anchored {
		name := rel
		if i := strings.LastIndexByte(rel, '/'); i >= 0 {
			name = rel[i+1:]
		}
		switch r.kind {
		case kindExact:
			return name == r.lit
		case kindSuffix:
			return strings.HasSuffix(name, r.lit)
		case kindPrefix:
			return strings.HasPrefix(name, r.lit)
		}
		ok, _ := path.Match(r.segs[0], name)
		return ok
	}
	if !r.deep {
		// One path segment per pattern segment, matched without splitting
		// rel: this runs for every entry of a walk, for every such rule.
		for i, p := range r.segs {
			seg, rest, more := strings.Cut(rel, "/")
			if more != (i < len(r.segs)-1) {
				return false
			}
			if ok, _ := path.Match(p, seg); !ok {
				return false
			}
			rel = rest
		}
		return true
	}
	return matchSegs(r.segs, strings.Split(rel, "/"))
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

// ignored reports whether rel (relative to the walk root) is excluded. The
// deepest file wins, and within a file the last matching line wins.
func (f *ignoreFile) ignored(rel string, isDir bool) bool {
	for ; f != nil; f = f.parent {
		sub := rel
		if f.base != "" {
			if !strings.HasPrefix(rel, f.base+"/") {
				continue
			}
			sub = rel[len(f.base)+1:]
		}
		for i := len(f.rules) - 1; i >= 0; i-- {
			if f.rules[i].match(sub, isDir) {
				return !f.rules[i].negate
			}
		}
	}
	return false
}

// loadIgnore returns f extended with dir's .gitignore, or f itself when dir
// has none.
func loadIgnore(f *ignoreFile, dirAbs, base string) *ignoreFile {
	data, err := os.ReadFile(dirAbs + string(os.PathSeparator) + ".gitignore")
	if err != nil {
		return f
	}
	rules := parseIgnore(data)
	if len(rules) == 0 {
		return f
	}
	return &ignoreFile{parent: f, base: base, rules: rules}
}

// alwaysSkipped names entries no tool descends into or lists: version control
// internals and vendored JavaScript, which drown every search.
func alwaysSkipped(name string) bool {
	return name == ".git" || name == "node_modules"
}
