// Package commands discovers custom slash commands (Markdown files in
// .reasonix/commands and .claude/commands, in the project and the user's
// home) and expands what a person types before it reaches a model: a
// command's body with its arguments, !`cmd` spans, and @path references
// to files and folders of the workspace. Running the shell parts is the
// caller's, through the permission gate; this package only finds them.
package commands

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/reasonix/reasonix/skills"
)

// Sources of a command, in precedence order.
const (
	SourceProject = "project"
	SourceUser    = "user"
)

// maxFile bounds a command file; a prompt larger than this is a mistake.
const maxFile = 256 << 10

// Command is one custom slash command.
type Command struct {
	// Name is what follows the slash: "review" for review.md,
	// "git:commit" for git/commit.md.
	Name        string
	Description string
	// ArgumentHint is shown after the name in lists ("[file] [focus]").
	ArgumentHint string
	// Model is the model the command asks for; "" keeps the session's.
	Model string
	// AllowedTools are permission rules (Bash(git add:*), Read) the turn
	// the command starts may use without asking; deny and ask rules and
	// dangerous commands still apply.
	AllowedTools []string
	// DisableModelInvocation is set when only a person may run the
	// command. The model is never offered commands, so it only shows in
	// lists.
	DisableModelInvocation bool
	// Path is the command's file and Source SourceProject or SourceUser.
	Path   string
	Source string
}

// Options says where to look for commands.
type Options struct {
	// Workspace is the project root.
	Workspace string
	// Home is the Reasonix user directory (~/.reasonix); "" skips it.
	Home string
	// UserHome is the user's home directory, for ~/.claude/commands; ""
	// skips it.
	UserHome string
}

// Catalog is the set of discovered commands, unique by name.
type Catalog struct {
	cmds   []Command
	byName map[string]int
}

// Discover finds commands in, by precedence, the project's
// .reasonix/commands and .claude/commands, then Home/commands and
// UserHome/.claude/commands; an earlier command shadows a later one of
// the same name. Malformed files are skipped; every problem comes back as
// a notice naming the file (and the line, when there is one).
func Discover(opts Options) (*Catalog, []string) {
	c := &Catalog{byName: map[string]int{}}
	type root struct{ dir, source string }
	var roots []root
	if opts.Workspace != "" {
		roots = append(roots, root{filepath.Join(opts.Workspace, ".reasonix", "commands"), SourceProject},
			root{filepath.Join(opts.Workspace, ".claude", "commands"), SourceProject})
	}
	if opts.Home != "" {
		roots = append(roots, root{filepath.Join(opts.Home, "commands"), SourceUser})
	}
	if opts.UserHome != "" {
		roots = append(roots, root{filepath.Join(opts.UserHome, ".claude", "commands"), SourceUser})
	}
	var notices []string
	seen := map[string]bool{}
	for _, r := range roots {
		dir := filepath.Clean(r.dir)
		if seen[dir] {
			continue // the workspace is the home directory
		}
		seen[dir] = true
		files, err := skills.MarkdownFiles(dir)
		if err != nil {
			notices = append(notices, fmt.Sprintf("commands: cannot read %s: %v", dir, err))
			continue
		}
		for _, f := range files {
			cmd, problems, err := readCommand(dir, f, r.source)
			if err != nil {
				notices = append(notices, fmt.Sprintf("commands: skipped %s: %v", f, err))
				continue
			}
			for _, p := range problems {
				notices = append(notices, fmt.Sprintf("commands: %s: %s", f, p))
			}
			if i, dup := c.byName[cmd.Name]; dup {
				notices = append(notices, fmt.Sprintf("commands: /%s in %s is shadowed by %s", cmd.Name, f, c.cmds[i].Path))
				continue
			}
			c.byName[cmd.Name] = len(c.cmds)
			c.cmds = append(c.cmds, cmd)
		}
	}
	sort.Slice(c.cmds, func(i, j int) bool { return c.cmds[i].Name < c.cmds[j].Name })
	for i, cmd := range c.cmds {
		c.byName[cmd.Name] = i
	}
	return c, notices
}

// NameOf is the command name of file under root: its path without the
// extension, folders joined by ':' (git/commit.md is git:commit).
func NameOf(root, file string) string {
	rel, err := filepath.Rel(root, file)
	if err != nil {
		rel = filepath.Base(file)
	}
	rel = strings.TrimSuffix(rel, filepath.Ext(rel))
	return strings.ReplaceAll(filepath.ToSlash(rel), "/", ":")
}

// ValidName reports a name a slash command can have: letters, digits and
// '-', '_', '.', ':', starting with a letter or digit. A prompt such as
// "/usr/bin/env is missing" is therefore not a command.
func ValidName(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case i > 0 && (c == '-' || c == '_' || c == '.' || c == ':'):
		default:
			return false
		}
	}
	return true
}

// readCommand reads one command file. problems are the frontmatter lines
// that could not be read as keys (the block is not valid YAML), for
// notices; the command is still used.
func readCommand(root, file, source string) (_ Command, problems []skills.Problem, _ error) {
	data, err := readFile(file)
	if err != nil {
		return Command{}, nil, err
	}
	// Claude Code reads command files whose frontmatter is not valid YAML
	// (an unquoted "description: Fix: the bug"); so do we, and say which
	// lines could not be read as keys.
	fm, body, problems, err := skills.ParseFrontmatterChecked(data)
	if err != nil {
		return Command{}, nil, err
	}
	name := NameOf(root, file)
	if !ValidName(name) {
		return Command{}, nil, fmt.Errorf("%q is not a command name (letters, digits, '-', '_', '.'; folders become ':')", name)
	}
	c := Command{
		Name:         name,
		Description:  fm.String("description"),
		ArgumentHint: fm.String("argument-hint", "argument_hint", "argumentHint"),
		Model:        fm.String("model"),
		Path:         file,
		Source:       source,
	}
	if c.ArgumentHint == "" {
		// "argument-hint: [focus]" is a YAML list; people mean the text.
		if l, ok := fm.List("argument-hint", "argument_hint", "argumentHint"); ok && len(l) > 0 {
			c.ArgumentHint = "[" + strings.Join(l, ", ") + "]"
		}
	}
	if strings.EqualFold(c.Model, "inherit") {
		c.Model = ""
	}
	if tools, ok := fm.List("allowed-tools", "allowed_tools", "allowedTools"); ok {
		c.AllowedTools = append([]string{}, tools...)
	}
	switch v := strings.ToLower(fm.String("disable-model-invocation", "disable_model_invocation", "disableModelInvocation")); v {
	case "", "false", "no":
	case "true", "yes":
		c.DisableModelInvocation = true
	default:
		return Command{}, nil, fmt.Errorf("line %d: disable-model-invocation must be true or false, not %q", keyLine(data, "disable-model-invocation"), v)
	}
	if c.Description == "" {
		c.Description = skills.FirstParagraph(body)
	}
	return c, problems, nil
}

// keyLine is the line of the file where key is written, for messages; 1
// when it cannot be found.
func keyLine(data []byte, key string) int {
	for i, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), key+":") {
			return i + 1
		}
	}
	return 1
}

func readFile(file string) ([]byte, error) {
	st, err := os.Stat(file)
	if err != nil {
		return nil, err
	}
	if st.Size() > maxFile {
		return nil, fmt.Errorf("file is %d bytes; the limit is %d", st.Size(), maxFile)
	}
	return os.ReadFile(file)
}

// Body reads the command's prompt: its file without the frontmatter.
func (c Command) Body() (string, error) {
	data, err := readFile(c.Path)
	if err != nil {
		return "", fmt.Errorf("command /%s: %w", c.Name, err)
	}
	_, body, _, err := skills.ParseFrontmatterChecked(data)
	if err != nil {
		return "", fmt.Errorf("command /%s: %s: %w", c.Name, c.Path, err)
	}
	return strings.TrimSpace(string(body)), nil
}

// List returns every command, sorted by name.
func (c *Catalog) List() []Command {
	if c == nil {
		return nil
	}
	out := make([]Command, len(c.cmds))
	for i, cmd := range c.cmds {
		out[i] = cmd
		out[i].AllowedTools = append([]string(nil), cmd.AllowedTools...)
	}
	return out
}

// Get returns the command named name.
func (c *Catalog) Get(name string) (Command, bool) {
	if c == nil {
		return Command{}, false
	}
	i, ok := c.byName[name]
	if !ok {
		return Command{}, false
	}
	cmd := c.cmds[i]
	cmd.AllowedTools = append([]string(nil), cmd.AllowedTools...)
	return cmd, true
}
