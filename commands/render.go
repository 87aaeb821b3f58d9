package commands

import (
	"sort"
	"strings"

	"github.com/reasonix/reasonix/internal/text"
)

// Render fills a command's body with its arguments: $ARGUMENTS is the
// whole argument text, $1 … $N the words of it (shell-style quotes group
// words; a missing one is empty) and $$ a literal $. A body that uses
// none of them gets the arguments appended, so they are never lost.
func Render(body, args string) string {
	args = strings.TrimSpace(args)
	words := SplitArgs(args)
	var b strings.Builder
	used := false
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c != '$' || i+1 == len(body) {
			b.WriteByte(c)
			continue
		}
		rest := body[i+1:]
		switch {
		case rest[0] == '$':
			b.WriteByte('$')
			i++
		case strings.HasPrefix(rest, "ARGUMENTS"):
			b.WriteString(args)
			i += len("ARGUMENTS")
			used = true
		case rest[0] >= '1' && rest[0] <= '9':
			j := 0
			n := 0
			for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' && n < 1000 {
				n = n*10 + int(rest[j]-'0')
				j++
			}
			if n-1 < len(words) {
				b.WriteString(words[n-1])
			}
			i += j
			used = true
		default:
			b.WriteByte(c)
		}
	}
	out := b.String()
	if !used && args != "" {
		out += "\n\nARGUMENTS: " + args
	}
	return out
}

// SplitArgs splits argument text into words at white space; single or
// double quotes group words, and the quotes are removed.
func SplitArgs(s string) []string {
	var words []string
	var cur strings.Builder
	in := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
				continue
			}
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, in = r, true
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		words = append(words, cur.String())
	}
	return words
}

// Span is one !`cmd` span in a command body: the shell command and where the
// whole span sits in the text.
type Span struct {
	Command    string
	Start, End int
}

// ShellSpans finds the !`cmd` spans of text whose output replaces them
// before the prompt is sent. The "!" must start the text or follow white
// space or an opening bracket, so prose such as "done!`x`" is left alone;
// the command ends at the next backquote on the same line.
func ShellSpans(text string) []Span {
	var out []Span
	for i := 0; i+1 < len(text); i++ {
		if text[i] != '!' || text[i+1] != '`' {
			continue
		}
		if i > 0 && !strings.ContainsRune(" \t\n\r([{", rune(text[i-1])) {
			continue
		}
		end := strings.IndexAny(text[i+2:], "`\n")
		if end < 0 || text[i+2+end] != '`' {
			continue
		}
		cmd := strings.TrimSpace(text[i+2 : i+2+end])
		if cmd == "" {
			continue
		}
		out = append(out, Span{Command: cmd, Start: i, End: i + 3 + end})
		i += 2 + end
	}
	return out
}

// Near returns the names in names closest to name, best first: those it
// is a prefix or part of, then those within a small edit distance. It is
// what an unknown /name is answered with.
func Near(name string, names []string) []string {
	type cand struct {
		n string
		d int
	}
	var cs []cand
	low := strings.ToLower(name)
	for _, n := range names {
		ln := strings.ToLower(n)
		d := text.EditDistance(low, ln)
		switch {
		case strings.HasPrefix(ln, low) || strings.HasPrefix(low, ln):
			d = 0
		case strings.Contains(ln, low) || strings.Contains(low, ln):
			d = 1
		}
		if limit := max(2, len(low)/3); d <= limit {
			cs = append(cs, cand{n, d})
		}
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].n < cs[j].n
	})
	var out []string
	for i, c := range cs {
		if i == 5 {
			break
		}
		out = append(out, c.n)
	}
	return out
}
