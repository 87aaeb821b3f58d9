package config

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// The TOML library does not expose where a key was defined, so this file
// carries a small, forgiving scanner that maps keys to lines and byte
// offsets. It runs only on text the library has already accepted, which is
// why it can skip most error handling; the worst outcome of a misread is a
// less precise line number (or a refused AppendRule edit, which re-parses).

// keyLoc is where a key or table header sits in a file.
type keyLoc struct {
	line int // 1-based
	off  int // byte offset of the key or header
	// value is the byte offset of the key's value, or -1 for a table
	// header.
	value int
}

// keyIndex maps a key path to its location. Paths join key parts with
// "."; the n-th (0-based) entry of an array of tables is "name[n]", so the
// second [[providers]] entry's model is "providers[1].model".
type keyIndex map[string]keyLoc

// lookup returns the line of path or, failing that, of its nearest
// enclosing key (a value inside an inline table or array reports the line
// of the key that holds it). It returns 0 when nothing matches.
func (ix keyIndex) lookup(path string) int {
	for path != "" {
		if l, ok := ix[path]; ok {
			return l.line
		}
		i := strings.LastIndexAny(path, ".[")
		if i < 0 {
			return 0
		}
		path = path[:i]
	}
	return 0
}

// indexKeys scans TOML text and records every key and table header.
func indexKeys(src string) keyIndex {
	ix := keyIndex{}
	aot := map[string]int{} // array-of-tables path -> entries seen
	prefix := ""
	i := 0
	for i < len(src) {
		i = skipBlank(src, i)
		if i >= len(src) {
			break
		}
		switch c := src[i]; {
		case c == '\n' || c == '\r':
			i++
		case c == '#':
			i = lineEnd(src, i)
		case c == '[':
			double := strings.HasPrefix(src[i:], "[[")
			start := i + 1
			if double {
				start++
			}
			parts, _ := parseKey(src, start)
			path := resolveTable(parts, aot)
			if double {
				n := aot[path]
				aot[path] = n + 1
				path += "[" + strconv.Itoa(n) + "]"
			}
			prefix = path
			ix[prefix] = keyLoc{line: lineAt(src, i), off: i, value: -1}
			i = lineEnd(src, i)
		default:
			parts, end := parseKey(src, i)
			if len(parts) == 0 || end >= len(src) || src[end] != '=' {
				i = lineEnd(src, i)
				continue
			}
			v := skipBlank(src, end+1)
			full := joinKey(prefix, strings.Join(parts, "."))
			if _, dup := ix[full]; !dup {
				ix[full] = keyLoc{line: lineAt(src, i), off: i, value: v}
			}
			i = lineEnd(src, valueEnd(src, v))
		}
	}
	return ix
}

// resolveTable turns header parts into an index path, pointing each
// enclosing array of tables at its latest entry.
func resolveTable(parts []string, aot map[string]int) string {
	path := ""
	for j, p := range parts {
		path = joinKey(path, p)
		if j < len(parts)-1 {
			if n, ok := aot[path]; ok && n > 0 {
				path += "[" + strconv.Itoa(n-1) + "]"
			}
		}
	}
	return path
}

func joinKey(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return prefix + "." + key
}

// lineAt returns the 1-based line number of byte offset off.
func lineAt(src string, off int) int {
	return strings.Count(src[:off], "\n") + 1
}

func skipBlank(src string, i int) int {
	for i < len(src) && (src[i] == ' ' || src[i] == '\t') {
		i++
	}
	return i
}

// lineEnd returns the offset just past the newline ending the line that
// holds i.
func lineEnd(src string, i int) int {
	if i >= len(src) {
		return len(src)
	}
	n := strings.IndexByte(src[i:], '\n')
	if n < 0 {
		return len(src)
	}
	return i + n + 1
}

// parseKey reads a possibly dotted, possibly quoted key starting at i and
// returns its unquoted parts and the offset of the byte that ended it
// ('=', ']' or a newline).
func parseKey(src string, i int) ([]string, int) {
	var parts []string
	for {
		i = skipBlank(src, i)
		if i >= len(src) {
			return parts, i
		}
		switch src[i] {
		case '"':
			end := stringEnd(src, i)
			s, err := strconv.Unquote(src[i:end])
			if err != nil {
				s = strings.Trim(src[i:end], `"`)
			}
			parts = append(parts, s)
			i = end
		case '\'':
			end := stringEnd(src, i)
			parts = append(parts, strings.Trim(src[i:end], "'"))
			i = end
		case '.':
			i++
			continue
		case '=', ']', '\n', '\r', '#':
			return parts, i
		default:
			start := i
			for i < len(src) && isBareKeyByte(src[i]) {
				i++
			}
			if i == start {
				return parts, i
			}
			parts = append(parts, src[start:i])
		}
	}
}

func isBareKeyByte(c byte) bool {
	return c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// stringEnd returns the offset just past the string literal starting at i
// (any of the four TOML string forms).
func stringEnd(src string, i int) int {
	q := src[i]
	if strings.HasPrefix(src[i:], strings.Repeat(string(q), 3)) {
		delim := strings.Repeat(string(q), 3)
		j := i + 3
		for j < len(src) {
			if q == '"' && src[j] == '\\' {
				j += 2
				continue
			}
			if strings.HasPrefix(src[j:], delim) {
				j += 3
				// A closing delimiter may be preceded by up to two quotes
				// that belong to the content.
				for k := 0; k < 2 && j < len(src) && src[j] == q; k++ {
					j++
				}
				return j
			}
			j++
		}
		return len(src)
	}
	j := i + 1
	for j < len(src) && src[j] != '\n' {
		if q == '"' && src[j] == '\\' {
			j += 2
			continue
		}
		if src[j] == q {
			return j + 1
		}
		j++
	}
	return j
}

// valueEnd returns the offset just past the value starting at i: a string,
// an array or inline table (possibly spanning lines), or a bare scalar.
func valueEnd(src string, i int) int {
	if i >= len(src) {
		return i
	}
	switch src[i] {
	case '"', '\'':
		return stringEnd(src, i)
	case '[', '{':
		end, _ := containerEnd(src, i)
		return end
	}
	j := i
	for j < len(src) && !strings.ContainsRune("\n\r#,]}=", rune(src[j])) {
		j++
	}
	return j
}

// containerEnd scans the array or inline table opening at i. It returns the
// offset just past its closing bracket and the offset of the last
// significant byte inside it (the opening bracket itself when empty), which
// is where AppendRule inserts.
func containerEnd(src string, i int) (end, last int) {
	closer := byte(']')
	if src[i] == '{' {
		closer = '}'
	}
	last = i
	j := i + 1
	for j < len(src) {
		switch c := src[j]; {
		case c == closer:
			return j + 1, last
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			j++
		case c == '#':
			j = lineEnd(src, j)
		case c == ',' || c == '=':
			last = j
			j++
		default:
			e := valueEnd(src, j)
			if e <= j {
				e = j + 1
			}
			// Bare scalars stop before trailing blanks only at delimiters,
			// so trim them to find the true last byte.
			k := e
			for k > j && (src[k-1] == ' ' || src[k-1] == '\t') {
				k--
			}
			last = k - 1
			j = e
		}
	}
	return len(src), last
}

// quote renders s as a TOML basic string. strconv.Quote is close but emits
// \x and \a escapes that TOML does not accept.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		case utf8.RuneError:
			b.WriteString(`\uFFFD`)
		default:
			if r < 0x20 || r == 0x7f {
				b.WriteString(`\u00`)
				b.WriteString(strconv.FormatInt(int64(r)>>4, 16))
				b.WriteString(strconv.FormatInt(int64(r)&0xf, 16))
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// quoteKey renders a key bare when TOML allows it, quoted otherwise.
func quoteKey(k string) string {
	if k == "" {
		return `""`
	}
	for i := 0; i < len(k); i++ {
		if !isBareKeyByte(k[i]) {
			return quote(k)
		}
	}
	return k
}
