// Package skills discovers Agent Skills (folders holding a SKILL.md) in the
// project, the user's home and configured paths, builds the short index the
// model sees, loads a skill's instructions on demand and offers them through
// the skill tool. It also owns the lenient frontmatter parser that roles
// shares for agent files.
package skills

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/reasonix/reasonix/internal/text"
)

// FileName is the file that makes a folder a skill.
const FileName = "SKILL.md"

// Run modes of a skill.
const (
	RunInline   = "inline"
	RunSubagent = "subagent"
)

// Sources of a skill, in precedence order.
const (
	SourceProject = "project"
	SourceUser    = "user"
	SourceConfig  = "config"
)

// Limits from the Agent Skills format. Breaking them earns a notice, not a
// rejection, because real skills in the wild do.
const (
	MaxNameLen        = 64
	MaxDescriptionLen = 1024
)

const (
	// maxFrontmatter bounds how much of a SKILL.md discovery reads looking
	// for the closing delimiter.
	maxFrontmatter = 64 << 10
	// headBody bounds the body bytes read when a description has to come
	// from the first paragraph.
	headBody = 8 << 10
	// maxFiles bounds the sibling-file listing returned by Load.
	maxFiles = 100
)

// Skill is one discovered skill. Only its frontmatter has been read; Load
// reads the instructions.
type Skill struct {
	Name        string
	Description string
	// Dir is the absolute skill folder and Path its SKILL.md.
	Dir  string
	Path string
	// AllowedTools is the allowed-tools list as written, in the permission
	// rule syntax (for example "Bash(git status:*)"); nil when absent.
	AllowedTools []string
	// Model is "" to inherit the session's model.
	Model string
	// RunAs is RunInline or RunSubagent.
	RunAs string
	// Source is SourceProject, SourceUser or SourceConfig.
	Source string
}

// Options says where to look for skills.
type Options struct {
	// Workspace is the project root.
	Workspace string
	// Home is the Reasonix user directory (~/.reasonix); "" skips it.
	Home string
	// UserHome is the user's home directory (~), for ~/.claude/skills and
	// for expanding "~/" in Paths and Excluded; "" skips it.
	UserHome string
	// Paths are extra skill roots (folders of skill folders) or single
	// skill folders; relative paths resolve against Workspace.
	Paths []string
	// Excluded are folders or doublestar globs; a skill inside one is
	// ignored. Relative entries resolve against Workspace.
	Excluded []string
	// Disabled are skill names that are never offered.
	Disabled []string
}

// Catalog is the set of discovered skills, unique by name.
type Catalog struct {
	skills []Skill
	byName map[string]int
}

type root struct {
	dir    string
	source string
}

// Discover finds skills. Roots are searched in precedence order (project
// .reasonix, .claude and .agents folders, then the user's, then configured
// paths); on a name clash the earlier skill wins and the clash is reported.
// Problems never abort discovery: they come back as notices naming the file.
func Discover(opts Options) (*Catalog, []string) {
	c := &Catalog{byName: map[string]int{}}
	var notices []string
	var roots []root
	add := func(dir, source string) {
		if dir == "" {
			return
		}
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		roots = append(roots, root{filepath.Clean(dir), source})
	}
	if opts.Workspace != "" {
		add(filepath.Join(opts.Workspace, ".reasonix", "skills"), SourceProject)
		add(filepath.Join(opts.Workspace, ".claude", "skills"), SourceProject)
		add(filepath.Join(opts.Workspace, ".agents", "skills"), SourceProject)
	}
	if opts.Home != "" {
		add(filepath.Join(opts.Home, "skills"), SourceUser)
	}
	if opts.UserHome != "" {
		add(filepath.Join(opts.UserHome, ".claude", "skills"), SourceUser)
	}
	for _, p := range opts.Paths {
		add(resolvePath(p, opts), SourceConfig)
	}

	excluded := make([]string, 0, len(opts.Excluded))
	for _, e := range opts.Excluded {
		if e = strings.TrimSpace(e); e != "" {
			excluded = append(excluded, resolvePath(e, opts))
		}
	}
	disabled := map[string]bool{}
	for _, d := range opts.Disabled {
		disabled[strings.TrimSpace(d)] = true
	}

	seenDir := map[string]bool{}
	for _, r := range roots {
		dirs, err := skillDirs(r.dir)
		if err != nil {
			notices = append(notices, fmt.Sprintf("skills: cannot read %s: %v", r.dir, err))
			continue
		}
		for _, dir := range dirs {
			if seenDir[dir] || isExcluded(dir, excluded) {
				continue
			}
			seenDir[dir] = true
			s, warns, err := readSkill(dir, r.source)
			if err != nil {
				notices = append(notices, fmt.Sprintf("skills: skipped %s: %v", filepath.Join(dir, FileName), err))
				continue
			}
			if disabled[s.Name] {
				continue
			}
			if i, dup := c.byName[s.Name]; dup {
				notices = append(notices, fmt.Sprintf("skills: %s skill %q at %s is shadowed by the %s skill at %s",
					s.Source, s.Name, s.Path, c.skills[i].Source, c.skills[i].Path))
				continue
			}
			notices = append(notices, warns...)
			c.byName[s.Name] = len(c.skills)
			c.skills = append(c.skills, s)
		}
	}
	sort.Slice(c.skills, func(i, j int) bool { return c.skills[i].Name < c.skills[j].Name })
	for i, s := range c.skills {
		c.byName[s.Name] = i
	}
	return c, notices
}

// resolvePath expands "~/" against UserHome and makes relative paths
// absolute against Workspace.
func resolvePath(p string, opts Options) string {
	p = strings.TrimSpace(p)
	if opts.UserHome != "" && (p == "~" || strings.HasPrefix(p, "~/")) {
		p = filepath.Join(opts.UserHome, strings.TrimPrefix(p, "~"))
	}
	if !filepath.IsAbs(p) && opts.Workspace != "" {
		p = filepath.Join(opts.Workspace, p)
	}
	return filepath.Clean(p)
}

// skillDirs returns the skill folders under dir: dir itself when it holds a
// SKILL.md, otherwise each child folder that does. A missing dir is not an
// error; most of the roots usually do not exist.
func skillDirs(dir string) ([]string, error) {
	if isFile(filepath.Join(dir, FileName)) {
		return []string{dir}, nil
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		// Stat rather than e.IsDir so symlinked skill folders count.
		if st, err := os.Stat(sub); err == nil && st.IsDir() && isFile(filepath.Join(sub, FileName)) {
			out = append(out, sub)
		}
	}
	return out, nil
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// isExcluded reports whether dir or one of its ancestors is an excluded
// folder or matches an excluded glob.
func isExcluded(dir string, excluded []string) bool {
	for _, e := range excluded {
		glob := strings.ContainsAny(e, "*?[{")
		for d := dir; ; d = filepath.Dir(d) {
			if glob {
				if ok, _ := doublestar.Match(filepath.ToSlash(e), filepath.ToSlash(d)); ok {
					return true
				}
			} else if d == e {
				return true
			}
			if parent := filepath.Dir(d); parent == d {
				break
			}
		}
	}
	return false
}

// validName reports lowercase letters and digits in words joined by single
// hyphens (^[a-z0-9]+(-[a-z0-9]+)*$).
func validName(s string) bool {
	if s == "" || s[0] == '-' || s[len(s)-1] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case c == '-' && s[i-1] != '-':
		default:
			return false
		}
	}
	return true
}

// Slug turns a name as people write it ("Agent Development") into the
// form a slash command takes ("agent-development"): lowercase ASCII
// letters and digits, every other run of characters one hyphen. It is ""
// when nothing of the name survives (a name in another script), and the
// caller then keeps the name as written.
func Slug(name string) string {
	var b strings.Builder
	hyphen := false
	for _, r := range strings.ToLower(name) {
		if 'a' <= r && r <= 'z' || '0' <= r && r <= '9' {
			if hyphen && b.Len() > 0 {
				b.WriteByte('-')
			}
			hyphen = false
			b.WriteRune(r)
			continue
		}
		hyphen = true
	}
	return b.String()
}

// readSkill reads the frontmatter of dir/SKILL.md and builds the Skill.
// warns are format violations worth telling the user about.
func readSkill(dir, source string) (Skill, []string, error) {
	path := filepath.Join(dir, FileName)
	head, err := readHead(path, 0)
	if err != nil {
		return Skill{}, nil, err
	}
	fm, body, err := ParseFrontmatter(head)
	if err != nil {
		return Skill{}, nil, err
	}
	folder := filepath.Base(dir)
	s := Skill{
		Name:        fm.String("name"),
		Description: fm.String("description"),
		Dir:         dir,
		Path:        path,
		Model:       fm.String("model"),
		RunAs:       RunInline,
		Source:      source,
	}
	if s.Name == "" {
		s.Name = folder
	}
	written := s.Name
	if !validName(s.Name) {
		// "Agent Development" is typed as /agent-development.
		if slug := Slug(s.Name); slug != "" {
			s.Name = slug
		}
	}
	if strings.EqualFold(s.Model, "inherit") {
		s.Model = ""
	}
	if tools, ok := fm.List("allowed-tools", "allowed_tools", "allowedTools"); ok {
		s.AllowedTools = append([]string{}, tools...)
	}
	var warns []string
	warn := func(format string, a ...any) {
		warns = append(warns, fmt.Sprintf("skills: %s: ", path)+fmt.Sprintf(format, a...))
	}
	switch runAs := strings.ToLower(fm.String("runAs", "run-as", "run_as")); {
	case runAs == RunSubagent || (runAs == "" && strings.EqualFold(fm.String("context"), "fork")):
		s.RunAs = RunSubagent
	case runAs == "" || runAs == RunInline:
	default:
		warn("runAs %q is neither inline nor subagent; running inline", runAs)
	}
	if s.Description == "" {
		if len(bytes.TrimSpace(body)) == 0 {
			// Frontmatter was read alone; fetch a little of the body.
			if more, err := readHead(path, headBody); err == nil {
				if _, b, err := ParseFrontmatter(more); err == nil {
					body = b
				}
			}
		}
		s.Description = FirstParagraph(body)
		if len(fm) > 0 {
			warn("no description in the frontmatter; using the first paragraph")
		}
	}
	if s.Description == "" {
		warn("no description; the model cannot tell when to use it")
	}
	switch {
	case written != s.Name:
		warn("skill name %q should be lowercase letters, digits and single hyphens; it is offered as %q", written, s.Name)
	case len(s.Name) > MaxNameLen || !validName(s.Name):
		warn("skill name %q should be lowercase letters, digits and single hyphens, at most %d characters", s.Name, MaxNameLen)
	}
	if s.Name != folder && written != folder {
		warn("skill name %q does not match its folder %q", s.Name, folder)
	}
	if len(s.Description) > MaxDescriptionLen {
		warn("description is %d characters; the limit is %d", len(s.Description), MaxDescriptionLen)
	}
	return s, warns, nil
}

// readHead reads the frontmatter of path and at most bodyBytes of what
// follows, so discovery stays cheap however long the instructions are. A
// file without frontmatter yields its first bodyBytes (at least headBody,
// since the description then comes from the body).
func readHead(path string, bodyBytes int) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The limit keeps a file with no line breaks from being read whole.
	r := bufio.NewReader(io.LimitReader(f, int64(maxFrontmatter+max(bodyBytes, headBody))))
	first, err := r.ReadBytes('\n')
	if err != nil && err != io.EOF {
		return nil, err
	}
	if !isDelimiter(bytes.TrimSuffix(bytes.TrimRight(bytes.TrimPrefix(first, []byte("\xef\xbb\xbf")), "\n"), []byte("\r")), false) {
		rest, err := io.ReadAll(io.LimitReader(r, int64(max(bodyBytes, headBody))))
		if err != nil {
			return nil, err
		}
		return append(first, rest...), nil
	}
	buf := bytes.NewBuffer(first)
	for {
		line, err := r.ReadBytes('\n')
		buf.Write(line)
		if isDelimiter(bytes.TrimSuffix(bytes.TrimRight(line, "\n"), []byte("\r")), true) {
			break
		}
		if buf.Len() > maxFrontmatter {
			return nil, fmt.Errorf("frontmatter is larger than %d bytes", maxFrontmatter)
		}
		if err == io.EOF {
			return buf.Bytes(), nil // unterminated; the parser says so
		}
		if err != nil {
			return nil, err
		}
	}
	if bodyBytes > 0 {
		if _, err := io.Copy(buf, io.LimitReader(r, int64(bodyBytes))); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// List returns every skill, sorted by name.
func (c *Catalog) List() []Skill {
	if c == nil {
		return nil
	}
	out := make([]Skill, len(c.skills))
	for i, s := range c.skills {
		out[i] = s
		out[i].AllowedTools = append([]string(nil), s.AllowedTools...)
	}
	return out
}

// Get returns the skill named name.
func (c *Catalog) Get(name string) (Skill, bool) {
	if c == nil {
		return Skill{}, false
	}
	i, ok := c.byName[name]
	if !ok {
		// The name as its author wrote it ("Agent Development").
		if i, ok = c.byName[Slug(name)]; !ok {
			return Skill{}, false
		}
	}
	s := c.skills[i]
	s.AllowedTools = append([]string(nil), s.AllowedTools...)
	return s, true
}

// Index renders the skills allow accepts (nil allows all) as sorted
// "- name: description" lines within maxBytes (0 = no cap). When they do
// not fit, descriptions are cut shorter, so more skills fit, and the tail
// is replaced by a note counting what was left out, so the model knows to
// ask for the full list. The result depends only on the catalog, so it is
// safe inside a cache-stable prompt prefix.
func (c *Catalog) Index(maxBytes int, allow func(name string) bool) string {
	if c == nil {
		return ""
	}
	render := func(clip int) []string {
		var out []string
		for _, s := range c.skills {
			if allow == nil || allow(s.Name) {
				out = append(out, "- "+s.Name+": "+text.Sentence(s.Description, clip)+"\n")
			}
		}
		return out
	}
	all := render(160)
	if total := len(strings.Join(all, "")); maxBytes <= 0 || total <= maxBytes {
		return strings.Join(all, "")
	}
	lines := render(80)
	var b strings.Builder
	for i, l := range lines {
		note := moreNote(len(lines) - i - 1)
		if b.Len()+len(l)+len(note) > maxBytes {
			b.WriteString(moreNote(len(lines) - i))
			return b.String()
		}
		b.WriteString(l)
	}
	return b.String()
}

func moreNote(n int) string {
	if n == 0 {
		return ""
	}
	word := "skills"
	if n == 1 {
		word = "skill"
	}
	return fmt.Sprintf("(%d more %s; call skill with action list and a filter)\n", n, word)
}

// Load reads the skill's instructions (SKILL.md without its frontmatter)
// and lists the other files in its folder as slash-separated relative
// paths, at most 100 of them, hidden entries skipped.
func (s Skill) Load() (body string, files []string, err error) {
	body, files, _, err = s.load()
	return body, files, err
}

func (s Skill) load() (body string, files []string, more bool, err error) {
	data, err := os.ReadFile(s.Path)
	if err != nil {
		return "", nil, false, fmt.Errorf("load skill %s: %w", s.Name, err)
	}
	_, b, err := ParseFrontmatter(data)
	if err != nil {
		return "", nil, false, fmt.Errorf("load skill %s: %w", s.Name, err)
	}
	files, more, err = siblingFiles(s.Dir)
	if err != nil {
		return "", nil, false, fmt.Errorf("load skill %s: %w", s.Name, err)
	}
	return strings.TrimSpace(string(b)), files, more, nil
}

var errEnough = errors.New("enough files")

func siblingFiles(dir string) (files []string, more bool, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // an unreadable corner should not hide the skill
		}
		if p == dir {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil || rel == FileName {
			return nil
		}
		if len(files) == maxFiles {
			more = true
			return errEnough
		}
		files = append(files, filepath.ToSlash(rel))
		return nil
	})
	if errors.Is(err, errEnough) {
		err = nil
	}
	return files, more, err
}
