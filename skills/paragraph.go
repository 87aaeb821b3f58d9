package skills

import (
	"bytes"
	"strings"
)

// FirstParagraph returns the text of the first Markdown paragraph of body,
// on one line, skipping headings, code blocks and other leading blocks. It
// is the fallback description of files without frontmatter.
//
// It reads the CommonMark block structure only as far as finding that
// paragraph needs: ATX and setext headings, fenced and indented code,
// thematic breaks, block quotes, lists, HTML blocks and link reference
// definitions are passed over; inline markup is kept as written. A full
// Markdown parser would cost every start of the program its
// initialisation (entity and case-folding tables) for this one line.
func FirstParagraph(body []byte) string {
	lines := strings.Split(strings.ReplaceAll(string(body), "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); {
		line := expandTabs(lines[i])
		ind, text := indentOf(line)
		switch {
		case text == "":
			i++
		case ind >= 4:
			i = skipIndentedCode(lines, i)
		case isFence(text) != "":
			i = skipFence(lines, i, isFence(text))
		case isATXHeading(text), isThematicBreak(text):
			i++
		case text[0] == '>':
			i = skipUntilBlank(lines, i)
		case listMarker(text) > 0:
			i = skipList(lines, i)
		case isHTMLStart(text):
			i = skipHTML(lines, i, text)
		default:
			para, next, heading := paragraph(lines, i)
			i = next
			if heading || len(para) == 0 {
				continue
			}
			return strings.Join(para, " ")
		}
	}
	return ""
}

// paragraph collects the lines of the paragraph starting at i, without
// leading link reference definitions. heading reports a setext heading.
func paragraph(lines []string, i int) (para []string, next int, heading bool) {
	refs := true
	for ; i < len(lines); i++ {
		line := expandTabs(lines[i])
		ind, text := indentOf(line)
		if text == "" {
			break
		}
		if len(para) > 0 || !refs {
			if ind < 4 && isSetextUnderline(text) {
				return nil, i + 1, true
			}
			if ind < 4 && interruptsParagraph(text) {
				break
			}
		}
		if refs && ind < 4 && isLinkRefDef(text) {
			continue
		}
		refs = false
		para = append(para, strings.TrimSpace(text))
	}
	return para, i, false
}

func interruptsParagraph(text string) bool {
	if isATXHeading(text) || isThematicBreak(text) || isFence(text) != "" || text[0] == '>' {
		return true
	}
	if n := listMarker(text); n > 0 {
		// An empty item, or an ordered list not starting at 1, cannot
		// interrupt a paragraph.
		rest := strings.TrimSpace(text[n:])
		return rest != "" && (!isDigit(text[0]) || strings.HasPrefix(text, "1.") || strings.HasPrefix(text, "1)"))
	}
	return isHTMLStart(text) && !strings.HasPrefix(text, "</") && htmlBlockKind(text) != 7
}

func expandTabs(s string) string {
	if !strings.Contains(s, "\t") {
		return s
	}
	var b strings.Builder
	col := 0
	for _, r := range s {
		if r == '\t' {
			n := 4 - col%4
			b.WriteString(strings.Repeat(" ", n))
			col += n
			continue
		}
		b.WriteRune(r)
		col++
	}
	return b.String()
}

// indentOf returns the number of leading spaces and the rest, with
// trailing spaces removed ("" for a blank line).
func indentOf(line string) (int, string) {
	t := strings.TrimLeft(line, " ")
	return len(line) - len(t), strings.TrimRight(t, " \r")
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func isATXHeading(text string) bool {
	n := 0
	for n < len(text) && text[n] == '#' {
		n++
	}
	return n >= 1 && n <= 6 && (n == len(text) || text[n] == ' ')
}

func isThematicBreak(text string) bool {
	c := text[0]
	if c != '*' && c != '-' && c != '_' {
		return false
	}
	n := 0
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case c:
			n++
		case ' ':
		default:
			return false
		}
	}
	return n >= 3
}

func isSetextUnderline(text string) bool {
	c := text[0]
	if c != '=' && c != '-' {
		return false
	}
	return strings.Trim(text, string(c)) == ""
}

// isFence returns the opening fence (``` or ~~~, possibly longer) or "".
func isFence(text string) string {
	c := text[0]
	if c != '`' && c != '~' {
		return ""
	}
	n := 0
	for n < len(text) && text[n] == c {
		n++
	}
	if n < 3 || (c == '`' && strings.Contains(text[n:], "`")) {
		return ""
	}
	return text[:n]
}

func skipFence(lines []string, i int, fence string) int {
	for i++; i < len(lines); i++ {
		ind, text := indentOf(expandTabs(lines[i]))
		if ind < 4 && strings.HasPrefix(text, fence) && strings.Trim(text, fence[:1]) == "" {
			return i + 1
		}
	}
	return i
}

func skipIndentedCode(lines []string, i int) int {
	for ; i < len(lines); i++ {
		ind, text := indentOf(expandTabs(lines[i]))
		if text != "" && ind < 4 {
			break
		}
	}
	return i
}

func skipUntilBlank(lines []string, i int) int {
	for ; i < len(lines); i++ {
		if _, text := indentOf(lines[i]); text == "" {
			break
		}
	}
	return i
}

// listMarker returns the width of a list item marker with the space after
// it ("- ", "12. "), or 0.
func listMarker(text string) int {
	switch text[0] {
	case '-', '+', '*':
		if len(text) == 1 || text[1] == ' ' {
			return 1
		}
		return 0
	}
	n := 0
	for n < len(text) && n < 9 && isDigit(text[n]) {
		n++
	}
	if n == 0 || n >= len(text) || (text[n] != '.' && text[n] != ')') {
		return 0
	}
	if n+1 == len(text) || text[n+1] == ' ' {
		return n + 1
	}
	return 0
}

// skipList passes over a list: its items, what is indented under them
// (nested blocks, continuation lines) and the blank lines between them.
func skipList(lines []string, i int) int {
	content := itemIndent(lines[i])
	for i++; i < len(lines); i++ {
		ind, text := indentOf(expandTabs(lines[i]))
		blank := text == ""
		if blank {
			// The list goes on only if the next non-blank line belongs to it.
			for i+1 < len(lines) && strings.TrimSpace(lines[i+1]) == "" {
				i++
			}
			if i+1 == len(lines) {
				return len(lines)
			}
			i++
			ind, text = indentOf(expandTabs(lines[i]))
		}
		switch {
		case ind >= content:
		case listMarker(text) > 0:
			content = itemIndent(lines[i])
		case blank:
			return i
		case isATXHeading(text), isFence(text) != "", isThematicBreak(text), text[0] == '>', isHTMLStart(text):
			return i
		}
	}
	return i
}

// itemIndent is the column where a list item's content starts.
func itemIndent(line string) int {
	ind, text := indentOf(expandTabs(line))
	n := listMarker(text)
	rest := text[n:]
	sp := len(rest) - len(strings.TrimLeft(rest, " "))
	if sp == 0 || sp > 4 || strings.TrimSpace(rest) == "" {
		sp = 1
	}
	return ind + n + sp
}

// isHTMLStart reports a line that opens an HTML block.
func isHTMLStart(text string) bool {
	return htmlBlockKind(text) != 0
}

// htmlBlockTags are the tags that open a CommonMark HTML block of kind 6.
const htmlBlockTags = " address article aside base basefont blockquote body caption center col colgroup dd details " +
	"dialog dir div dl dt fieldset figcaption figure footer form frame frameset h1 h2 h3 h4 h5 h6 head header hr " +
	"html iframe legend li link main menu menuitem nav noframes ol optgroup option p param search section summary " +
	"table tbody td tfoot th thead title tr track ul "

// htmlBlockKind classifies an HTML block start as CommonMark does: 1 raw
// text (script, pre, style, textarea), 2 comment, 3 processing
// instruction, 4 declaration, 5 CDATA, 6 block-level tag, 7 any other
// complete tag alone on its line; 0 for none.
func htmlBlockKind(text string) int {
	if text[0] != '<' {
		return 0
	}
	lower := strings.ToLower(text)
	for _, t := range []string{"<script", "<pre", "<style", "<textarea"} {
		if strings.HasPrefix(lower, t) && (len(lower) == len(t) || strings.ContainsRune(" >", rune(lower[len(t)]))) {
			return 1
		}
	}
	switch {
	case strings.HasPrefix(text, "<!--"):
		return 2
	case strings.HasPrefix(text, "<?"):
		return 3
	case strings.HasPrefix(text, "<![CDATA["):
		return 5
	case len(text) > 2 && text[1] == '!' && 'A' <= (text[2]&^0x20) && (text[2]&^0x20) <= 'Z':
		return 4
	}
	name := strings.TrimPrefix(lower, "<")
	name = strings.TrimPrefix(name, "/")
	end := 0
	for end < len(name) && (('a' <= name[end] && name[end] <= 'z') || isDigit(name[end]) || name[end] == '-') {
		end++
	}
	if end == 0 {
		return 0
	}
	if strings.Contains(htmlBlockTags, " "+name[:end]+" ") {
		rest := name[end:]
		if rest == "" || rest[0] == ' ' || rest[0] == '>' || strings.HasPrefix(rest, "/>") {
			return 6
		}
		return 0
	}
	if strings.HasSuffix(text, ">") && !strings.ContainsAny(name[end:], "<") {
		return 7
	}
	return 0
}

// skipHTML passes over an HTML block: kinds 1 to 5 end at their closing
// marker, 6 and 7 at a blank line.
func skipHTML(lines []string, i int, text string) int {
	closer := map[int]string{2: "-->", 3: "?>", 4: ">", 5: "]]>"}
	kind := htmlBlockKind(text)
	if kind == 1 {
		for ; i < len(lines); i++ {
			l := strings.ToLower(lines[i])
			if strings.Contains(l, "</script>") || strings.Contains(l, "</pre>") || strings.Contains(l, "</style>") || strings.Contains(l, "</textarea>") {
				return i + 1
			}
		}
		return i
	}
	if c, ok := closer[kind]; ok {
		for ; i < len(lines); i++ {
			if strings.Contains(lines[i], c) {
				return i + 1
			}
		}
		return i
	}
	return skipUntilBlank(lines, i)
}

// isLinkRefDef reports a line that is a whole link reference definition
// ([label]: destination), which does not count as paragraph text.
func isLinkRefDef(text string) bool {
	if text[0] != '[' {
		return false
	}
	end := strings.Index(text, "]:")
	if end < 2 || strings.ContainsAny(text[1:end], "[]") {
		return false
	}
	return len(bytes.TrimSpace([]byte(text[end+2:]))) > 0
}
