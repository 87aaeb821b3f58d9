package skills

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/reasonix/reasonix/internal/lazy"
	"github.com/reasonix/reasonix/internal/text"
)

// Frontmatter is the parsed metadata block of a Markdown file. Scalars are
// kept as the text that was written (so "12" for a number); lists of
// scalars are []any of strings; deeper structure is []any and
// map[string]any. Use the accessors rather than type-switching by hand.
type Frontmatter map[string]any

// ErrUnterminated reports a frontmatter block that opens with "---" but
// never closes; the file is almost certainly damaged.
var ErrUnterminated = errors.New("line 1: frontmatter opened with --- but never closed")

// ParseFrontmatter splits data into its frontmatter and body. A file without
// a leading "---" line (blank lines before it are allowed) has no
// frontmatter: the result is an empty map and the whole file as body. The
// block is parsed as YAML first; agent files written for other tools are
// often not valid YAML (unquoted "user:" lines inside a description,
// <example> blocks), so on a YAML error a line-based "key: value" parser
// takes over and folds anything it cannot place into the previous value.
// An error means the block is unusable.
func ParseFrontmatter(data []byte) (Frontmatter, []byte, error) {
	fm, body, _, err := parseFrontmatter(data, false)
	return fm, body, err
}

// Problem is a line of a frontmatter block that is not valid YAML and
// that the lenient parser could not read as what it looks like.
type Problem struct {
	// Line is the line in the file (1 is the first line of the file).
	Line int
	// Key is the key the line looks like it sets ("Model" for "Model:
	// opus"), "" for a line that is no "key: value" at all.
	Key string
	// In is the key whose value the line was read as part of (Key itself
	// for a key given again, whose value replaced the earlier one); ""
	// when the line was left out.
	In   string
	Text string
}

func (p Problem) String() string {
	t := text.Clip(strings.TrimSpace(p.Text), 60)
	switch {
	case p.Key == "":
		return fmt.Sprintf("line %d: %q is not \"key: value\" and was left out (the frontmatter is not valid YAML)", p.Line, t)
	case p.In == "":
		return fmt.Sprintf("line %d: %q was left out: %s is no key here (keys are lowercase; the frontmatter is not valid YAML)", p.Line, t, p.Key)
	case p.Key == p.In:
		return fmt.Sprintf("line %d: %s is given again; this value replaces the earlier one (the frontmatter is not valid YAML)", p.Line, p.Key)
	default:
		return fmt.Sprintf("line %d: %q does not set the key %s; it was read as part of %s (the frontmatter is not valid YAML)", p.Line, t, p.Key, p.In)
	}
}

// ParseFrontmatterChecked is ParseFrontmatter for files whose every key
// matters (custom commands): when the block is not valid YAML, a line
// before the first key that is no "key: value" is left out instead of
// making the block unusable, and every line the lenient parser could not
// read as a key (one that looks like "key: value" but was folded into the
// value before it, or was left out) comes back as a [Problem], so the
// caller can name its file and line. The body never includes the block.
func ParseFrontmatterChecked(data []byte) (Frontmatter, []byte, []Problem, error) {
	return parseFrontmatter(data, true)
}

func parseFrontmatter(data []byte, checked bool) (Frontmatter, []byte, []Problem, error) {
	block, body, first, found, err := splitFrontmatter(data)
	if err != nil {
		return nil, nil, nil, err
	}
	if !found {
		return Frontmatter{}, body, nil, nil
	}
	if fm, ok := parseYAML(block); ok {
		return fm, body, nil, nil
	}
	fm, problems, err := parseLenient(block, first, true, checked)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("parse frontmatter: %w", err)
	}
	return fm, body, problems, nil
}

// splitFrontmatter separates the block between the opening and closing
// delimiter lines from the rest; first is the file line the block starts
// on. found is false when there is no opening delimiter (only blank lines
// may come before it).
func splitFrontmatter(data []byte) (block, body []byte, first int, found bool, err error) {
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))
	rest := data
	var line []byte
	open := 0
	for {
		open++
		line, rest, _ = cutLine(rest)
		if len(bytes.TrimSpace(line)) > 0 || len(rest) == 0 {
			break
		}
	}
	if !isDelimiter(line, false) {
		return nil, data, 0, false, nil
	}
	start := len(data) - len(rest)
	pos := start
	for pos < len(data) {
		line, next, _ := cutLine(data[pos:])
		if isDelimiter(line, true) {
			return data[start:pos], next, open + 1, true, nil
		}
		pos = len(data) - len(next)
	}
	if open > 1 {
		return nil, nil, 0, true, fmt.Errorf("line %d: frontmatter opened with --- but never closed", open)
	}
	return nil, nil, 0, true, ErrUnterminated
}

// cutLine returns the first line of b without its line ending, the rest
// after it, and whether a newline was found.
func cutLine(b []byte) (line, rest []byte, ok bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return bytes.TrimSuffix(b, []byte("\r")), b[len(b):], false
	}
	return bytes.TrimSuffix(b[:i], []byte("\r")), b[i+1:], true
}

func isDelimiter(line []byte, closing bool) bool {
	l := string(bytes.TrimRight(line, " \t"))
	return l == "---" || (closing && l == "...")
}

func parseYAML(block []byte) (Frontmatter, bool) {
	if len(bytes.TrimSpace(block)) == 0 {
		return Frontmatter{}, true
	}
	f, err := parser.ParseBytes(block, 0)
	if err != nil || len(f.Docs) != 1 || f.Docs[0] == nil {
		return nil, false
	}
	c := yamlConverter{anchors: map[string]ast.Node{}}
	m, ok := c.value(f.Docs[0].Body, 0).(map[string]any)
	if !ok || c.bad {
		return nil, false
	}
	return Frontmatter(m), true
}

// yamlConverter turns a parsed YAML document into plain values. Scalars
// are kept as the text that was written: YAML 1.1 would turn a skill
// named "off" or a model named "no" into a bool, and a YAML decoder a
// version "1.10" into 1.1 or "012" into 10. Lists are []any and mappings
// map[string]any; a repeated key keeps its last value.
type yamlConverter struct {
	anchors map[string]ast.Node
	bad     bool // something that is not frontmatter (a merge key, deep nesting)
}

func (c *yamlConverter) value(n ast.Node, depth int) any {
	if depth > 64 {
		c.bad = true
		return nil
	}
	switch x := n.(type) {
	case nil, *ast.NullNode, *ast.CommentGroupNode, *ast.CommentNode:
		return nil
	case *ast.StringNode:
		return x.Value
	case *ast.LiteralNode:
		if x.Value == nil {
			return ""
		}
		return x.Value.Value
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.InfinityNode, *ast.NanNode:
		return n.GetToken().Value
	case *ast.AnchorNode:
		if x.Name != nil {
			c.anchors[x.Name.GetToken().Value] = x.Value
		}
		return c.value(x.Value, depth+1)
	case *ast.AliasNode:
		if x.Value == nil {
			return nil
		}
		target, ok := c.anchors[x.Value.GetToken().Value]
		if !ok {
			c.bad = true
			return nil
		}
		return c.value(target, depth+1)
	case *ast.TagNode:
		return c.value(x.Value, depth+1)
	case *ast.DocumentNode:
		return c.value(x.Body, depth+1)
	case *ast.MappingNode:
		m := make(map[string]any, len(x.Values))
		for _, mv := range x.Values {
			c.pair(m, mv, depth)
		}
		return m
	case *ast.MappingValueNode:
		m := map[string]any{}
		c.pair(m, x, depth)
		return m
	case *ast.SequenceNode:
		out := make([]any, 0, len(x.Values))
		for _, e := range x.Values {
			out = append(out, c.value(e, depth+1))
		}
		return out
	default:
		c.bad = true
		return nil
	}
}

func (c *yamlConverter) pair(m map[string]any, mv *ast.MappingValueNode, depth int) {
	if mv.Key == nil || mv.Key.IsMergeKey() {
		c.bad = true
		return
	}
	var k string
	switch x := ast.Node(mv.Key).(type) {
	case *ast.StringNode:
		k = x.Value
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.NullNode, *ast.InfinityNode, *ast.NanNode:
		k = x.GetToken().Value // "null: x" is the key "null"
	default:
		c.bad = true
		return
	}
	m[k] = c.value(mv.Value, depth+1)
}

// keyLine matches a top-level "key:" line. Keys start with a lowercase
// letter so prose such as "Examples:" or "Context:" stays in the value it
// belongs to.
var keyLine = lazy.Value[*regexp.Regexp]{Build: func() *regexp.Regexp {
	return regexp.MustCompile(`^([a-z][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]+(.*)|[ \t]*)$`)
}}

// conversational words appear at the start of lines inside agent
// descriptions ("user: ...", "assistant: ...") and are never real keys.
func conversational(word string) bool {
	switch word {
	case "user", "assistant", "human", "ai", "context", "example", "examples", "commentary", "note":
		return true
	}
	return false
}

// blockTag finds the tags that wrap multi-line examples; while one is open
// every line belongs to the current value.
var blockTag = lazy.Value[*regexp.Regexp]{Build: func() *regexp.Regexp { return regexp.MustCompile(`<(/?)(example|examples|commentary)\b[^>]*>`) }}

type pendingValue struct {
	key   string
	first string
	rest  []string
}

// looksLikeKey matches a line that reads as "key: value" to a person,
// whatever its indentation or case, for [Problem]s.
var looksLikeKey = lazy.Value[*regexp.Regexp]{Build: func() *regexp.Regexp { return regexp.MustCompile(`^[ \t]*([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?:[ \t]|$)`) }}

// parseLenient reads "key: value" lines; first is the file line of the
// block's first line. With trackTags, lines inside an open <example>
// block never start a key; if a block is left open the tags are evidently
// not structure, and the parse is redone without them rather than
// swallowing every later key. With checked, a line before the first key
// that is no "key: value" is left out instead of an error, and the lines
// not read as what they look like are returned as problems.
func parseLenient(block []byte, first int, trackTags, checked bool) (Frontmatter, []Problem, error) {
	fm := Frontmatter{}
	var problems []Problem
	var cur *pendingValue
	flush := func() {
		if cur != nil {
			fm[cur.key] = finishValue(cur.first, cur.rest)
		}
	}
	depth := 0
	for n, raw := range strings.Split(string(block), "\n") {
		line := strings.TrimRight(raw, "\r")
		if depth == 0 {
			if m := keyLine.Get().FindStringSubmatch(line); m != nil && !conversational(m[1]) {
				_, seen := fm[m[1]]
				again := seen || (cur != nil && cur.key == m[1])
				if checked && again {
					// As in YAML read by the converter, the last value
					// wins; the one it replaces is named.
					problems = append(problems, Problem{Line: first + n, Key: m[1], In: m[1], Text: line})
					flush()
					delete(fm, m[1])
					cur = &pendingValue{key: m[1], first: strings.TrimSpace(m[2])}
					continue
				}
				if !again {
					flush()
					cur = &pendingValue{key: m[1], first: strings.TrimSpace(m[2])}
					if trackTags {
						depth = tagDepth(depth, m[2])
					}
					continue
				}
			}
			if checked && line != "" && line[0] != ' ' && line[0] != '\t' {
				if m := looksLikeKey.Get().FindStringSubmatch(line); m != nil {
					// "Model: opus" at the start of a line: no key this
					// parser takes, and no text of the value above
					// either (a continuation would be indented).
					problems = append(problems, Problem{Line: first + n, Key: m[1], Text: line})
					continue
				}
			}
		}
		if cur == nil {
			t := strings.TrimSpace(line)
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			if !checked {
				return nil, nil, fmt.Errorf("line %d: expected \"key: value\", got %q", first+n, text.Clip(t, 40))
			}
			problems = append(problems, Problem{Line: first + n, Text: t})
			continue
		}
		cur.rest = append(cur.rest, line)
		if checked && depth == 0 && !blockIndicator.Get().MatchString(cur.first) {
			// In a | or > block, "key: value" lines are the text.
			if m := looksLikeKey.Get().FindStringSubmatch(line); m != nil {
				problems = append(problems, Problem{Line: first + n, Key: m[1], In: cur.key, Text: line})
			}
		}
		if trackTags {
			depth = tagDepth(depth, line)
		}
	}
	if trackTags && depth > 0 {
		return parseLenient(block, first, false, checked)
	}
	flush()
	return fm, problems, nil
}

func tagDepth(depth int, line string) int {
	for _, m := range blockTag.Get().FindAllStringSubmatch(line, -1) {
		if m[1] == "/" {
			depth--
		} else {
			depth++
		}
	}
	return max(depth, 0)
}

// blockIndicator matches the header of a block scalar (| or >). The
// lenient parser's regexps compile on first use: it runs only for
// frontmatter that is not YAML.
var blockIndicator = lazy.Value[*regexp.Regexp]{Build: func() *regexp.Regexp { return regexp.MustCompile(`^[|>][-+0-9]*$`) }}

// finishValue turns the raw lines collected for one key into a value: a
// list for "- item" lines or "[a, b]", a block scalar for | and >, and
// otherwise the text of all lines.
func finishValue(first string, rest []string) any {
	for len(rest) > 0 && strings.TrimSpace(rest[len(rest)-1]) == "" {
		rest = rest[:len(rest)-1]
	}
	if first == "" && len(rest) > 0 && allItems(rest) {
		var out []any
		for _, l := range rest {
			if t := strings.TrimSpace(l); t != "" {
				out = append(out, unquote(strings.TrimSpace(strings.TrimPrefix(t, "-"))))
			}
		}
		return out
	}
	if len(rest) == 0 && strings.HasPrefix(first, "[") && strings.HasSuffix(first, "]") {
		var out []any
		for _, p := range strings.Split(first[1:len(first)-1], ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, unquote(p))
			}
		}
		return out
	}
	if blockIndicator.Get().MatchString(first) {
		lines := dedent(rest)
		if first[0] == '>' {
			return foldLines(lines)
		}
		return strings.Join(lines, "\n")
	}
	if len(rest) == 0 {
		return unquote(first)
	}
	parts := []string{first}
	for _, l := range rest {
		parts = append(parts, strings.TrimSpace(l))
	}
	return strings.TrimSpace(strings.Join(parts, "\n"))
}

func allItems(lines []string) bool {
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if t != "" && !strings.HasPrefix(t, "-") {
			return false
		}
	}
	return true
}

func dedent(lines []string) []string {
	indent := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		n := len(l) - len(strings.TrimLeft(l, " \t"))
		if indent < 0 || n < indent {
			indent = n
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) >= indent && indent > 0 {
			l = l[indent:]
		}
		out[i] = strings.TrimRight(l, " \t")
	}
	return out
}

func foldLines(lines []string) string {
	var b strings.Builder
	prevBlank := true
	for _, l := range lines {
		if l == "" {
			b.WriteString("\n")
			prevBlank = true
			continue
		}
		if !prevBlank {
			b.WriteByte(' ')
		}
		b.WriteString(l)
		prevBlank = false
	}
	return strings.TrimSpace(b.String())
}

func unquote(s string) string {
	if len(s) >= 2 {
		switch {
		case s[0] == '"' && s[len(s)-1] == '"':
			if u, err := strconv.Unquote(s); err == nil {
				return u
			}
			return s[1 : len(s)-1]
		case s[0] == '\'' && s[len(s)-1] == '\'':
			return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
		}
	}
	return s
}

// Lookup returns the value of the first of keys that is present, so callers
// can accept spelling variants (max_steps, maxSteps, max-steps).
func (f Frontmatter) Lookup(keys ...string) (any, bool) {
	for _, k := range keys {
		if v, ok := f[k]; ok {
			return v, true
		}
	}
	return nil, false
}

// String returns the first present key as text; scalars of other types
// are formatted, absent or null values give "".
func (f Frontmatter) String(keys ...string) string {
	v, _ := f.Lookup(keys...)
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return strings.TrimSpace(x)
	case []any, map[string]any:
		return ""
	default:
		return fmt.Sprint(x)
	}
}

// Int returns the first present key as an integer. ok is false when the
// key is absent; err is set when it is present but not a whole number.
func (f Frontmatter) Int(keys ...string) (n int, ok bool, err error) {
	v, present := f.Lookup(keys...)
	if !present || v == nil {
		return 0, false, nil
	}
	switch x := v.(type) {
	case int:
		return x, true, nil
	case int64:
		return int(x), true, nil
	case float64:
		if x == float64(int(x)) {
			return int(x), true, nil
		}
	case string:
		if i, err := strconv.Atoi(strings.TrimSpace(x)); err == nil {
			return i, true, nil
		}
	}
	return 0, true, fmt.Errorf("%v is not a whole number", v)
}

// List returns the first present key as a list of strings. A YAML list is
// taken item by item; a string is split on commas when it has any, else on
// whitespace, never inside parentheses, so "Bash(git status:*) Read" keeps
// its permission specifier whole. present is false when the key is absent.
func (f Frontmatter) List(keys ...string) (items []string, present bool) {
	v, ok := f.Lookup(keys...)
	if !ok || v == nil {
		return nil, ok
	}
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			if e == nil {
				continue
			}
			if s := strings.TrimSpace(fmt.Sprint(e)); s != "" {
				items = append(items, s)
			}
		}
	case string:
		items = SplitList(x)
	default:
		items = SplitList(fmt.Sprint(x))
	}
	return items, true
}

// SplitList splits a tool list written as one string: on top-level commas
// when there are any, otherwise on top-level whitespace. Parenthesised
// specifiers are kept intact.
func SplitList(s string) []string {
	sepComma := false
	depth := 0
	for _, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth = max(depth-1, 0)
		case ',':
			if depth == 0 {
				sepComma = true
			}
		}
	}
	var out []string
	var b strings.Builder
	emit := func() {
		if t := strings.TrimSpace(b.String()); t != "" {
			out = append(out, unquote(t))
		}
		b.Reset()
	}
	depth = 0
	for _, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')':
			depth = max(depth-1, 0)
		case depth == 0 && sepComma && r == ',':
			emit()
			continue
		case depth == 0 && !sepComma && (r == ' ' || r == '\t' || r == '\n' || r == '\r'):
			emit()
			continue
		}
		b.WriteRune(r)
	}
	emit()
	return out
}
