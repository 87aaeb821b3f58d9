package permission

import (
	"regexp"
	"strings"

	"github.com/reasonix/reasonix/internal/lazy"
)

// sedCommand judges sed's options and script: -i edits the named files in
// place, the w and W commands and the s///w flag write files, e runs a
// command and s///e runs the text being edited. --sandbox turns all but -i
// off. A script from a file (-f) cannot be seen and is treated as running
// or writing anything.
func (a *shellAnalyzer) sedCommand(words []string, depth int) {
	args := words[1:]
	var scripts, files []string
	inPlace, sandbox, scriptGiven := false, false, false
	for i := 0; i < len(args); i++ {
		w := args[i]
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case w == "--":
			files = append(files, args[i+1:]...)
			i = len(args)
		case w == dynWord:
			a.noPrefix("sed with arguments computed when the line runs")
		case strings.HasPrefix(w, "--"):
			name, val, hasVal := strings.Cut(w, "=")
			switch {
			case longOpt(name, "--in-place", "--i"):
				inPlace = true
			case longOpt(name, "--sandbox", "--sa"):
				sandbox = true
			case longOpt(name, "--expression", "--e"):
				if !hasVal {
					val = next()
				}
				scripts, scriptGiven = append(scripts, val), true
			case longOpt(name, "--file", "--f"):
				if !hasVal {
					next()
				}
				scriptGiven = true
				a.noPrefix("sed -f runs a script from a file, which may run commands or write files")
			case longOpt(name, "--line-length", "--l"):
				if !hasVal {
					next()
				}
			}
		case len(w) > 1 && w[0] == '-':
		cluster:
			for j := 1; j < len(w); j++ {
				switch w[j] {
				case 'i':
					inPlace = true
					break cluster // the rest is the backup suffix
				case 'e':
					v := w[j+1:]
					if v == "" {
						v = next()
					}
					scripts, scriptGiven = append(scripts, v), true
					break cluster
				case 'f':
					if w[j+1:] == "" {
						next()
					}
					scriptGiven = true
					a.noPrefix("sed -f runs a script from a file, which may run commands or write files")
					break cluster
				case 'l':
					if w[j+1:] == "" {
						next()
					}
					break cluster
				}
			}
		default:
			if !scriptGiven {
				scripts, scriptGiven = append(scripts, w), true
			} else {
				files = append(files, w)
			}
		}
	}
	if !sandbox {
		for _, s := range scripts {
			a.sedScript(s, depth)
		}
	}
	if inPlace {
		if len(files) == 0 {
			return
		}
		for _, f := range files {
			a.inPlace("sed -i edits a file in place", f)
		}
	}
}

// inPlace judges a file a command edits in place: a control file or one
// in .git needs a person; any other file takes the line out of reach of
// prefix rules.
func (a *shellAnalyzer) inPlace(what, target string) {
	switch {
	case target == dynWord:
		// It may be a control file: the guard reverts that; no prefix
		// rule covers the line either way.
		a.noPrefix(what + ", named only when the line runs")
		return
	case looksLikePattern(target):
		a.noPrefix(what + " (" + target + ")")
		return
	}
	if name, ok := a.controlTarget(target); ok {
		a.res.danger(controlDanger(what+":", name))
		return
	}
	if inGitDir(target) {
		a.res.danger(what + ": " + target + " is where git keeps config and hooks it runs")
		return
	}
	a.noPrefix(what + " (" + target + ")")
}

// sedScript walks one sed script command by command.
func (a *shellAnalyzer) sedScript(s string, depth int) {
	if s == dynWord {
		a.noPrefix("sed with a script computed when the line runs")
		return
	}
	p := &sedParser{s: s}
	for {
		cmd, arg, ok := p.next()
		if !ok {
			if p.err {
				a.noPrefix("sed script that could not be checked for commands that run programs or write files")
			}
			return
		}
		switch cmd {
		case 'e':
			if strings.TrimSpace(arg) == "" {
				a.res.danger("sed e runs the text it edits as a shell command")
			} else {
				a.nested(arg, depth)
			}
		case 'E': // s///e
			a.res.danger("sed s///e runs the text it edits as a shell command")
		case 'w', 'W':
			a.writeTarget("sed w writes a file", strings.TrimSpace(arg))
		}
	}
}

// sedParser reads GNU sed scripts far enough to find the commands that
// run programs or write files.
type sedParser struct {
	s   string
	i   int
	err bool
}

func (p *sedParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

// toEOL returns the rest of the line.
func (p *sedParser) toEOL() string {
	j := strings.IndexByte(p.s[p.i:], '\n')
	if j < 0 {
		r := p.s[p.i:]
		p.i = len(p.s)
		return r
	}
	r := p.s[p.i : p.i+j]
	p.i += j + 1
	return r
}

// delimited reads up to an unescaped d.
func (p *sedParser) delimited(d byte) bool {
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '\\':
			p.i++
		case c == d:
			return true
		case c == '\n' && d != '\n':
			return false
		}
	}
	return false
}

// fields reads the two d-delimited fields of s and y after the first d.
func (p *sedParser) fields(d byte) bool {
	if !p.delimited(d) {
		return false
	}
	return p.delimited(d)
}

func (p *sedParser) skipSpace() {
	for p.i < len(p.s) && strings.IndexByte(" \t\n;", p.s[p.i]) >= 0 {
		p.i++
	}
}

// address skips an address or address range and a following !.
func (p *sedParser) address() bool {
	for n := 0; n < 2; n++ {
		switch c := p.peek(); {
		case c >= '0' && c <= '9':
			for c := p.peek(); (c >= '0' && c <= '9') || c == '~'; c = p.peek() {
				p.i++
			}
		case c == '$':
			p.i++
		case c == '/':
			p.i++
			if !p.delimited('/') {
				return false
			}
			for c := p.peek(); c == 'I' || c == 'M'; c = p.peek() {
				p.i++
			}
		case c == '\\':
			if p.i+1 >= len(p.s) {
				return false
			}
			d := p.s[p.i+1]
			p.i += 2
			if !p.delimited(d) {
				return false
			}
			for c := p.peek(); c == 'I' || c == 'M'; c = p.peek() {
				p.i++
			}
		case n == 1 && (c == '+' || c == '~'):
			p.i++
			for c := p.peek(); c >= '0' && c <= '9'; c = p.peek() {
				p.i++
			}
		default:
			if n == 1 {
				return false
			}
		}
		for p.peek() == ' ' || p.peek() == '\t' {
			p.i++
		}
		if n == 0 && p.peek() == ',' {
			p.i++
			for p.peek() == ' ' || p.peek() == '\t' {
				p.i++
			}
			continue
		}
		break
	}
	for p.peek() == '!' || p.peek() == ' ' || p.peek() == '\t' {
		p.i++
	}
	return true
}

// next returns the next command that matters ('e', 'w', 'W', or 'E' for
// s///e; s///w is reported as 'w') with its argument; ok is false at the
// end or on a script it cannot read (err set).
func (p *sedParser) next() (cmd byte, arg string, ok bool) {
	for {
		p.skipSpace()
		if p.i >= len(p.s) {
			return 0, "", false
		}
		if !p.address() {
			p.err = true
			return 0, "", false
		}
		if p.i >= len(p.s) {
			p.err = true
			return 0, "", false
		}
		c := p.s[p.i]
		p.i++
		switch c {
		case '{', '}', '=', 'd', 'D', 'g', 'G', 'h', 'H', 'n', 'N', 'p', 'P', 'x', 'z', 'F':
		case '#', ':', 'b', 't', 'T', 'v':
			// Labels and comments end at a newline (labels at ; too).
			if c == '#' || c == ':' {
				p.toEOL()
				continue
			}
			for p.i < len(p.s) && p.s[p.i] != ';' && p.s[p.i] != '\n' && p.s[p.i] != '}' {
				p.i++
			}
		case 'l', 'L', 'q', 'Q':
			for ch := p.peek(); ch == ' ' || (ch >= '0' && ch <= '9'); ch = p.peek() {
				p.i++
			}
		case 'a', 'i', 'c':
			// Text to the end of the line, continued by a backslash.
			for {
				line := p.toEOL()
				if !strings.HasSuffix(line, "\\") || p.i >= len(p.s) {
					break
				}
			}
		case 'r', 'R':
			p.toEOL()
		case 'w', 'W', 'e':
			return c, p.toEOL(), true
		case 'y':
			if p.i >= len(p.s) {
				p.err = true
				return 0, "", false
			}
			d := p.s[p.i]
			p.i++
			if !p.fields(d) {
				p.err = true
				return 0, "", false
			}
		case 's':
			if p.i >= len(p.s) {
				p.err = true
				return 0, "", false
			}
			d := p.s[p.i]
			p.i++
			if d == '\n' || d == '\\' || !p.fields(d) {
				p.err = true
				return 0, "", false
			}
			exec := false
			for p.i < len(p.s) {
				f := p.s[p.i]
				switch {
				case f == 'e':
					exec = true
				case f == 'w':
					p.i++
					return 'w', p.toEOL(), true
				case strings.IndexByte("gpiImM0123456789", f) >= 0:
				default:
					goto flagsDone
				}
				p.i++
			}
		flagsDone:
			if exec {
				return 'E', "", true
			}
		default:
			p.err = true
			return 0, "", false
		}
	}
}

// awk programs are code: system() and pipes run commands, print > file
// writes one. A prefix rule for awk is meant for reading text, so a program
// using any of them (or one read from a file) is out of its reach.
// They compile on first use: a regexp compiled at package init is paid
// by every start of the binary, `reasonix version` included.
var awkRE = lazy.Value[awkRegexps]{Build: func() (re awkRegexps) {
	re.runs = regexp.MustCompile(`\bsystem\s*\(|[^|]\|[^|]|^\|[^|]|\|&`)
	re.writes = regexp.MustCompile(`\bprintf?\b[^;\n]*>|\bfflush\b`)
	re.target = regexp.MustCompile(`\bprintf?\b[^;\n]*?>>?\s*"([^"]*)"`)
	return re
}}

type awkRegexps struct{ runs, writes, target *regexp.Regexp }

func (a *shellAnalyzer) awkCommand(base string, words []string) {
	args := words[1:]
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case w == dynWord:
			a.noPrefix(base + " with a program computed when the line runs")
			return
		case w == "--":
			if i+1 < len(args) {
				a.awkProgram(base, args[i+1])
			}
			return
		case w == "-f" || w == "--file" || strings.HasPrefix(w, "-f") && len(w) > 2 && w[1] == 'f' ||
			w == "-i" || w == "--include" || w == "-l" || w == "--load" || w == "-E" || w == "--exec":
			a.noPrefix(base + " " + w + " runs a program from a file")
			return
		case w == "-v" || w == "-F" || w == "--assign" || w == "--field-separator":
			i++
		case strings.HasPrefix(w, "-"):
		default:
			a.awkProgram(base, w)
			return
		}
	}
}

func (a *shellAnalyzer) awkProgram(base, prog string) {
	if awkRE.Get().runs.MatchString(prog) {
		a.noPrefix(base + " program runs commands (system or a pipe)")
	}
	if awkRE.Get().writes.MatchString(prog) {
		a.noPrefix(base + " program writes files (print >)")
	}
	for _, m := range awkRE.Get().target.FindAllStringSubmatch(prog, -1) {
		if name, ok := a.controlTarget(m[1]); ok {
			a.res.danger(controlDanger(base+" writes", name))
		} else if inGitDir(m[1]) {
			a.res.danger(base + " writes into " + m[1] + ", where git keeps config and hooks it runs")
		}
	}
}
