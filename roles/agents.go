package roles

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reasonix/reasonix/skills"
)

// LoadOptions says where to look for agent files.
type LoadOptions struct {
	// Workspace is the project root (.reasonix/agents, .claude/agents).
	Workspace string
	// Home is the Reasonix user directory (~/.reasonix); its agents folder
	// is searched after the project's. "" skips it.
	Home string
	// UserHome is the user's home directory (~), for ~/.claude/agents,
	// searched last. "" skips it.
	UserHome string
	// ProjectTrusted says whether the person trusted the project
	// (`reasonix trust`): only then may its own agent files (which come
	// with the repository) run their sessions in a looser posture than the
	// run's. Asked only when one asks for that; nil is no.
	ProjectTrusted func() bool
}

// loosening are the permission modes that run calls without asking.
var loosening = []string{"auto", "acceptEdits", "allow", "yolo", "bypassPermissions"}

// maxAgentFile bounds what is read of one agent file; a prompt larger than
// this is a mistake, not an agent.
const maxAgentFile = 256 << 10

// Load returns the built-in roles plus the agents found in, by precedence,
// the project's .reasonix/agents and .claude/agents, then Home/agents and
// UserHome/.claude/agents. An earlier agent shadows a later one with the
// same name. Problems never abort loading: malformed files are skipped and
// every problem comes back as a notice naming the file.
func Load(opts LoadOptions) (*Set, []string) {
	set := builtinSet()
	var notices []string
	var dirs []string
	if opts.Workspace != "" {
		dirs = append(dirs, filepath.Join(opts.Workspace, ".reasonix", "agents"), filepath.Join(opts.Workspace, ".claude", "agents"))
	}
	// The first dirs come with the repository.
	projectDirs := len(dirs)
	if opts.Home != "" {
		dirs = append(dirs, filepath.Join(opts.Home, "agents"))
	}
	if opts.UserHome != "" {
		dirs = append(dirs, filepath.Join(opts.UserHome, ".claude", "agents"))
	}
	seenDir := map[string]bool{}
	fromFile := map[string]bool{}
	for i, dir := range dirs {
		dir = filepath.Clean(dir)
		if seenDir[dir] {
			continue // the workspace is the home directory
		}
		seenDir[dir] = true
		files, err := skills.MarkdownFiles(dir)
		if err != nil {
			notices = append(notices, fmt.Sprintf("agents: cannot read %s: %v", dir, err))
			continue
		}
		for _, file := range files {
			r, warns, err := loadAgent(file)
			if err != nil {
				notices = append(notices, fmt.Sprintf("agents: skipped %s: %v", file, err))
				continue
			}
			if r.Name == Planner || r.Name == Executor {
				notices = append(notices, fmt.Sprintf("agents: skipped %s: %q is a reserved role name", file, r.Name))
				continue
			}
			prev, exists := set.roles[r.Name]
			if exists && fromFile[r.Name] {
				notices = append(notices, fmt.Sprintf("agents: agent %q in %s is shadowed by %s", r.Name, file, describe(prev)))
				continue
			}
			notices = append(notices, warns...)
			if i < projectDirs && slices.Contains(loosening, strings.TrimSpace(r.Permissions.Mode)) &&
				(opts.ProjectTrusted == nil || !opts.ProjectTrusted()) {
				notices = append(notices, fmt.Sprintf("agents: %s asks for permissionMode %s, which a project's agent file may set only once you trust the project (`reasonix trust`); it runs in the run's posture",
					file, r.Permissions.Mode))
				r.Permissions.Mode = ""
			}
			if exists {
				notices = append(notices, fmt.Sprintf("agents: %s replaces %s subagent", file, describe(prev)))
			}
			set.roles[r.Name] = r
			fromFile[r.Name] = true
		}
	}
	return set, notices
}

// validAgentName reports a name of 1 to 64 letters, digits, '_', '.' and
// '-' that starts with a letter or digit. (A regexp with a bounded repeat
// compiles to a large program, which every start of the binary paid for.)
func validAgentName(s string) bool {
	if len(s) == 0 || len(s) > 64 || !isAlnum(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '_' && c != '.' && c != '-' {
			return false
		}
	}
	return true
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// claudeModel reports a Claude Code model alias; it names no Reasonix
// model, so an agent asking for one inherits the caller's model instead
// of failing.
func claudeModel(m string) bool { return m == "sonnet" || m == "opus" || m == "haiku" }

// loadAgent parses one agent file into a Role. warns are problems that do
// not stop the agent from being used.
func loadAgent(file string) (Role, []string, error) {
	st, err := os.Stat(file)
	if err != nil {
		return Role{}, nil, err
	}
	if st.Size() > maxAgentFile {
		return Role{}, nil, fmt.Errorf("file is %d bytes; the limit is %d", st.Size(), maxAgentFile)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return Role{}, nil, err
	}
	fm, body, err := skills.ParseFrontmatter(data)
	if err != nil {
		return Role{}, nil, err
	}
	var warns []string
	warn := func(format string, a ...any) {
		warns = append(warns, fmt.Sprintf("agents: %s: ", file)+fmt.Sprintf(format, a...))
	}
	r := Role{
		Name:        fm.String("name"),
		Description: fm.String("description"),
		System:      strings.TrimSpace(string(body)),
		Model:       fm.String("model"),
		Source:      file,
	}
	if r.Name == "" {
		r.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	if !validAgentName(r.Name) {
		return Role{}, nil, fmt.Errorf("agent name %q must be letters, digits, '-', '_' or '.', at most 64 characters", r.Name)
	}
	if r.System == "" {
		return Role{}, nil, errors.New("no system prompt (the body after the frontmatter is empty)")
	}
	if r.Description == "" {
		r.Description = skills.FirstParagraph(body)
	}
	switch m := strings.ToLower(r.Model); {
	case m == "inherit":
		r.Model = ""
	case claudeModel(m):
		warn("model %q is a Claude Code alias; using the caller's model", r.Model)
		r.Model = ""
	}
	if n, ok, err := fm.Int("max_steps", "maxSteps", "max-steps"); err != nil || (ok && n < 0) {
		v, _ := fm.Lookup("max_steps", "maxSteps", "max-steps")
		warn("max_steps %v ignored: want a whole number ≥ 0", v)
	} else if ok {
		r.MaxSteps = n
	}
	r.Permissions.Mode = fm.String("permissionMode", "permission_mode", "permission-mode")
	if strings.EqualFold(r.Permissions.Mode, "plan") {
		r.PlanMode = true
	}
	r.Permissions.Allow, _ = fm.List("allow")
	r.Permissions.Ask, _ = fm.List("ask")
	r.Permissions.Deny, _ = fm.List("deny")
	if list, ok := fm.List("tools"); ok {
		var dropped, narrowed []string
		r.Tools, dropped, narrowed = mapTools(list)
		if len(dropped) > 0 {
			warn("tools without a Reasonix equivalent dropped: %s", joinQuoted(dropped))
		}
		if len(narrowed) > 0 {
			warn("specifiers in %s ignored; permission rules decide what those tools may do", joinQuoted(narrowed))
		}
	}
	return r, warns, nil
}

// claudeTool maps Claude Code tool names to Reasonix ones. A name mapped
// to "" has no equivalent.
func claudeTool(name string) (string, bool) {
	switch name {
	case "Read":
		return "read_file", true
	case "Write":
		return "write_file", true
	case "Edit":
		return "edit_file", true
	case "MultiEdit":
		return "multi_edit", true
	case "Bash":
		return "bash", true
	case "Glob":
		return "glob", true
	case "Grep":
		return "grep", true
	case "LS":
		return "ls", true
	case "TodoWrite":
		return "todo_write", true
	case "TodoRead":
		return "todo_read", true
	case "Task":
		return "task", true
	case "Skill":
		return "skill", true
	case "WebFetch":
		return "web_fetch", true
	case "BashOutput", "KillShell", "KillBash":
		return "job", true
	case "WebSearch", "NotebookRead", "NotebookEdit", "ExitPlanMode", "SlashCommand":
		return "", true
	}
	return "", false
}

// ownToolName reports a name shaped like a Reasonix tool's: a lowercase
// letter, then lowercase letters, digits and '_'.
func ownToolName(s string) bool {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return false
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// ToolNames maps a tool list written for Claude Code or Reasonix (an agent
// file's tools, a skill's allowed-tools) to Reasonix tool names, as an
// agent file's list is mapped: nil inherits every tool, an empty non-nil
// list offers none, and unknown names are dropped.
func ToolNames(list []string) []string {
	out, _, _ := mapTools(list)
	return out
}

// mapTools turns an agent file's tool list into Reasonix tool names. A
// list that is absent, empty or "*" inherits all tools (nil). Permission
// specifiers such as Bash(git:*) are reduced to the tool: the gate, not the
// tool list, decides which commands run; narrowed reports them.
func mapTools(list []string) (out, dropped, narrowed []string) {
	if len(list) == 0 {
		return nil, nil, nil
	}
	out = []string{}
	seen := map[string]bool{}
	for _, t := range list {
		t = strings.TrimSpace(t)
		base := t
		if i := strings.IndexByte(t, '('); i > 0 {
			base = strings.TrimSpace(t[:i])
		}
		if base == "*" {
			return nil, nil, nil
		}
		name, known := claudeTool(base)
		switch {
		case known && name == "":
			dropped = append(dropped, t)
			continue
		case known:
		case strings.HasPrefix(base, "mcp__") || ownToolName(base):
			name = base
		default:
			dropped = append(dropped, t)
			continue
		}
		if base != t {
			narrowed = append(narrowed, t)
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	return out, dropped, narrowed
}
