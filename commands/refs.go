package commands

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/reasonix/reasonix/internal/gitignore"
	"github.com/reasonix/reasonix/internal/nofollow"
)

// Limits of what @references inline.
const (
	// MaxRefFile bounds the bytes inlined from one file.
	MaxRefFile = 64 << 10
	// MaxRefTotal bounds the bytes all references of one entry inline.
	MaxRefTotal = 256 << 10
	// maxRefEntries bounds a directory listing.
	maxRefEntries = 300
	// refDepth is how deep a directory listing goes.
	refDepth = 3
)

// Ref is one @reference found in a text.
type Ref struct {
	// Token is the reference as typed, without the "@".
	Token string
	// Path is the path part and From, To the line range (#L10-40; 0 when
	// absent; To is From for #L10).
	Path     string
	From, To int
}

// FindRefs returns the @path tokens of text: an "@" at the start or after
// white space or an opening bracket or quote, up to the next white space,
// with trailing punctuation trimmed; or, for a path with spaces, a quoted
// one on one line (@"my docs/a b.md", as Claude Code writes it). Whether a
// token names a file is the caller's question; "@alice" and
// "me@example.com" are found or not, but never name a file.
func FindRefs(text string) []Ref {
	var out []Ref
	for i := 0; i < len(text); i++ {
		if text[i] != '@' {
			continue
		}
		if i > 0 && !strings.ContainsRune(" \t\n\r([{\"'`", rune(text[i-1])) {
			continue
		}
		var tok, path string
		if q, ok := quotedRef(text[i+1:]); ok {
			tok, path = q, q[1:len(q)-1]
			i += len(q)
		} else {
			j := i + 1
			for j < len(text) && !strings.ContainsRune(" \t\n\r", rune(text[j])) {
				j++
			}
			tok = strings.TrimRight(text[i+1:j], ".,;:!?)]}\"'`")
			path = tok
			i = j - 1
		}
		if tok == "" {
			continue
		}
		r := Ref{Token: tok, Path: path}
		if p, frag, ok := strings.Cut(path, "#"); ok {
			if from, to, ok := lineRange(frag); ok {
				r.Path, r.From, r.To = p, from, to
			}
		}
		if r.Path != "" {
			out = append(out, r)
		}
	}
	return out
}

// quotedRef returns the quoted reference s starts with ("a b.md", quotes
// included), if s starts with one closed on its line.
func quotedRef(s string) (string, bool) {
	if !strings.HasPrefix(s, `"`) {
		return "", false
	}
	end := strings.IndexAny(s[1:], "\"\n")
	if end <= 0 || s[1+end] != '"' {
		return "", false
	}
	return s[:end+2], true
}

// lineRange parses "L10-40", "L10-L40" or "L10".
func lineRange(s string) (from, to int, ok bool) {
	if !strings.HasPrefix(s, "L") {
		return 0, 0, false
	}
	a, b, ranged := strings.Cut(s[1:], "-")
	from, err := strconv.Atoi(a)
	if err != nil || from < 1 {
		return 0, 0, false
	}
	if !ranged {
		return from, from, true
	}
	to, err = strconv.Atoi(strings.TrimPrefix(b, "L"))
	if err != nil || to < from {
		return 0, 0, false
	}
	return from, to, true
}

// RefOptions say how references resolve.
type RefOptions struct {
	// Root is the workspace root (symlink-free); only paths inside it are
	// inlined.
	Root string
	// Resolve confines a path for reading (the session's path guard): it
	// returns the real, symlink-free path or an error.
	Resolve func(path string) (string, error)
	// Denied reports the permission rule that forbids reading abs
	// (Read(./.env)), or "" when reading is allowed.
	Denied func(abs string) string
}

// Inline resolves the @references of text that name a file or folder of
// the workspace and returns text followed by their contents: files
// wrapped with their path (a line range when one was given, capped, a
// binary file only noted), folders as a listing without .git and ignored
// entries. Text is left as it was typed. A token that names nothing stays
// text and is not mentioned; one that names something outside the
// workspace or that a rule forbids reading is not inlined, and notices
// say why.
func Inline(text string, o RefOptions) (string, []string) {
	refs := FindRefs(text)
	if len(refs) == 0 {
		return text, nil
	}
	var notices []string
	var b strings.Builder
	total := 0
	done := map[string]bool{}
	for _, r := range refs {
		if done[r.Token] {
			continue
		}
		done[r.Token] = true
		lexical := r.Path
		if !filepath.IsAbs(lexical) {
			lexical = filepath.Join(o.Root, lexical)
		}
		st, err := os.Stat(lexical)
		if err != nil {
			continue // names no file: an @mention, an address, a decorator
		}
		abs := lexical
		if real, err := filepath.EvalSymlinks(lexical); err == nil {
			abs = real
		}
		if o.Resolve != nil {
			if abs, err = o.Resolve(r.Path); err != nil {
				notices = append(notices, fmt.Sprintf("@%s is not inlined: %v", r.Token, err))
				continue
			}
		}
		rel, err := filepath.Rel(o.Root, abs)
		if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			notices = append(notices, fmt.Sprintf("@%s is not inlined: it is outside the workspace %s", r.Token, o.Root))
			continue
		}
		if o.Denied != nil {
			if rule := o.Denied(abs); rule != "" {
				notices = append(notices, fmt.Sprintf("@%s is not inlined: reading it is denied by %s", r.Token, rule))
				continue
			}
		}
		rel = filepath.ToSlash(rel)
		if total >= MaxRefTotal {
			notices = append(notices, fmt.Sprintf("@%s is not inlined: the references of this message passed %d KB", r.Token, MaxRefTotal>>10))
			continue
		}
		var block string
		if st.IsDir() {
			block = listing(abs, rel, o)
		} else {
			block, err = fileBlock(abs, rel, r, min(MaxRefFile, MaxRefTotal-total))
			if err != nil {
				notices = append(notices, fmt.Sprintf("@%s is not inlined: %v", r.Token, err))
				continue
			}
		}
		total += len(block)
		b.WriteString("\n\n")
		b.WriteString(block)
	}
	if b.Len() == 0 {
		return text, notices
	}
	return text + b.String(), notices
}

// fileBlock is one file wrapped with its path, within limit bytes. abs
// is the path the caller checked, free of symlinks: it is opened without
// following one (internal/nofollow), so a symlink a confined command
// retargets after the check is not followed to a file the check refused,
// and only a regular file with one name is read (a FIFO would block).
func fileBlock(abs, rel string, r Ref, limit int) (string, error) {
	f, err := nofollow.Open(abs, nofollow.ReadFlags, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", rel)
	}
	if nofollow.LinkCount(st) > 1 {
		return "", fmt.Errorf("%s is a hard link, which may share its content with a file outside the workspace", rel)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return "", err
	}
	head := data[:min(len(data), 8000)]
	if bytes.IndexByte(head, 0) >= 0 || !utf8.Valid(trimPartialRune(head)) {
		return fmt.Sprintf("<file path=%q>\n(binary file, %d bytes; not inlined)\n</file>", rel, len(data)), nil
	}
	attr := ""
	body := string(data)
	if r.From > 0 {
		lines := strings.SplitAfter(body, "\n")
		if len(lines) > 0 && lines[len(lines)-1] == "" {
			lines = lines[:len(lines)-1]
		}
		if r.From > len(lines) {
			return "", fmt.Errorf("%s has %d lines; the range starts at %d", rel, len(lines), r.From)
		}
		to := min(r.To, len(lines))
		body = strings.Join(lines[r.From-1:to], "")
		attr = fmt.Sprintf(" lines=\"%d-%d\"", r.From, to)
	}
	note := ""
	if len(body) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(body[cut]) {
			cut--
		}
		note = fmt.Sprintf("\n… (%d of %d bytes shown; read the file for the rest)", cut, len(body))
		body = body[:cut]
	}
	return fmt.Sprintf("<file path=%q%s>\n%s%s\n</file>", rel, attr, strings.TrimSuffix(body, "\n"), note), nil
}

// trimPartialRune drops a rune cut in half at the end of a sample.
func trimPartialRune(b []byte) []byte {
	for i := 0; i < 3 && len(b) > 0 && !utf8.Valid(b); i++ {
		b = b[:len(b)-1]
	}
	return b
}

// listing is a folder's tree, three levels deep, without .git and the
// entries .gitignore files exclude.
func listing(abs, rel string, o RefOptions) string {
	var lines []string
	more := false
	// The rules of every folder from the workspace root down to this one.
	ign := gitignore.Enclosing(o.Root).LoadDir(o.Root, "")
	if rel != "." {
		parts := strings.Split(rel, "/")
		for i := range parts {
			base := strings.Join(parts[:i+1], "/")
			ign = ign.LoadDir(filepath.Join(o.Root, filepath.FromSlash(base)), base)
		}
	}
	var walk func(dir, relDir string, m *gitignore.Matcher, depth int)
	walk = func(dir, relDir string, m *gitignore.Matcher, depth int) {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return
		}
		sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
		for _, e := range ents {
			if more {
				return
			}
			name := e.Name()
			if name == ".git" {
				continue
			}
			isDir := e.IsDir() || e.Type()&fs.ModeSymlink != 0 && isDirPath(filepath.Join(dir, name))
			wsRel := name
			if relDir != "." {
				wsRel = relDir + "/" + name
			}
			if m.Ignored(wsRel, isDir) {
				continue
			}
			if len(lines) == maxRefEntries {
				more = true
				return
			}
			indent := strings.Repeat("  ", refDepth-depth)
			if isDir {
				lines = append(lines, indent+name+"/")
				if depth > 1 && e.IsDir() {
					sub := filepath.Join(dir, name)
					walk(sub, wsRel, m.LoadDir(sub, wsRel), depth-1)
				}
				continue
			}
			lines = append(lines, indent+name)
		}
	}
	walk(abs, rel, ign, refDepth)
	if more {
		lines = append(lines, fmt.Sprintf("… (more than %d entries; use ls or glob for the rest)", maxRefEntries))
	}
	return fmt.Sprintf("<directory path=%q>\n%s\n</directory>", rel, strings.Join(lines, "\n"))
}

func isDirPath(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
