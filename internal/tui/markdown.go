package tui

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rivo/tview"
	"github.com/rivo/uniseg"

	"github.com/reasonix/reasonix/internal/text"
)

// mdStream renders streamed Markdown to tview markup as it arrives: each
// delta yields only the markup for the text it completes, appended to the
// transcript, so nothing already written is ever rendered again and a
// chunk costs time in proportion to its own length.
//
// Styles are opened and closed in the output stream (tview's tags are not
// nested: "[::b]" turns bold on, "[::B]" off), which is what makes appending
// possible. What cannot be decided yet is held back until the next delta:
// the start of a line (heading? list? fence?), an emphasis marker whose
// neighbour has not arrived, a link until its ")", a whole line of code
// (highlighted when complete) and a whole table (aligned when it ends).
//
// The supported subset is what models write: ATX headings, bullet and
// numbered lists, block quotes, fenced code with highlighting, tables,
// thematic breaks, **bold**, *italic*, _italic_, ~~strike~~, `code` and
// [links](url). Anything else passes through as text.
type mdStream struct {
	th   *theme
	hold string // undecided input
	// fed is the last character fed, for a skin-tone modifier that
	// arrives in the next piece (dropToneModifiers).
	fed rune

	lineStart bool
	// lineEnd is the markup closing the current line's block style.
	lineEnd string
	// Inline styles open now.
	bold, italic, strike, code bool
	// prev is the last rune consumed on this line (0 at its start): what
	// precedes a marker run decides whether it opens or closes.
	prev rune

	fence    string // "```" or "~~~" while in a fenced block
	lang     string
	codeLine int
	table    []string // table rows held until the table ends

	// soft, when set, collects a list item or a quote line whole (wrap)
	// and writes it as a soft line (see softLine) that the transcript
	// wraps at its width, again whenever the width changes, each
	// continuation line starting with cont under the item's text; the
	// TextView alone would start them at the left edge.
	soft bool
	wrap *strings.Builder
	cont string
}

// quoteEnd ends a quote line's style; it also marks the line as a quote.
const quoteEnd = "[-::I]"

func newMarkdown(th *theme) *mdStream { return &mdStream{th: th, lineStart: true, fed: ' '} }

// maxHold bounds what is held for one undecided construct (a link that
// never closes); past it the text is written as it is.
const maxHold = 2000

// Feed takes the next piece of streamed text and returns the markup it
// completes.
func (m *mdStream) Feed(s string) string {
	// What the model wrote is shown as text (see escape): a carriage
	// return or an ESC shows as ^M or ^[, U+202E as <U+202E>. That also
	// keeps the soft line's marks, control characters, the renderer's
	// own: text never brings them.
	s = dropToneModifiers(m.fed, text.Visible(s))
	if r, _ := utf8.DecodeLastRuneInString(s); s != "" {
		m.fed = r // a modifier may come in the next piece
	}
	m.hold += s
	var out strings.Builder
	for m.hold != "" {
		n := m.step(&out, false)
		if n == 0 {
			if len(m.hold) > maxHold && m.step(&out, true) > 0 {
				continue // gave up deciding: written as final
			}
			break
		}
	}
	return out.String()
}

// Flush ends the stream: everything held is written and every style
// closed. The result ends with a newline unless nothing was written on
// the last line.
func (m *mdStream) Flush() string {
	var out strings.Builder
	for m.hold != "" {
		if m.step(&out, true) == 0 {
			break
		}
	}
	if len(m.table) > 0 {
		out.WriteString(m.renderTable())
	}
	if !m.lineStart {
		end := m.closeInline() + m.lineEnd + "\n"
		m.lineEnd = ""
		m.lineStart = true
		if m.wrap != nil {
			m.wrap.WriteString(end)
			out.WriteString(m.wrapped())
		} else {
			out.WriteString(end)
		}
	}
	m.fence, m.lang = "", ""
	return out.String()
}

// step consumes a decidable prefix of m.hold, writing its markup, and
// returns how many bytes it consumed (0: wait for more input). final
// means no more input is coming for the held text.
func (m *mdStream) step(out *strings.Builder, final bool) int {
	if m.lineStart {
		return m.startLine(out, final)
	}
	if m.wrap == nil {
		return m.inline(out, final)
	}
	n := m.inline(m.wrap, final)
	if m.lineStart {
		out.WriteString(m.wrapped())
	}
	return n
}

// startWrap begins collecting a list item or quote line whose prefix is
// prefix; cont starts each continuation line, and is as wide as prefix.
// Without soft lines it writes prefix to out and the line streams as any
// other.
func (m *mdStream) startWrap(out *strings.Builder, prefix, cont string) {
	if !m.soft {
		out.WriteString(prefix)
		return
	}
	m.wrap = &strings.Builder{}
	m.wrap.WriteString(prefix)
	m.cont = cont
}

// wrapped ends the collected line: a soft line.
func (m *mdStream) wrapped() string {
	s := m.wrap.String()
	m.wrap = nil
	return softMark + m.cont + softSep + s
}

// A soft line is a line of transcript markup that is wrapped where it is
// shown, for the width it is shown at: softMark, the markup that starts
// each continuation line, softSep, then the line. Only the Markdown
// renderer writes them (it drops the two characters from the text it is
// given, and the transcript from everything else it is given), so no
// text can pass for one.
const (
	softMark = "\x1e"
	softSep  = "\x1f"
)

// stripSoft drops the soft line marks from s.
func stripSoft(s string) string {
	return strings.NewReplacer(softMark, "", softSep, "").Replace(s)
}

// layoutSoft lays out the soft lines of s for width: each is wrapped, its
// continuation lines starting with its continuation markup, which is as
// wide as the line's prefix, so they sit under the item's text or keep
// the quote's bar. Other lines are left to the TextView. Width 0 (not
// drawn yet) or too narrow a width writes a soft line as it is.
func layoutSoft(s string, width int) string {
	if !strings.Contains(s, softMark) {
		return s
	}
	var b strings.Builder
	for s != "" {
		i := strings.Index(s, softMark)
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		s = s[i+len(softMark):]
		line, rest, nl := strings.Cut(s, "\n")
		s = rest
		cont, body, ok := strings.Cut(line, softSep)
		if !ok {
			body, cont = line, ""
		}
		b.WriteString(wrapSoft(body, cont, width))
		if nl {
			b.WriteString("\n")
		}
	}
	return b.String()
}

// wrapSoft wraps one soft line's markup at width, each continuation line
// starting with cont.
func wrapSoft(body, cont string, width int) string {
	hang := tview.TaggedStringWidth(cont)
	// No character is wider than its UTF-8 bytes, so a body of no more
	// bytes than the width fits without being measured.
	if width-hang < 10 || len(body) <= width {
		return body
	}
	lines := tview.WordWrap(body, width)
	if len(lines) < 2 {
		return body // it fits
	}
	first := lines[0]
	var b strings.Builder
	b.WriteString(strings.TrimRight(first, " "))
	for _, l := range tview.WordWrap(strings.TrimLeft(body[len(first):], " "), width-hang) {
		b.WriteString("\n" + cont + strings.TrimRight(l, " "))
	}
	return b.String()
}

// wholeLine returns the held line without its newline and whether it is
// complete (final input counts as complete).
func (m *mdStream) wholeLine(final bool) (string, int, bool) {
	if i := strings.IndexByte(m.hold, '\n'); i >= 0 {
		return m.hold[:i], i + 1, true
	}
	if final {
		return m.hold, len(m.hold), true
	}
	return "", 0, false
}

// startLine decides what kind of line begins here.
func (m *mdStream) startLine(out *strings.Builder, final bool) int {
	if m.fence != "" {
		line, n, ok := m.wholeLine(final)
		if !ok {
			return 0
		}
		if strings.HasPrefix(strings.TrimSpace(line), m.fence) {
			m.fence, m.lang = "", ""
			out.WriteString(m.th.tag(m.th.dim, "  ╰─") + "\n")
			return m.consume(n)
		}
		m.codeLine++
		out.WriteString(m.th.tag(m.th.dim, "  │ ") + highlight(m.lang, line, m.th) + "\n")
		return m.consume(n)
	}
	trim := strings.TrimLeft(m.hold, " ")
	indent := len(m.hold) - len(trim)
	if trim == "" && !final {
		return 0
	}
	// A table continues while lines start with "|".
	if strings.HasPrefix(trim, "|") {
		line, n, ok := m.wholeLine(final)
		if !ok {
			return 0
		}
		m.table = append(m.table, line)
		return m.consume(n)
	}
	if len(m.table) > 0 {
		out.WriteString(m.renderTable())
	}
	if !final && needMore(trim) {
		return 0
	}
	first := trim
	if i := strings.IndexByte(first, '\n'); i >= 0 {
		first = first[:i]
	}
	switch {
	case strings.HasPrefix(first, "```") || strings.HasPrefix(first, "~~~"):
		line, n, ok := m.wholeLine(final)
		if !ok {
			return 0
		}
		t := strings.TrimSpace(line)
		m.fence = t[:3]
		m.lang = strings.ToLower(strings.TrimSpace(strings.TrimLeft(t, "`~")))
		if f := strings.Fields(m.lang); len(f) > 0 {
			m.lang = f[0]
		}
		m.codeLine = 0
		label := "  ╭─"
		if m.lang != "" {
			label += " " + m.lang
		}
		out.WriteString(m.th.tag(m.th.dim, escape(label)) + "\n")
		return m.consume(n)
	case isBreak(first):
		line, n, ok := m.wholeLine(final)
		if !ok {
			return 0
		}
		if isBreak(strings.TrimSpace(line)) {
			out.WriteString(m.th.tag(m.th.dim, strings.Repeat("─", 40)) + "\n")
			return m.consume(n)
		}
	case strings.HasPrefix(trim, "#"):
		level := len(trim) - len(strings.TrimLeft(trim, "#"))
		if level <= 6 && len(trim) > level && trim[level] == ' ' {
			m.lineStart = false
			m.lineEnd = "[-::B]"
			out.WriteString("[" + m.th.heading + "::b]")
			if level <= 2 {
				out.WriteString("[::u]")
				m.lineEnd = "[-::BU]"
			}
			return m.consume(indent + level + 1)
		}
	case strings.HasPrefix(trim, ">"):
		n := indent + 1
		if len(trim) > 1 && trim[1] == ' ' {
			n++
		}
		m.lineStart = false
		m.lineEnd = quoteEnd
		m.startWrap(out, m.th.tag(m.th.dim, "│ ")+"["+m.th.quote+"::i]", m.th.tag(m.th.dim, "│ ")+"["+m.th.quote+"::i]")
		return m.consume(n)
	}
	if marker, ok := listMarker(trim); ok {
		m.lineStart = false
		pad := strings.Repeat(" ", indent)
		shown := marker
		if marker == "-" || marker == "*" || marker == "+" {
			shown = "•"
		}
		m.startWrap(out, pad+m.th.tag(m.th.accent, shown)+" ", strings.Repeat(" ", indent+uniseg.StringWidth(shown)+1))
		return m.consume(indent + len(marker) + 1)
	}
	m.lineStart = false
	return m.inline(out, final)
}

// needMore reports whether the start of a line is too short to know its
// kind.
func needMore(s string) bool {
	if strings.IndexByte(s, '\n') >= 0 {
		return false
	}
	switch {
	case len(s) < 3 && strings.Trim(s, "`~-*_") == "":
		return true // a fence or a break may be coming
	case strings.HasPrefix(s, "#") && strings.Trim(s, "#") == "":
		return true
	case len(s) == 1 && strings.ContainsAny(s, "-*+>|"):
		return true
	case len(s) < 4 && strings.Trim(s, "0123456789") == "":
		return true // "12" may become "12. "
	case isBreak(s), strings.HasPrefix(s, "---"), strings.HasPrefix(s, "***"), strings.HasPrefix(s, "___"):
		return true // a break is decided at the end of its line
	}
	if d := strings.TrimLeft(s, "0123456789"); len(d) < len(s) && (d == "." || d == ")") {
		return true
	}
	return false
}

// isBreak: "---", "***", "___" (three or more, spaces allowed).
func isBreak(s string) bool {
	s = strings.ReplaceAll(strings.TrimSpace(s), " ", "")
	if len(s) < 3 {
		return false
	}
	c := s[0]
	return (c == '-' || c == '*' || c == '_') && strings.Trim(s, string(c)) == ""
}

// listMarker returns "-", "*", "+" or "N." / "N)" when s starts a list
// item.
func listMarker(s string) (string, bool) {
	if len(s) >= 2 && strings.IndexByte("-*+", s[0]) >= 0 && s[1] == ' ' {
		return s[:1], true
	}
	d := 0
	for d < len(s) && d < 9 && s[d] >= '0' && s[d] <= '9' {
		d++
	}
	if d > 0 && len(s) > d+1 && (s[d] == '.' || s[d] == ')') && s[d+1] == ' ' {
		return s[:d+1], true
	}
	return "", false
}

// closeInline closes the inline styles still open.
func (m *mdStream) closeInline() string {
	var b strings.Builder
	if m.code {
		b.WriteString("[-]")
	}
	if m.bold {
		b.WriteString("[::B]")
	}
	if m.italic {
		b.WriteString("[::I]")
	}
	if m.strike {
		b.WriteString("[::S]")
	}
	m.bold, m.italic, m.strike, m.code = false, false, false, false
	return b.String()
}

// inline renders the held text of the current line up to where it can
// decide, and returns how much it consumed.
func (m *mdStream) inline(out *strings.Builder, final bool) int {
	s := m.hold
	i := 0
	plain := func(j int) {
		if j > i {
			out.WriteString(s[i:j])
		}
	}
	for j := 0; j < len(s); {
		c := s[j]
		switch {
		case c == '\n':
			plain(j)
			out.WriteString(m.closeInline() + m.lineEnd + "\n")
			m.lineEnd = ""
			m.lineStart = true
			return m.consume(j + 1)
		case c == '`':
			plain(j)
			if m.code {
				out.WriteString("[-]")
			} else {
				out.WriteString("[" + m.th.code + "]")
			}
			m.code = !m.code
			i, j = j+1, j+1
		case c == '[' && m.code:
			plain(j)
			lit, next, wait := literalBracket(s, j, final)
			if wait {
				return m.consume(j)
			}
			out.WriteString(lit)
			i, j = next, next
		case m.code:
			j++
		case c == '\\':
			if j+1 >= len(s) {
				if !final {
					plain(j)
					return m.consume(j)
				}
				j++
				continue
			}
			plain(j)
			if next := s[j+1]; next == '[' {
				lit, after, wait := literalBracket(s, j+1, final)
				if wait {
					return m.consume(j)
				}
				out.WriteString(lit)
				i, j = after, after
			} else if strings.IndexByte("\\`*_~]#>-+.!|()", next) >= 0 {
				out.WriteByte(next)
				i, j = j+2, j+2
			} else {
				i, j = j, j+1
			}
		case c == '*' || c == '_' || c == '~':
			k := j
			for k < len(s) && s[k] == c {
				k++
			}
			if k == len(s) && !final {
				plain(j)
				return m.consume(j) // the run or its neighbour is still coming
			}
			plain(j)
			prev := m.prev
			if j > 0 {
				prev = prevRune(s, j)
			}
			out.WriteString(m.emphasis(c, k-j, prev, nextRune(s, k)))
			i, j = k, k
		case c == '[':
			plain(j)
			text, url, n, state := link(s[j:])
			switch state {
			case linkWait:
				if !final {
					return m.consume(j)
				}
				out.WriteString(escape(s[j:]))
				return m.consume(len(s))
			case linkNone:
				lit, next, _ := literalBracket(s, j, true)
				out.WriteString(lit)
				i, j = next, next
			default:
				out.WriteString("[" + m.th.link + "::u]" + escape(text) + "[-::U]")
				if url != "" && url != text {
					out.WriteString(m.th.tag(m.th.dim, " ("+escape(url)+")"))
				}
				i, j = j+n, j+n
			}
		default:
			j++
		}
	}
	plain(len(s))
	return m.consume(len(s))
}

// literalBracket writes the "[" at s[j] as text: escaped together with
// everything up to its "]" (or the end of the line), so that no later
// text can complete it into a style tag. wait: the "]" may still come.
func literalBracket(s string, j int, final bool) (markup string, next int, wait bool) {
	end := strings.IndexAny(s[j+1:], "]`\n")
	switch {
	case end < 0 && !final:
		return "", j, true
	case end < 0:
		end = len(s)
	case s[j+1+end] == ']':
		end = j + 2 + end
	default:
		end = j + 1 + end
	}
	return escape(s[j:end]), end, false
}

// consume drops n bytes from the held text and returns n.
func (m *mdStream) consume(n int) int {
	if n > 0 {
		r, _ := utf8.DecodeLastRuneInString(m.hold[:n])
		m.prev = r
		if r == '\n' {
			m.prev = 0
		}
	}
	m.hold = m.hold[n:]
	return n
}

// emphasis turns a run of n markers c into style changes, or writes it as
// text when it neither opens nor closes.
func (m *mdStream) emphasis(c byte, n int, prev, next rune) string {
	run := strings.Repeat(string(c), n)
	closing := prev != 0 && !unicode.IsSpace(prev)
	opening := next != 0 && !unicode.IsSpace(next)
	if c == '_' {
		// snake_case is not emphasis.
		if isWord(prev) && isWord(next) {
			return run
		}
	}
	if c == '~' {
		if n != 2 {
			return run
		}
		switch {
		case m.strike && closing:
			m.strike = false
			return "[::S]"
		case !m.strike && opening:
			m.strike = true
			return "[::s]"
		}
		return run
	}
	var b strings.Builder
	toggle := func(on *bool, open, close string) bool {
		switch {
		case *on && closing:
			*on = false
			b.WriteString(close)
			return true
		case !*on && opening && (prev == 0 || !isWord(prev) || c == '*'):
			*on = true
			b.WriteString(open)
			return true
		}
		return false
	}
	// A quote line is italic throughout: emphasis in it ends without
	// ending the quote's italics.
	italicOff := "[::I]"
	if m.lineEnd == quoteEnd {
		italicOff = "[::i]"
	}
	switch n {
	case 1:
		if !toggle(&m.italic, "[::i]", italicOff) {
			return run
		}
	case 2:
		if !toggle(&m.bold, "[::b]", "[::B]") {
			return run
		}
	case 3:
		if !toggle(&m.bold, "[::b]", "[::B]") || !toggle(&m.italic, "[::i]", italicOff) {
			return run
		}
	default:
		return run
	}
	return b.String()
}

func isWord(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// prevRune is the rune before s[i] (i > 0).
func prevRune(s string, i int) rune {
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return r
}

// nextRune is the rune at s[i], 0 at the end or at a newline.
func nextRune(s string, i int) rune {
	if i >= len(s) || s[i] == '\n' {
		return 0
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	return r
}

type linkState int

const (
	linkWait linkState = iota // cannot tell yet
	linkNone                  // not a link
	linkDone
)

// link parses "[text](url)" at the start of s.
func link(s string) (text, url string, n int, st linkState) {
	end := strings.IndexAny(s[1:], "]\n")
	if end < 0 {
		return "", "", 0, linkWait
	}
	end++
	if s[end] == '\n' {
		return "", "", 0, linkNone
	}
	if end+1 >= len(s) {
		return "", "", 0, linkWait
	}
	if s[end+1] != '(' {
		return "", "", 0, linkNone
	}
	close := strings.IndexAny(s[end+2:], ")\n")
	if close < 0 {
		return "", "", 0, linkWait
	}
	if s[end+2+close] == '\n' {
		return "", "", 0, linkNone
	}
	url = strings.TrimSpace(s[end+2 : end+2+close])
	if f := strings.Fields(url); len(f) > 0 {
		url = f[0] // drop a "title"
	}
	return s[1:end], url, end + 3 + close, linkDone
}

// renderTable writes the held table rows aligned, the header bold, and
// forgets them.
func (m *mdStream) renderTable() string {
	rows := m.table
	m.table = nil
	var cells [][]string
	for _, r := range rows {
		r = strings.TrimSpace(r)
		r = strings.TrimPrefix(r, "|")
		r = strings.TrimSuffix(r, "|")
		parts := strings.Split(r, "|")
		sep := true
		for k := range parts {
			parts[k] = strings.TrimSpace(parts[k])
			if strings.Trim(parts[k], ":-") != "" || parts[k] == "" {
				sep = false
			}
		}
		if sep && len(cells) == 1 {
			continue // the header's separator row
		}
		cells = append(cells, parts)
	}
	// Cells are rendered as inline Markdown; widths come from the text
	// shown, tags left out.
	var cols int
	for _, r := range cells {
		cols = max(cols, len(r))
	}
	width := make([]int, cols)
	marked := make([][]string, len(cells))
	for ri, r := range cells {
		marked[ri] = make([]string, cols)
		for ci := range cols {
			txt := ""
			if ci < len(r) {
				txt = r[ci]
			}
			cm := &mdStream{th: m.th}
			cm.hold = txt
			var b strings.Builder
			cm.inline(&b, true)
			b.WriteString(cm.closeInline())
			marked[ri][ci] = b.String()
			width[ci] = max(width[ci], tview.TaggedStringWidth(marked[ri][ci]))
		}
	}
	var out strings.Builder
	bar := m.th.tag(m.th.dim, "│")
	for ri, r := range marked {
		out.WriteString("  ")
		for ci, c := range r {
			if ci > 0 {
				out.WriteString(" " + bar + " ")
			}
			if ri == 0 {
				out.WriteString("[::b]" + c + "[::B]")
			} else {
				out.WriteString(c)
			}
			out.WriteString(strings.Repeat(" ", width[ci]-tview.TaggedStringWidth(c)))
		}
		out.WriteString("\n")
		if ri == 0 && len(marked) > 1 {
			var parts []string
			for _, w := range width {
				parts = append(parts, strings.Repeat("─", w))
			}
			out.WriteString("  " + m.th.tag(m.th.dim, strings.Join(parts, "─┼─")) + "\n")
		}
	}
	return out.String()
}
