// Package rules assembles the part of a session's system prompt that
// follows the role's own prompt: the user's global rules files, the
// project's rules files from the git root down to the working directory,
// the files the `instructions` config key names, and a frozen environment
// block. Everything is read once; callers cache the result so every
// session and every turn of a process sends the same bytes and provider
// prompt caches keep hitting.
package rules

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/reasonix/reasonix/internal/lookpath"
	"github.com/reasonix/reasonix/internal/nofollow"
)

// Limits on what is read. A file longer than FileCap is cut; once the
// rules total TotalCap, the rest is cut or left out. Imports nest at most
// MaxImportDepth deep.
const (
	FileCap        = 64 << 10
	TotalCap       = 128 << 10
	MaxImportDepth = 5
)

// ProjectFiles are the rules files looked for in every directory from the
// git root down to the working directory, in this order.
// CLAUDE.local.md is Claude Code's personal, git-ignored project file;
// CRUSH.md is Crush's (AGENTS.md serves Codex and OpenCode).
var ProjectFiles = []string{"AGENTS.md", "CLAUDE.md", ".claude" + string(filepath.Separator) + "CLAUDE.md", "CLAUDE.local.md", "CRUSH.md", "REASONIX.md"}

// Part kinds.
const (
	KindPreamble     = "preamble"
	KindGlobal       = "global"
	KindProject      = "project"
	KindInstructions = "instructions"
	KindEnvironment  = "environment"
)

// Options say where to look.
type Options struct {
	// Home is the Reasonix home (its AGENTS.md is a global rules file).
	Home string
	// UserHome is the user's home directory (~/.claude/CLAUDE.md, "~/"
	// in imports and instructions).
	UserHome string
	// Workspace is the project directory: the root of the project walk
	// when there is no git root, and the base of relative instructions.
	Workspace string
	// Cwd is the working directory, where the project walk ends.
	Cwd string
	// Instructions are the paths of the `instructions` config key;
	// relative ones resolve against Workspace, "~/" against UserHome, and
	// a path with * ? or [ is a glob.
	Instructions []string
	// Now is the clock for the environment block; nil is time.Now.
	Now func() time.Time
	// NoGit skips running git for the status summary (the branch is read
	// from .git/HEAD either way).
	NoGit bool
	// GitTimeout bounds `git status`; 0 is 2 seconds.
	GitTimeout time.Duration
	// Status, when started for Cwd (StartStatus), is the `git status`
	// the environment block reports, so git runs while the rest of
	// start-up does; nil runs it when the block is built.
	Status *Status
	// Denied, when set, says why a file may not be read ("" when it may):
	// the read deny list and Read deny rules. It applies to the project
	// and instructions files and everything they import, which came with
	// the repository (a CLAUDE.md importing ~/.ssh/id_rsa, or a symlink
	// to it, would hand the key to the model), not to the global files
	// and their imports, which are the user's own.
	Denied func(path string) string
}

// Part is one labelled block of the prefix, as it appears in the prompt.
type Part struct {
	Kind string `json:"kind"`
	// Source is the file's path; for the preamble and the environment it
	// is a description.
	Source string `json:"source"`
	// Imports are the files @-imported into this one, nested ones too.
	Imports []string `json:"imports,omitempty"`
	// Paths are the globs a .claude/rules file is scoped to (its
	// frontmatter's paths), joined by ", "; "" applies everywhere.
	Paths string `json:"paths,omitempty"`
	Text  string `json:"-"`
}

// Prefix is the assembled rules prefix.
type Prefix struct {
	Parts []Part
	// Notices report what was cut, refused or unreadable.
	Notices []string
}

// Files are the files the prefix holds: each part's source and imports.
func (p *Prefix) Files() []string {
	if p == nil {
		return nil
	}
	var out []string
	for _, pt := range p.Parts {
		if pt.Kind == KindPreamble || pt.Kind == KindEnvironment {
			continue
		}
		out = append(out, pt.Source)
		out = append(out, pt.Imports...)
	}
	return out
}

// Separator joins the parts of a system prompt.
const Separator = "\n\n"

// Text is the prefix as it is appended to a role's system prompt.
func (p *Prefix) Text() string {
	if p == nil {
		return ""
	}
	texts := make([]string, len(p.Parts))
	for i, pt := range p.Parts {
		texts[i] = pt.Text
	}
	return strings.Join(texts, Separator)
}

const preamble = `# Rules and instructions
The user's rules files follow, each in a <rules> block naming its path. Follow them. Where they disagree, a project file beats a global one, a file closer to the working directory beats one further up, and a configured instructions file comes last and beats both.`

// Load reads every rules file and builds the environment block. It never
// fails: what cannot be read is reported in Notices.
func Load(opts Options) *Prefix {
	l := &loader{opts: opts, budget: TotalCap, seen: map[string]bool{}}
	var parts []Part
	var globals []string
	if opts.Home != "" {
		globals = append(globals, filepath.Join(opts.Home, "AGENTS.md"))
	}
	if opts.UserHome != "" {
		globals = append(globals, filepath.Join(opts.UserHome, ".claude", "CLAUDE.md"))
	}
	if opts.UserHome != "" {
		globals = append(globals, RuleDirFiles(filepath.Join(opts.UserHome, ".claude", "rules"))...)
	}
	for _, f := range globals {
		if pt, ok := l.top(KindGlobal, f, false); ok {
			parts = append(parts, pt)
		}
	}
	root := opts.gitRoot()
	for _, dir := range projectDirs(root, opts.Workspace, opts.Cwd) {
		files := make([]string, 0, len(ProjectFiles))
		for _, name := range ProjectFiles {
			files = append(files, filepath.Join(dir, name))
		}
		for _, f := range append(files, RuleDirFiles(filepath.Join(dir, ".claude", "rules"))...) {
			if pt, ok := l.top(KindProject, f, false); ok {
				parts = append(parts, pt)
			}
		}
	}
	for _, f := range l.instructionFiles() {
		if pt, ok := l.top(KindInstructions, f, true); ok {
			parts = append(parts, pt)
		}
	}
	if len(parts) > 0 {
		text := preamble
		for _, pt := range parts {
			if pt.Paths != "" {
				text += "\n" + scopedNote
				break
			}
		}
		parts = append([]Part{{Kind: KindPreamble, Source: "reasonix", Text: text}}, parts...)
	}
	parts = append(parts, l.environment(root))
	return &Prefix{Parts: parts, Notices: l.notices}
}

// GitRoot is the nearest ancestor of dir (dir included) holding a .git
// directory or file, or "" when there is none.
func GitRoot(dir string) string {
	if dir == "" {
		return ""
	}
	dir = filepath.Clean(dir)
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

// projectDirs lists the directories from the project root (the git root,
// else the workspace) down to cwd. When cwd is not under the root, only
// cwd is searched.
func projectDirs(gitRoot, workspace, cwd string) []string {
	if cwd == "" {
		cwd = workspace
	}
	if cwd == "" {
		return nil
	}
	cwd = filepath.Clean(cwd)
	root := gitRoot
	if root == "" {
		root = workspace
	}
	if root == "" {
		return []string{cwd}
	}
	root = filepath.Clean(root)
	rel, err := filepath.Rel(root, cwd)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) || filepath.IsAbs(rel) {
		return []string{cwd}
	}
	dirs := []string{root}
	if rel == "." {
		return dirs
	}
	cur := root
	for _, el := range strings.Split(rel, string(filepath.Separator)) {
		cur = filepath.Join(cur, el)
		dirs = append(dirs, cur)
	}
	return dirs
}

type loader struct {
	opts Options
	// guarded is set while a file from the repository (or instructions)
	// and its imports are read: opts.Denied applies to them.
	guarded bool
	budget  int
	seen    map[string]bool // identity of every file included
	notices []string
}

func (l *loader) notice(format string, args ...any) {
	l.notices = append(l.notices, fmt.Sprintf(format, args...))
}

// denied is opts.Denied for a file that exists, while guarded.
func (l *loader) denied(path string) string {
	if !l.guarded || l.opts.Denied == nil {
		return ""
	}
	if _, err := os.Stat(path); err != nil {
		return ""
	}
	return l.opts.Denied(path)
}

// identity names a file so a symlink and its target count once.
func identity(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return filepath.Clean(path)
}

// top reads one discovered file and its imports into a labelled part. A
// missing file is skipped quietly unless mustExist.
func (l *loader) top(kind, path string, mustExist bool) (Part, bool) {
	pt := Part{Kind: kind, Source: path}
	l.guarded = kind != KindGlobal
	if why := l.denied(path); why != "" {
		l.notice("rules: %s left out: reading it is denied by %s", path, why)
		return Part{}, false
	}
	body, ok := l.file(path, 0, nil, &pt, mustExist)
	if !ok {
		return Part{}, false
	}
	sep := string(filepath.Separator)
	if strings.Contains(path, sep+".claude"+sep+"rules"+sep) {
		pt.Paths = scopedPaths(body)
	}
	if pt.Paths != "" {
		pt.Text = fmt.Sprintf("<rules source=%q kind=%q applies-to=%q>\n%s\n</rules>", path, kind, pt.Paths, body)
		return pt, true
	}
	pt.Text = fmt.Sprintf("<rules source=%q kind=%q>\n%s\n</rules>", path, kind, body)
	return pt, true
}

// scopedNote joins the preamble when a rules file is scoped to paths.
const scopedNote = "A block with applies-to holds rules for the files those globs match (relative to the project root): follow them when you read, write or create such files."

// RuleDirFiles lists the Markdown files of a rules folder (Claude Code's
// .claude/rules), subfolders included, in path order; none when it does
// not exist.
func RuleDirFiles(dir string) []string {
	var out []string
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".md") {
			out = append(out, p)
		}
		return nil
	})
	sort.Strings(out)
	return out
}

// scopedPaths reads the paths a rules file's frontmatter scopes it to
// (Claude Code's `paths:`, a list or one value) and joins them with ", ";
// "" when it has none.
func scopedPaths(body string) string {
	rest, ok := strings.CutPrefix(body, "---\n")
	if !ok {
		return ""
	}
	front, _, ok := strings.Cut(rest, "\n---")
	if !ok {
		return ""
	}
	var paths []string
	in := false
	for _, line := range strings.Split(front, "\n") {
		t := strings.TrimSpace(line)
		if v, ok := strings.CutPrefix(t, "paths:"); ok {
			in = true
			v = strings.TrimSpace(v)
			v = strings.TrimSuffix(strings.TrimPrefix(v, "["), "]")
			for _, p := range strings.Split(v, ",") {
				if p = strings.Trim(strings.TrimSpace(p), `"'`); p != "" {
					paths = append(paths, p)
				}
			}
			continue
		}
		if in && strings.HasPrefix(t, "- ") {
			if p := strings.Trim(strings.TrimSpace(t[2:]), `"'`); p != "" {
				paths = append(paths, p)
			}
			continue
		}
		if line != "" && line[0] != ' ' && line[0] != '\t' {
			in = false
		}
	}
	return strings.Join(paths, ", ")
}

// file reads path and expands its imports. stack holds the identities of
// the files importing it, for cycle detection.
func (l *loader) file(path string, depth int, stack []string, pt *Part, mustExist bool) (string, bool) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && !mustExist {
		// Most candidate names are missing: skipped quietly, as below,
		// without first resolving the path (a stat of every component).
		return "", false
	}
	id := identity(path)
	if l.seen[id] {
		return "", false
	}
	if l.budget <= 0 {
		if _, err := os.Stat(path); err == nil {
			l.notice("rules: %s left out: the rules total is capped at %d KB", path, TotalCap>>10)
		}
		return "", false
	}
	// What is read is the file id names, checked here and opened
	// without following a symlink (internal/nofollow): a confined
	// command may retarget a rules file's symlink between the caller's
	// check of path and this open, to a file the deny list keeps (a
	// nested AGENTS.md pointed at ~/.ssh/id_rsa lands in a tool result).
	if why := l.denied(id); why != "" {
		l.notice("rules: %s left out: reading it is denied by %s", path, why)
		return "", false
	}
	f, err := nofollow.Open(id, nofollow.ReadFlags, 0)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) || mustExist {
			l.notice("rules: cannot read %s: %v", path, err)
		}
		return "", false
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() {
		// A FIFO would block the read, so it is never read.
		if err == nil && mustExist {
			l.notice("rules: %s is not a regular file", path)
		}
		return "", false
	}
	limit := min(FileCap, l.budget)
	data, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	if err != nil {
		l.notice("rules: cannot read %s: %v", path, err)
		return "", false
	}
	l.seen[id] = true
	cut := ""
	if len(data) > limit {
		size := int64(len(data))
		if st, err := f.Stat(); err == nil {
			size = st.Size()
		}
		data = trimUTF8(data[:limit])
		why := fmt.Sprintf("rules files are capped at %d KB each", FileCap>>10)
		if limit < FileCap {
			why = fmt.Sprintf("the rules total is capped at %d KB", TotalCap>>10)
		}
		cut = fmt.Sprintf("[cut: %s is %s; only the first %s is included because %s]", path, formatSize(size), formatSize(int64(len(data))), why)
		l.notice("rules: %s", strings.Trim(cut, "[]"))
	}
	l.budget -= len(data)
	body := l.expand(path, string(data), depth, append(stack, id), pt)
	body = strings.TrimRight(body, "\n")
	if cut != "" {
		body += "\n" + cut
	}
	return body, true
}

// expand replaces each import line (a line that is just @path, outside
// fenced code) with the imported file in a nested <rules> block, and
// adds after any other line the files its @path mentions name.
func (l *loader) expand(path, text string, depth int, stack []string, pt *Part) string {
	if !strings.Contains(text, "@") {
		return text
	}
	var b strings.Builder
	fence := ""
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 4096), FileCap+1)
	first := true
	for sc.Scan() {
		line := sc.Text()
		if !first {
			b.WriteByte('\n')
		}
		first = false
		t := strings.TrimSpace(line)
		if f := fenceOf(t); f != "" {
			switch {
			case fence == "":
				fence = f
			case strings.HasPrefix(t, fence) && strings.TrimLeft(t, fence[:1]) == "":
				fence = ""
			}
		}
		if fence != "" {
			b.WriteString(line)
			continue
		}
		if target, ok := importTarget(t); ok {
			b.WriteString(l.importLine(path, line, target, depth, stack, pt))
			continue
		}
		b.WriteString(line)
		// Claude Code imports a file an @path names anywhere in the text
		// ("See @README.md for the overview", "- @docs/style.md"). Such a
		// mention is imported after its line when it names a file; one
		// that names none (@alice, @types/node) stays text.
		for _, target := range inlineTargets(line) {
			p := l.resolve(target, filepath.Dir(path))
			if st, err := os.Stat(p); err != nil || !st.Mode().IsRegular() {
				continue
			}
			if block, ok := l.importFile(path, target, depth, stack, pt); ok {
				b.WriteString("\n" + block)
			}
		}
	}
	if strings.HasSuffix(text, "\n") {
		b.WriteByte('\n')
	}
	return b.String()
}

// importLine is an import line replaced by the file it names, or kept
// with a note saying why it was not imported.
func (l *loader) importLine(from, line, target string, depth int, stack []string, pt *Part) string {
	block, ok := l.importFile(from, target, depth, stack, pt)
	if !ok {
		return line + " (" + block + ")"
	}
	return block
}

// importFile reads the file target names (relative to from) as a nested
// rules block. When it is not imported it returns why, as a short note,
// and false; each reason but "included above" is a notice too.
func (l *loader) importFile(from, target string, depth int, stack []string, pt *Part) (string, bool) {
	p := l.resolve(target, filepath.Dir(from))
	if depth+1 > MaxImportDepth {
		l.notice("rules: import %s in %s refused: imports nest at most %d deep", target, from, MaxImportDepth)
		return "not imported: too deeply nested", false
	}
	id := identity(p)
	for _, s := range stack {
		if s == id {
			l.notice("rules: import %s in %s refused: it imports itself", target, from)
			return "not imported: import cycle", false
		}
	}
	if l.seen[id] {
		return "included above", false
	}
	if why := l.denied(p); why != "" {
		l.notice("rules: import %s in %s refused: reading it is denied by %s", target, from, why)
		return "not imported: reading it is denied", false
	}
	body, ok := l.file(p, depth+1, stack, pt, false)
	if !ok {
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			l.notice("rules: import %s in %s: no such file", target, from)
			return "not found", false
		}
		return "not imported", false
	}
	pt.Imports = append(pt.Imports, p)
	return fmt.Sprintf("<rules source=%q imported-by=%q>\n%s\n</rules>", p, from, body), true
}

// inlineTargets lists the @path mentions in a line of prose: an @ at the
// start or after white space or an opening bracket, outside `code`
// spans, up to white space, less trailing punctuation. Whether one names
// a file is the caller's to check.
func inlineTargets(line string) []string {
	var out []string
	code := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; {
		case c == '`':
			code = !code
		case c == '@' && !code && (i == 0 || strings.IndexByte(" \t([{\"'", line[i-1]) >= 0):
			j := i + 1
			for j < len(line) && line[j] != ' ' && line[j] != '\t' && line[j] != '`' {
				j++
			}
			target := strings.TrimRight(line[i+1:j], ".,;:!?)]}\"'")
			if target != "" {
				out = append(out, target)
			}
			i = j - 1
		}
	}
	return out
}

// importTarget reports whether a trimmed line is an import and its path.
func importTarget(t string) (string, bool) {
	if len(t) < 2 || t[0] != '@' || strings.ContainsAny(t, " \t") {
		return "", false
	}
	p := t[1:]
	// An @mention or an email is not a path.
	if !strings.ContainsAny(p, "/.~\\") {
		return "", false
	}
	return p, true
}

func fenceOf(t string) string {
	for _, f := range []string{"```", "~~~"} {
		if strings.HasPrefix(t, f) {
			return f
		}
	}
	return ""
}

// resolve expands "~/" against the user's home and makes a relative path
// absolute against base.
func (l *loader) resolve(p, base string) string {
	if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`) {
		if l.opts.UserHome != "" {
			return filepath.Join(l.opts.UserHome, p[1:])
		}
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(base, p)
}

// instructionFiles resolves the instructions paths, expanding globs.
func (l *loader) instructionFiles() []string {
	base := l.opts.Workspace
	if base == "" {
		base = l.opts.Cwd
	}
	var out []string
	for _, raw := range l.opts.Instructions {
		p := l.resolve(raw, base)
		if !strings.ContainsAny(raw, "*?[") {
			out = append(out, p)
			continue
		}
		matches, err := filepath.Glob(p)
		if err != nil {
			l.notice("instructions: bad pattern %q: %v", raw, err)
			continue
		}
		if len(matches) == 0 {
			l.notice("instructions: %q matches no file", raw)
		}
		sort.Strings(matches)
		out = append(out, matches...)
	}
	return out
}

// environment is the frozen environment block.
func (l *loader) environment(gitRoot string) Part {
	now := time.Now
	if l.opts.Now != nil {
		now = l.opts.Now
	}
	cwd := l.opts.Cwd
	if cwd == "" {
		cwd = l.opts.Workspace
	}
	var b strings.Builder
	b.WriteString("# Environment\nAs of the session start; not updated.\n")
	fmt.Fprintf(&b, "Working directory: %s\n", cwd)
	if l.opts.Workspace != "" && filepath.Clean(l.opts.Workspace) != filepath.Clean(cwd) {
		fmt.Fprintf(&b, "Workspace: %s\n", l.opts.Workspace)
	}
	fmt.Fprintf(&b, "Platform: %s/%s\n", runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(&b, "Date: %s\n", now().Format("2006-01-02"))
	if gitRoot != "" {
		fmt.Fprintf(&b, "Git root: %s\n", gitRoot)
		if br := Branch(gitRoot); br != "" {
			fmt.Fprintf(&b, "Git branch: %s\n", br)
		}
		if !l.opts.NoGit {
			st, ok := "", false
			if s := l.opts.Status; s != nil && s.cwd == l.opts.Cwd {
				st, ok = s.result()
			} else {
				st, ok = status(gitRoot, l.opts.Cwd, l.opts.GitTimeout)
			}
			if ok {
				fmt.Fprintf(&b, "Git status: %s\n", st)
			}
		}
	}
	return Part{Kind: KindEnvironment, Source: "taken at session start", Text: strings.TrimRight(b.String(), "\n")}
}

// Branch reads the checked-out branch from the repository's HEAD without
// running git: "main", "detached at 1a2b3c4", or "" when unknown.
func Branch(gitRoot string) string {
	gitDir, ok := gitDirOf(gitRoot)
	if !ok {
		return ""
	}
	data, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return ""
	}
	head := strings.TrimSpace(string(data))
	if ref, ok := strings.CutPrefix(head, "ref:"); ok {
		ref = strings.TrimSpace(ref)
		return strings.TrimPrefix(ref, "refs/heads/")
	}
	if len(head) >= 7 {
		return "detached at " + head[:7]
	}
	return ""
}

// gitDirOf is the git directory of the repository whose top is root:
// root/.git, or for a worktree or submodule (whose .git is a file
// "gitdir: <path>") that path. ok is false when such a file cannot be
// read or names none. Only a regular file is read (a link to one is
// followed, as git does): a FIFO would block the read.
func gitDirOf(root string) (gitDir string, ok bool) {
	gitDir = filepath.Join(root, ".git")
	if st, err := os.Stat(gitDir); err == nil && st.Mode().IsRegular() {
		data, err := os.ReadFile(gitDir)
		if err != nil {
			return "", false
		}
		d, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
		if !ok {
			return "", false
		}
		d = strings.TrimSpace(d)
		if !filepath.IsAbs(d) {
			d = filepath.Join(root, d)
		}
		gitDir = d
	}
	return gitDir, true
}

// status summarises `git status --porcelain`, bounded by a timeout; ok is
// false when git is missing, fails or is too slow.
func status(gitRoot, cwd string, timeout time.Duration) (string, bool) {
	if namesPrograms(gitRoot) {
		// Left out rather than run, as by StartStatus.
		return "", false
	}
	ctx, cancel := context.WithTimeout(context.Background(), statusTimeout(timeout))
	defer cancel()
	cmd, err := statusCommand(ctx, gitRoot, cwd)
	if err != nil {
		return "", false
	}
	out, err := cmd.Output()
	if err != nil {
		return "", false
	}
	return summarize(out), true
}

// statusTimeout is timeout, or 2 seconds for 0.
func statusTimeout(timeout time.Duration) time.Duration {
	if timeout <= 0 {
		return 2 * time.Second
	}
	return timeout
}

// statusCommand is `git status --porcelain` in gitRoot, taking no
// optional locks and never prompting.
//
// The repository's own configuration can name programs git runs for a
// status (core.fsmonitor), and a folder that came with its .git (an
// archive, a shared copy) brings that configuration along: git runs here
// before anyone was asked anything, outside the sandbox. So the monitor
// is turned off, and git gets only the environment it needs, none of the
// API keys in Reasonix's. Nor is git one found on PATH inside the
// repository or cwd (an activated .venv/bin), where a confined command
// may have written one (internal/lookpath).
func statusCommand(ctx context.Context, gitRoot, cwd string) (*exec.Cmd, error) {
	git, err := lookpath.Outside("git", gitRoot, cwd)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, git, "--no-optional-locks", "-c", "core.fsmonitor=false", "status", "--porcelain")
	cmd.Dir = gitRoot
	cmd.Env = append(gitEnv(os.Environ()), "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0")
	return cmd, nil
}

// namesPrograms reports whether the repository's own configuration
// defines filter drivers (programs git runs on file contents, which a
// status may run for a file whose stat changed) or includes other
// configuration files, which might: the start-up status is then not run.
// core.fsmonitor, the other program a status runs, is turned off on the
// command line instead (statusCommand). A repository's .git/config is
// normally the person's own, made by their clone; one that came with the
// folder (an archive, a shared copy) is not. Its config is looked for
// where a worktree's .git file points too, and in the common directory.
func namesPrograms(root string) bool {
	gitDir, ok := gitDirOf(root)
	if !ok {
		return false
	}
	configs := []string{filepath.Join(gitDir, "config")}
	if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
		common := strings.TrimSpace(string(b))
		if !filepath.IsAbs(common) {
			common = filepath.Join(gitDir, common)
		}
		configs = append(configs, filepath.Join(common, "config"))
	}
	for _, c := range configs {
		b, err := os.ReadFile(c)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			l := strings.ToLower(strings.TrimSpace(line))
			if strings.HasPrefix(l, "[filter") || strings.HasPrefix(l, "[include") {
				return true
			}
		}
	}
	return false
}

// gitEnv is what of env a git status needs: where to find programs and
// the person's configuration, the locale, and git's own variables.
func gitEnv(env []string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "GIT_"), strings.HasPrefix(name, "LC_"),
			name == "PATH", name == "HOME", name == "USER", name == "LOGNAME", name == "LANG",
			name == "TZ", name == "TMPDIR", name == "XDG_CONFIG_HOME", name == "SYSTEMROOT", name == "USERPROFILE":
			out = append(out, kv)
		}
	}
	return out
}

// Status is a `git status --porcelain` started ahead of the environment
// block that reports it (StartStatus): in a repository, running git is
// the longest part of a session's start, and started before the rest of
// start-up it runs beside it. It is started by the caller, not by a
// goroutine: on a loaded machine a new goroutine waited 1-1.5 ms for a
// core, and git started from one gained nothing.
type Status struct {
	cwd, root string
	cmd       *exec.Cmd
	out       bytes.Buffer
	cancel    context.CancelFunc
	once      sync.Once
	summary   string
	ok        bool
}

// StartStatus starts `git status` in the repository holding cwd (none
// when cwd is in none), bounded by timeout (0 is 2 seconds). Its result
// goes to the Load whose Options.Status it is and Cwd is cwd; Close ends
// it when no Load will.
func StartStatus(cwd string, timeout time.Duration) *Status {
	s := &Status{cwd: cwd, root: GitRoot(cwd)}
	if s.root == "" {
		s.once.Do(func() {})
		return s
	}
	if namesPrograms(s.root) {
		// Left out rather than run: see namesPrograms.
		s.once.Do(func() {})
		return s
	}
	var ctx context.Context
	ctx, s.cancel = context.WithTimeout(context.Background(), statusTimeout(timeout))
	cmd, err := statusCommand(ctx, s.root, cwd)
	if err != nil {
		s.cancel()
		s.once.Do(func() {})
		return s
	}
	s.cmd = cmd
	s.cmd.Stdout = &s.out
	if err := s.cmd.Start(); err != nil {
		s.cancel()
		s.once.Do(func() {})
	}
	return s
}

// result waits for git and returns the summary, false when git failed.
func (s *Status) result() (string, bool) {
	s.once.Do(func() {
		err := s.cmd.Wait()
		s.cancel()
		if err == nil {
			s.summary, s.ok = summarize(s.out.Bytes()), true
		}
	})
	return s.summary, s.ok
}

// Close stops git if it still runs and waits for it.
func (s *Status) Close() {
	if s.cancel != nil {
		s.cancel()
	}
	s.result()
}

// gitRoot is the repository holding Cwd, found once by StartStatus when
// it was started for Cwd.
func (o Options) gitRoot() string {
	if o.Status != nil && o.Status.cwd == o.Cwd {
		return o.Status.root
	}
	return GitRoot(o.Cwd)
}

// maxStatusLines is how many changed paths the status summary lists.
const maxStatusLines = 10

// summarize turns porcelain output into counts and the first few entries.
func summarize(out []byte) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(out) == 0 || len(lines) == 0 || lines[0] == "" {
		return "clean"
	}
	counts := map[string]int{}
	var order []string
	for _, ln := range lines {
		if len(ln) < 2 {
			continue
		}
		var k string
		switch xy := ln[:2]; {
		case xy == "??":
			k = "untracked"
		case strings.ContainsRune(xy, 'U') || xy == "AA" || xy == "DD":
			k = "conflicted"
		case strings.ContainsRune(xy, 'R'):
			k = "renamed"
		case strings.ContainsRune(xy, 'A'):
			k = "added"
		case strings.ContainsRune(xy, 'D'):
			k = "deleted"
		default:
			k = "modified"
		}
		if counts[k] == 0 {
			order = append(order, k)
		}
		counts[k]++
	}
	var sum []string
	for _, k := range order {
		sum = append(sum, fmt.Sprintf("%d %s", counts[k], k))
	}
	var b strings.Builder
	b.WriteString(strings.Join(sum, ", "))
	for i, ln := range lines {
		if i == maxStatusLines {
			fmt.Fprintf(&b, "\n  ... %d more", len(lines)-i)
			break
		}
		b.WriteString("\n  " + ln)
	}
	return b.String()
}

// trimUTF8 drops a rune cut in half at the end of b.
func trimUTF8(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		if r, _ := utf8.DecodeLastRune(b); r != utf8.RuneError {
			return b
		}
		b = b[:len(b)-1]
	}
	return bytes.ToValidUTF8(b, nil)
}

func formatSize(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
