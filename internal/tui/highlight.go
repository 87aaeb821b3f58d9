package tui

import (
	"strings"

	"github.com/reasonix/reasonix/internal/lazy"
)

// lang is what the highlighter knows of a language: enough to colour
// keywords, types and constants, strings, comments and numbers one line at
// a time. It is deliberately small (see docs/ARCHITECTURE.md, "highlighting"):
// a code block in an answer is read, not compiled.
type lang struct {
	keywords map[string]bool
	types    map[string]bool // builtin types and constants
	line     []string        // line comment openers
	block    [2]string       // block comment delimiters
	quotes   string          // string quote characters
}

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

var cLike = [2]string{"/*", "*/"}

// langs is built on first use, not at start-up: most runs never show code.
var langs = lazy.Value[map[string]*lang]{Build: func() map[string]*lang {
	m := map[string]*lang{
		"go": {keywords: words("break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var"),
			types: words("bool byte complex64 complex128 error float32 float64 int int8 int16 int32 int64 rune string uint uint8 uint16 uint32 uint64 uintptr any comparable true false nil iota append cap close copy delete len make new panic print println recover min max clear"),
			line:  []string{"//"}, block: cLike, quotes: "\"'`"},
		"python": {keywords: words("and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case"),
			types: words("True False None int str float bool list dict set tuple bytes object type self print len range open super isinstance"),
			line:  []string{"#"}, quotes: "\"'"},
		"javascript": {keywords: words("async await break case catch class const continue debugger default delete do else export extends finally for from function if import in instanceof let new of return static super switch this throw try typeof var void while with yield interface type enum implements readonly as"),
			types: words("true false null undefined NaN Infinity string number boolean any unknown never void object Array Promise Map Set console"),
			line:  []string{"//"}, block: cLike, quotes: "\"'`"},
		"rust": {keywords: words("as async await break const continue crate dyn else enum extern fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait type unsafe use where while"),
			types: words("true false i8 i16 i32 i64 i128 isize u8 u16 u32 u64 u128 usize f32 f64 bool char str String Vec Option Some None Result Ok Err Box"),
			line:  []string{"//"}, block: cLike, quotes: "\""},
		"c": {keywords: words("auto break case catch class const constexpr continue default delete do else enum extern final for friend goto if inline namespace new operator override private protected public register return sizeof static struct switch template this throw try typedef typename union using virtual volatile while import package extends implements interface throws synchronized abstract"),
			types: words("bool char double float int long short signed unsigned void size_t true false NULL nullptr null String boolean byte var auto"),
			line:  []string{"//"}, block: cLike, quotes: "\"'"},
		"sh": {keywords: words("if then else elif fi for while until do done case esac in function return local export readonly set unset shift exit break continue source alias"),
			types: words("echo printf cd test read true false"),
			line:  []string{"#"}, quotes: "\"'"},
		"sql": {keywords: words("select from where insert into values update set delete create table drop alter add index join left right inner outer on group by order having limit as and or not null is in like primary key foreign references distinct union all case when then else end SELECT FROM WHERE INSERT INTO VALUES UPDATE SET DELETE CREATE TABLE DROP ALTER ADD INDEX JOIN LEFT RIGHT INNER OUTER ON GROUP BY ORDER HAVING LIMIT AS AND OR NOT NULL IS IN LIKE PRIMARY KEY FOREIGN REFERENCES DISTINCT UNION ALL CASE WHEN THEN ELSE END"),
			types: words("int integer text varchar boolean date timestamp INT INTEGER TEXT VARCHAR BOOLEAN DATE TIMESTAMP"),
			line:  []string{"--"}, block: cLike, quotes: "'\""},
		"data": {types: words("true false null yes no on off"), line: []string{"#"}, quotes: "\"'"},
	}
	for alias, name := range map[string]string{
		"golang": "go", "py": "python", "python3": "python", "js": "javascript", "jsx": "javascript", "ts": "javascript",
		"tsx": "javascript", "typescript": "javascript", "json": "data", "yaml": "data", "yml": "data", "toml": "data",
		"ini": "data", "rs": "rust", "cpp": "c", "c++": "c", "cc": "c", "h": "c", "hpp": "c", "java": "c", "kotlin": "c",
		"cs": "c", "csharp": "c", "swift": "c", "bash": "sh", "shell": "sh", "zsh": "sh", "console": "sh", "dockerfile": "sh",
		"make": "sh", "makefile": "sh",
	} {
		m[alias] = m[name]
	}
	return m
}}

func findLang(name string) *lang {
	return langs.Get()[name]
}

// highlight renders one line of code in language name as markup. Unknown
// languages (and "diff") get their own treatment: diff lines are coloured
// by their first character, anything else is shown as plain text.
func highlight(name, line string, th *theme) string {
	if name == "diff" || name == "patch" {
		switch {
		case strings.HasPrefix(line, "+"):
			return th.tag(th.added, escape(line))
		case strings.HasPrefix(line, "-"):
			return th.tag(th.removed, escape(line))
		case strings.HasPrefix(line, "@@"):
			return th.tag(th.accent, escape(line))
		}
		return escape(line)
	}
	l := findLang(name)
	if l == nil {
		return escape(line)
	}
	var b strings.Builder
	emit := func(color, s string) {
		if color == "" {
			b.WriteString(escape(s))
		} else {
			b.WriteString(th.tag(color, escape(s)))
		}
	}
	i := 0
	for i < len(line) {
		c := line[i]
		rest := line[i:]
		if l.block[0] != "" && strings.HasPrefix(rest, l.block[0]) {
			end := strings.Index(rest[len(l.block[0]):], l.block[1])
			n := len(rest)
			if end >= 0 {
				n = len(l.block[0]) + end + len(l.block[1])
			}
			emit(th.comment, rest[:n])
			i += n
			continue
		}
		comment := false
		for _, lc := range l.line {
			if strings.HasPrefix(rest, lc) && (lc != "#" || i == 0 || line[i-1] == ' ' || line[i-1] == '\t') {
				comment = true
			}
		}
		if comment {
			emit(th.comment, rest)
			break
		}
		switch {
		case strings.IndexByte(l.quotes, c) >= 0:
			j := i + 1
			for j < len(line) && line[j] != c {
				if line[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			j = min(j+1, len(line))
			emit(th.str, line[i:j])
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(line) && (isIdent(line[j]) || line[j] == '.') {
				j++
			}
			emit(th.number, line[i:j])
			i = j
		case isIdent(c):
			j := i
			for j < len(line) && isIdent(line[j]) {
				j++
			}
			w := line[i:j]
			switch {
			case l.keywords[w]:
				emit(th.keyword, w)
			case l.types[w]:
				emit(th.typ, w)
			case j < len(line) && line[j] == '(':
				emit(th.fn, w)
			default:
				emit("", w)
			}
			i = j
		case c == '[':
			// Followed at once by a tag, a bracket can never start
			// one with the text after it, whatever token that is.
			b.WriteString("[[-]")
			i++
		default:
			j := i + 1
			for j < len(line) && !isIdent(line[j]) && strings.IndexByte(l.quotes, line[j]) < 0 &&
				!(line[j] >= '0' && line[j] <= '9') && strings.IndexByte("/#-[", line[j]) < 0 {
				j++
			}
			emit("", line[i:j])
			i = j
		}
	}
	return b.String()
}

func isIdent(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}
