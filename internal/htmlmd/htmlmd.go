// Package htmlmd turns an HTML page into Markdown a model can read: the
// headings, paragraphs, lists, links, emphasis, code and tables of the
// page's text, without scripts, styles or markup.
//
// It is deliberately small and our own. The HTML-to-Markdown libraries
// build on golang.org/x/net/html, whose package init (its entity table,
// about 0.8 ms) would run on every start of reasonix, `reasonix version`
// included, for a tool most runs never call. The standard library's html
// package, used here for entities, builds its table on first use. The
// parse is forgiving and never fails: unknown tags are dropped and their
// text kept.
package htmlmd

import (
	"html"
	"net/url"
	"strconv"
	"strings"
)

// skipped elements' content is not text a reader sees.
func skipped(name string) bool {
	switch name {
	case "script", "style", "head", "noscript", "svg", "template", "iframe", "object", "canvas", "select":
		return true
	}
	return false
}

// block elements start and end on their own lines.
func block(name string) bool {
	switch name {
	case "p", "div", "section", "article", "header", "footer", "main", "nav", "aside", "table", "form",
		"ul", "ol", "dl", "dt", "dd", "figure", "figcaption", "blockquote", "address", "details",
		"summary", "body", "html", "fieldset":
		return true
	}
	return false
}

// Convert returns the Markdown of page. base, when it parses, resolves
// relative link and image targets.
func Convert(page, base string) string {
	c := converter{}
	if u, err := url.Parse(base); err == nil && u.IsAbs() {
		c.base = u
	}
	c.run(page)
	return c.result()
}

type list struct {
	ordered bool
	n       int
}

type converter struct {
	base  *url.URL
	out   strings.Builder
	pre   int
	lists []list
	links []string
	// space is set when whitespace was seen and not yet written.
	space bool
	// afterMarker is set while the line holds only a marker.
	afterMarker bool
}

func (c *converter) run(s string) {
	for len(s) > 0 {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			c.text(s)
			return
		}
		c.text(s[:i])
		s = s[i:]
		switch {
		case strings.HasPrefix(s, "<!--"):
			s = after(s[4:], "-->")
		case strings.HasPrefix(s, "<!") || strings.HasPrefix(s, "<?"):
			s = after(s, ">")
		default:
			name, attrs, closing, rest, ok := tag(s)
			if !ok {
				c.text("<")
				s = s[1:]
				continue
			}
			s = rest
			if !closing && skipped(name) {
				s = skipTo(s, name)
				continue
			}
			c.element(name, attrs, closing)
		}
	}
}

// after returns s after the first end, or "" when there is none.
func after(s, end string) string {
	if i := strings.Index(s, end); i >= 0 {
		return s[i+len(end):]
	}
	return ""
}

// skipTo returns s after the closing tag of name, case-insensitively.
func skipTo(s, name string) string {
	for {
		i := strings.Index(s, "</")
		if i < 0 {
			return ""
		}
		s = s[i+2:]
		if len(s) >= len(name) && strings.EqualFold(s[:len(name)], name) {
			return after(s, ">")
		}
	}
}

// tag reads one tag at the start of s (which begins with '<').
func tag(s string) (name string, attrs map[string]string, closing bool, rest string, ok bool) {
	i := 1
	if i < len(s) && s[i] == '/' {
		closing = true
		i++
	}
	start := i
	for i < len(s) && (isAlnum(s[i]) || s[i] == '-') {
		i++
	}
	if i == start || !isAlpha(s[start]) {
		return "", nil, false, s, false
	}
	name = strings.ToLower(s[start:i])
	attrs = map[string]string{}
	for i < len(s) {
		for i < len(s) && (isSpace(s[i]) || s[i] == '/') {
			i++
		}
		if i >= len(s) {
			break
		}
		if s[i] == '>' {
			return name, attrs, closing, s[i+1:], true
		}
		k := i
		for i < len(s) && !isSpace(s[i]) && s[i] != '=' && s[i] != '>' && s[i] != '/' {
			i++
		}
		key := strings.ToLower(s[k:i])
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		val := ""
		if i < len(s) && s[i] == '=' {
			i++
			for i < len(s) && isSpace(s[i]) {
				i++
			}
			if i < len(s) && (s[i] == '"' || s[i] == '\'') {
				q := s[i]
				j := strings.IndexByte(s[i+1:], q)
				if j < 0 {
					return "", nil, false, s, false
				}
				val = s[i+1 : i+1+j]
				i += j + 2
			} else {
				v := i
				for i < len(s) && !isSpace(s[i]) && s[i] != '>' {
					i++
				}
				val = s[v:i]
			}
		}
		if key != "" {
			attrs[key] = html.UnescapeString(val)
		} else {
			i++
		}
	}
	return "", nil, false, s, false
}

func isAlpha(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }
func isAlnum(b byte) bool { return isAlpha(b) || b >= '0' && b <= '9' }
func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' || b == '\f' }

func (c *converter) element(name string, attrs map[string]string, closing bool) {
	switch {
	case len(name) == 2 && name[0] == 'h' && name[1] >= '1' && name[1] <= '6':
		if closing {
			c.afterMarker = false
		}
		c.blank()
		if !closing {
			c.mark(strings.Repeat("#", int(name[1]-'0')) + " ")
		}
	case name == "br":
		c.newline()
	case name == "hr":
		c.blank()
		c.write("---")
		c.blank()
	case name == "pre":
		if closing {
			c.newline()
			c.write("```")
			c.pre = max(0, c.pre-1)
			c.blank()
		} else {
			c.blank()
			c.write("```\n")
			c.pre++
		}
	case name == "ul" || name == "ol":
		if closing {
			if len(c.lists) > 0 {
				c.lists = c.lists[:len(c.lists)-1]
			}
		} else {
			c.lists = append(c.lists, list{ordered: name == "ol"})
		}
		c.blockEdge()
	case name == "li":
		if closing {
			return
		}
		c.endLine()
		depth := max(len(c.lists)-1, 0)
		c.write(strings.Repeat("  ", depth))
		if len(c.lists) > 0 && c.lists[len(c.lists)-1].ordered {
			l := &c.lists[len(c.lists)-1]
			l.n++
			c.mark(strconv.Itoa(l.n) + ". ")
		} else {
			c.mark("- ")
		}
	case name == "a":
		if closing {
			if n := len(c.links); n > 0 {
				href := c.links[n-1]
				c.links = c.links[:n-1]
				if href != "" {
					c.write("](" + href + ")")
				}
			}
			return
		}
		href := c.resolve(attrs["href"])
		c.links = append(c.links, href)
		if href != "" {
			c.flushSpace()
			c.write("[")
		}
	case name == "img":
		src := c.resolve(attrs["src"])
		if src != "" {
			c.flushSpace()
			c.write("![" + strings.TrimSpace(attrs["alt"]) + "](" + src + ")")
		}
	case name == "strong" || name == "b":
		c.inline("**", closing)
	case name == "em" || name == "i":
		c.inline("_", closing)
	case name == "code" || name == "kbd" || name == "samp":
		if c.pre == 0 {
			c.inline("`", closing)
		}
	case name == "tr":
		c.newline()
	case name == "td" || name == "th":
		if !closing {
			c.flushSpace()
			c.mark("| ")
		} else {
			c.write(" ")
		}
	case name == "title":
	case block(name):
		c.blockEdge()
	}
}

// blockEdge ends the line, with a blank line outside lists.
func (c *converter) blockEdge() {
	if len(c.lists) > 0 {
		c.newline()
		return
	}
	c.blank()
}

// inline writes an emphasis or code marker: an opening one after any
// pending space, a closing one before it, so `**word** next` keeps its
// markers against the word.
func (c *converter) inline(mark string, closing bool) {
	if !closing {
		c.flushSpace()
	}
	c.write(mark)
}

func (c *converter) resolve(href string) string {
	href = strings.TrimSpace(href)
	if href == "" || strings.HasPrefix(href, "#") || strings.HasPrefix(strings.ToLower(href), "javascript:") {
		return ""
	}
	if c.base != nil {
		if u, err := c.base.Parse(href); err == nil {
			return u.String()
		}
	}
	return href
}

func (c *converter) text(s string) {
	if s == "" {
		return
	}
	s = html.UnescapeString(s)
	if c.pre > 0 {
		c.write(s)
		return
	}
	words := strings.Fields(s)
	if len(words) == 0 {
		c.space = true
		return
	}
	if isSpace(s[0]) {
		c.space = true
	}
	for i, w := range words {
		if i > 0 {
			c.space = true
		}
		c.flushSpace()
		c.write(w)
	}
	c.space = isSpace(s[len(s)-1])
}

// flushSpace writes a pending space unless the line is empty.
func (c *converter) flushSpace() {
	if c.space && !c.atLineStart() {
		c.write(" ")
	}
	c.space = false
}

// atLineStart reports an empty line or one holding only a marker.
func (c *converter) atLineStart() bool {
	s := c.out.String()
	return s == "" || s[len(s)-1] == '\n' || c.afterMarker
}

func (c *converter) write(s string) {
	c.out.WriteString(s)
	c.afterMarker = false
}

// mark writes a line's marker (a list bullet, a heading's #s), after which
// no space is due.
func (c *converter) mark(s string) {
	c.out.WriteString(s)
	c.afterMarker = true
}

// newline ends the current line; a line holding only a list marker is
// kept open for the item's first block (<li><p>).
func (c *converter) newline() {
	if c.afterMarker {
		c.space = false
		return
	}
	c.endLine()
}

func (c *converter) endLine() {
	c.space = false
	s := c.out.String()
	if s != "" && s[len(s)-1] != '\n' {
		c.write("\n")
	}
}

func (c *converter) blank() {
	if c.afterMarker {
		c.space = false
		return
	}
	c.newline()
	s := c.out.String()
	if s != "" && !strings.HasSuffix(s, "\n\n") {
		c.write("\n")
	}
}

// result trims trailing spaces and runs of blank lines.
func (c *converter) result() string {
	lines := strings.Split(c.out.String(), "\n")
	out := make([]string, 0, len(lines))
	blank := 0
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" {
			blank++
			if blank > 1 {
				continue
			}
		} else {
			blank = 0
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n")) + "\n"
}
