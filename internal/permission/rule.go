package permission

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// Family names used in rules. A family groups the tools a rule applies to,
// so one rule such as Edit(docs/**) covers every tool that writes files.
const (
	FamilyBash  = "Bash"
	FamilyRead  = "Read"
	FamilyEdit  = "Edit"
	FamilySkill = "Skill"
	FamilyTask  = "Task"
	// FamilyWebFetch rules take a domain:HOST specifier.
	FamilyWebFetch = "WebFetch"
	// FamilyPowerShell rules (Claude Code's PowerShell tool) apply only
	// to PowerShell lines of the bash tool ([tools.shell] prefer =
	// "powershell"); their specifier is written like a Bash one.
	FamilyPowerShell = "PowerShell"
)

// ErrUnknownTool is wrapped by the error for a rule naming a capitalised
// tool Reasonix does not have (WebSearch): Claude Code settings
// keep such rules, reported but inert, where a config file refuses them.
var ErrUnknownTool = errors.New("unknown tool family")

// familyOf maps the built-in tool ids a rule may name to the family whose
// specifier syntax the rule uses, so write_file(docs/**) takes a path
// pattern. It is rule syntax only: which rules apply to a call is decided
// by the tool's own description of it (tools.Access).
func familyOf(tool string) (string, bool) {
	switch tool {
	case "bash":
		return FamilyBash, true
	case "read_file", "ls", "glob", "grep":
		return FamilyRead, true
	case "write_file", "edit_file", "multi_edit", "patch", "move_file":
		return FamilyEdit, true
	case "skill":
		return FamilySkill, true
	case "task":
		return FamilyTask, true
	case "web_fetch":
		return FamilyWebFetch, true
	}
	return "", false
}

// familyAlias accepts the capitalised names people bring over from Claude
// Code settings; an unknown capitalised name is an error rather than a rule
// that silently never matches.
func familyAlias(name string) (string, bool) {
	switch name {
	case "Bash":
		return FamilyBash, true
	case "Read", "Glob", "Grep", "LS":
		return FamilyRead, true
	case "Edit", "Write", "MultiEdit", "NotebookEdit":
		return FamilyEdit, true
	case "Skill":
		return FamilySkill, true
	case "Task", "Agent":
		return FamilyTask, true
	case "WebFetch":
		return FamilyWebFetch, true
	case "PowerShell":
		return FamilyPowerShell, true
	}
	return "", false
}

// claudeOneTool maps the Claude Code names of single tools inside a family
// to the Reasonix tool a bare rule naming them applies to: in Claude Code
// a bare Grep deny withholds Grep alone, while a bare Read or Edit covers
// every file reader or writer. ok with an empty id is a tool Reasonix
// does not have (NotebookEdit). A scoped rule (Grep(secrets/**)) stays a
// path rule of its family, so a deny still reaches every reader and the
// sandbox.
func claudeOneTool(name string) (id string, ok bool) {
	switch name {
	case "Grep":
		return "grep", true
	case "Glob":
		return "glob", true
	case "LS":
		return "ls", true
	case "Write":
		return "write_file", true
	case "MultiEdit":
		return "multi_edit", true
	case "NotebookEdit":
		return "", true
	}
	return "", false
}

// ruleFamily returns the rule family of a tool id: Bash, Read, Edit, Skill,
// Task, or the id itself for tools outside the built-in families.
func ruleFamily(tool string) string {
	if f, ok := familyOf(tool); ok {
		return f
	}
	return tool
}

// Rule is one parsed permission rule, `Tool` or `Tool(specifier)`.
type Rule struct {
	// Raw is the rule as written, used in messages and logs.
	Raw string
	// Family is set when the rule names a family (Bash, Read, Edit, Skill,
	// Task); Tool is set when it names one tool id (write_file, mcp__s__t),
	// or one Claude Code tool without a specifier (Grep is grep).
	Family string
	Tool   string
	// Spec is the specifier inside the parentheses; empty matches every call.
	Spec string

	// Bash specifiers: words to match, and whether they are a prefix.
	// partial is set for a trailing * written without a colon or space
	// (Bash(git push*)): the last word then matches by its start too.
	words   []string
	prefix  bool
	partial bool
	// glob is a Bash specifier with a wildcard before its end, as Claude
	// Code writes Bash(git * main) or Bash(* --version): it is matched
	// against the command's words joined by single spaces, each * any
	// run of characters, spaces included. words and prefix are unset.
	glob string
	// Path specifiers: a doublestar pattern, absolute or workspace-relative.
	pattern string
	// WebFetch specifiers: a lower-case host, or the parent domain of a
	// *.host pattern (subdomains set).
	domain     string
	subdomains bool
}

// String returns the rule as written.
func (r Rule) String() string { return r.Raw }

// ParseRule parses one rule. Errors name the rule.
func ParseRule(s string) (Rule, error) {
	raw := strings.TrimSpace(s)
	if raw == "" {
		return Rule{}, fmt.Errorf("empty permission rule")
	}
	name, spec := raw, ""
	hasSpec := false
	if i := strings.IndexByte(raw, '('); i >= 0 {
		if !strings.HasSuffix(raw, ")") {
			return Rule{}, fmt.Errorf("permission rule %q: missing closing parenthesis", raw)
		}
		name, spec = strings.TrimSpace(raw[:i]), strings.TrimSpace(raw[i+1:len(raw)-1])
		hasSpec = true
		if spec == "" {
			return Rule{}, fmt.Errorf("permission rule %q: empty specifier; write %s alone to match every call", raw, name)
		}
	} else if strings.ContainsAny(raw, ")") {
		return Rule{}, fmt.Errorf("permission rule %q: unbalanced parenthesis", raw)
	}
	if !validToolName(name) && !validMCPGlob(name) {
		return Rule{}, fmt.Errorf("permission rule %q: %q is not a tool name", raw, name)
	}
	r := Rule{Raw: raw, Spec: spec}
	switch {
	case strings.HasPrefix(name, "mcp__"):
		// mcp__server__* is every tool of that server, like mcp__server.
		name = strings.TrimSuffix(name, "__*")
		r.Tool = name
	case name[0] >= 'A' && name[0] <= 'Z':
		if id, ok := claudeOneTool(name); ok && !hasSpec {
			if id == "" {
				return Rule{}, fmt.Errorf("permission rule %q: %w %q (Reasonix has no such tool; %s(path) is an Edit path rule)", raw, ErrUnknownTool, name, name)
			}
			r.Tool = id
			break
		}
		f, ok := familyAlias(name)
		if !ok {
			return Rule{}, fmt.Errorf("permission rule %q: %w %q (known: Bash, PowerShell, Read, Edit, Skill, Task, WebFetch, or a tool id such as write_file or mcp__server__tool)", raw, ErrUnknownTool, name)
		}
		r.Family = f
	default:
		// A lowercase tool id; bash is the same as the Bash family.
		if f, ok := familyOf(name); ok && f == FamilyBash {
			r.Family = FamilyBash
		} else {
			r.Tool = name
		}
	}
	if !hasSpec {
		return r, nil
	}
	switch r.specKind() {
	case FamilyBash, FamilyPowerShell:
		if r.Family != FamilyPowerShell && innerWildcard(spec) {
			r.glob = strings.Join(strings.Fields(spec), " ")
			break
		}
		words, prefix, partial, err := parseCommandSpec(spec)
		if err != nil && r.Family == FamilyPowerShell && !strings.HasSuffix(spec, "*") {
			// An exact PowerShell line may hold globs (Get-ChildItem
			// *.go); it is matched as written, never by its words.
			words, prefix, partial, err = strings.Fields(spec), false, false, nil
		}
		if err != nil {
			return Rule{}, fmt.Errorf("permission rule %q: %w", raw, err)
		}
		r.words, r.prefix, r.partial = words, prefix, partial
	case FamilyRead, FamilyEdit:
		pat, err := parsePathSpec(spec)
		if err != nil {
			return Rule{}, fmt.Errorf("permission rule %q: %w", raw, err)
		}
		r.pattern = pat
	case FamilyWebFetch:
		d, sub, err := parseDomainSpec(spec)
		if err != nil {
			return Rule{}, fmt.Errorf("permission rule %q: %w", raw, err)
		}
		r.domain, r.subdomains = d, sub
	default:
		if !doublestar.ValidatePattern(spec) {
			return Rule{}, fmt.Errorf("permission rule %q: invalid pattern %q", raw, spec)
		}
		// A tool outside the built-in families may describe its calls as
		// reads or writes (an MCP or plugin tool); its specifier then
		// matches their paths like Read and Edit specifiers do.
		if pat, err := parsePathSpec(spec); err == nil {
			r.pattern = pat
		}
	}
	return r, nil
}

// specKind is the family whose specifier syntax the rule uses.
func (r Rule) specKind() string {
	if r.Family != "" {
		return r.Family
	}
	return ruleFamily(r.Tool)
}

func validToolName(s string) bool {
	if s == "" {
		return false
	}
	for i, c := range s {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case (c >= '0' && c <= '9') || c == '-' || c == '.':
			if i == 0 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// validMCPGlob accepts mcp__server__*, the form Claude Code settings use
// for every tool of one server.
func validMCPGlob(s string) bool {
	return strings.HasPrefix(s, "mcp__") && strings.HasSuffix(s, "__*") &&
		strings.Count(s, "__") == 2 && validToolName(strings.TrimSuffix(s, "__*"))
}

// parseCommandSpec reads a Bash specifier: `cmd:*` or `cmd *` is a prefix on
// word boundaries, `cmd*` (the form of the spec's sample, Bash(git push*))
// a prefix whose last word also matches by its start, `*` alone matches
// anything, anything else is exact.
func parseCommandSpec(spec string) (words []string, prefix, partial bool, err error) {
	switch {
	case spec == "*":
		return nil, true, false, nil
	case strings.HasSuffix(spec, ":*"):
		spec, prefix = strings.TrimSuffix(spec, ":*"), true
	case strings.HasSuffix(spec, " *"):
		spec, prefix = strings.TrimSuffix(spec, " *"), true
	case strings.HasSuffix(spec, "*") && !strings.HasSuffix(spec, "**"):
		spec, prefix, partial = strings.TrimSuffix(spec, "*"), true, true
	}
	words = strings.Fields(spec)
	if len(words) == 0 {
		return nil, false, false, fmt.Errorf("no command before the wildcard")
	}
	if partial && (strings.HasSuffix(spec, " ") || strings.HasSuffix(spec, ":")) {
		// "git *" was handled above; "git :*"-like leftovers are typos.
		return nil, false, false, fmt.Errorf("a wildcard is only allowed at the end, as %q", strings.Join(words, " ")+":*")
	}
	for _, w := range words {
		if strings.Contains(w, "*") {
			return nil, false, false, fmt.Errorf("a wildcard is only allowed at the end, as %q", strings.Join(words, " ")+":*")
		}
	}
	return words, prefix, partial, nil
}

// innerWildcard reports a Bash specifier with a * that is not one of the
// trailing forms parseCommandSpec reads (`cmd:*`, `cmd *`, `cmd*`). A **
// or a :* before the end is left to parseCommandSpec, which names it as
// the typo it is.
func innerWildcard(spec string) bool {
	if strings.Contains(spec, "**") || strings.Contains(strings.TrimSuffix(spec, ":*"), ":*") {
		return false
	}
	for _, suffix := range []string{":*", " *", "*"} {
		if s, ok := strings.CutSuffix(spec, suffix); ok {
			return strings.Contains(s, "*")
		}
	}
	return strings.Contains(spec, "*")
}

// globMatch reports whether text matches pattern, whose * match any run
// of characters.
func globMatch(pattern, text string) bool {
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(text, parts[0]) {
		return false
	}
	text = text[len(parts[0]):]
	last := len(parts) - 1
	for _, p := range parts[1:last] {
		i := strings.Index(text, p)
		if i < 0 {
			return false
		}
		text = text[i+len(p):]
	}
	return len(text) >= len(parts[last]) && strings.HasSuffix(text, parts[last])
}

// parseDomainSpec reads a WebFetch specifier, domain:HOST as Claude Code
// writes it: HOST alone is that host exactly (any port), *.HOST any
// subdomain of it (not HOST itself), * any host (people write
// WebFetch(domain:*) in Claude Code settings, so it must not be an error).
func parseDomainSpec(spec string) (domain string, sub bool, err error) {
	d, ok := strings.CutPrefix(spec, "domain:")
	if !ok {
		return "", false, fmt.Errorf("a WebFetch specifier is domain:HOST, as WebFetch(domain:example.com)")
	}
	d = strings.ToLower(strings.TrimSpace(d))
	if d == "*" {
		return "*", false, nil
	}
	if rest, ok := strings.CutPrefix(d, "*."); ok {
		d, sub = rest, true
	}
	if d == "" || strings.ContainsAny(d, "*?[]{}/:@ ") && !(strings.HasPrefix(d, "[") && strings.HasSuffix(d, "]")) {
		return "", false, fmt.Errorf("%q is not a host name (a leading *. is the only wildcard)", spec)
	}
	return strings.Trim(d, "[]"), sub, nil
}

// matchURL matches a WebFetch specifier against a URL by its host.
func (r Rule) matchURL(s string) bool {
	if r.Spec == "" {
		return true
	}
	if r.domain == "" {
		return false
	}
	u, err := url.Parse(s)
	if err != nil || u.Hostname() == "" {
		return false
	}
	if r.domain == "*" {
		return true
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if r.subdomains {
		return strings.HasSuffix(host, "."+r.domain)
	}
	return host == r.domain
}

// parsePathSpec checks a path pattern. Patterns starting with / are absolute;
// others are relative to the workspace, and a pattern without a slash matches
// at any depth, as in .gitignore.
func parsePathSpec(spec string) (string, error) {
	if spec == "~" || strings.HasPrefix(spec, "~/") {
		// Claude Code settings write ~/.ssh/** for the user's home.
		home := userHome()
		if home == "" {
			return "", fmt.Errorf("%q: cannot expand ~: the home directory is unknown; use an absolute path", spec)
		}
		spec = filepath.ToSlash(home) + strings.TrimPrefix(spec, "~")
	} else if strings.HasPrefix(spec, "~") {
		return "", fmt.Errorf("%q: only ~/ (your own home) is expanded in path patterns; use an absolute path", spec)
	}
	// Backslashes stay: they escape glob characters (a\[1\].md).
	p := spec
	for _, seg := range strings.Split(p, "/") {
		if seg == ".." {
			return "", fmt.Errorf("%q: '..' is not allowed in path patterns", spec)
		}
	}
	abs := strings.HasPrefix(p, "/")
	p = strings.TrimPrefix(p, "./")
	if !strings.Contains(strings.TrimSuffix(p, "/"), "/") && !abs {
		p = "**/" + p
	}
	if strings.HasSuffix(p, "/") {
		p += "**"
	}
	if abs {
		p = path.Clean(p)
	}
	if !doublestar.ValidatePattern(p) {
		return "", fmt.Errorf("invalid pattern %q", spec)
	}
	return p, nil
}

// userHome is the home directory ~/ in rules expands to: $HOME, else the
// platform's idea of it (%USERPROFILE% on Windows).
func userHome() string {
	if h := os.Getenv("HOME"); h != "" {
		return h
	}
	h, _ := os.UserHomeDir()
	return h
}

// appliesTo reports whether the rule names this tool, ignoring the specifier.
func (r Rule) appliesTo(tool, family string) bool {
	if r.Family != "" {
		return r.Family == family
	}
	if r.Tool == tool {
		return true
	}
	// mcp__server matches every tool of that server.
	return strings.HasPrefix(r.Tool, "mcp__") && strings.Count(r.Tool, "__") == 1 &&
		strings.HasPrefix(tool, r.Tool+"__")
}

// matchWords matches a Bash specifier against one command's words.
// loose compares the command name by its base name, so deny and ask rules
// catch /bin/rm as rm while allow rules only match what is written.
func (r Rule) matchWords(words []string, loose bool) bool {
	if r.glob != "" {
		if len(words) == 0 {
			return false
		}
		if !loose {
			return globMatch(r.glob, strings.Join(words, " "))
		}
		// Deny and ask rules: the command by its base name, and case
		// ignored throughout, which can only match more.
		low := append([]string{baseName(words[0])}, words[1:]...)
		return globMatch(strings.ToLower(r.glob), strings.ToLower(strings.Join(low, " ")))
	}
	if r.Spec == "" || (r.prefix && len(r.words) == 0) {
		return true
	}
	if len(words) < len(r.words) || (!r.prefix && len(words) != len(r.words)) {
		return false
	}
	for i, w := range r.words {
		got := words[i]
		if r.partial && i == len(r.words)-1 {
			if i == 0 && loose {
				got, w = strings.ToLower(baseName(got)), strings.ToLower(baseName(w))
			}
			if !strings.HasPrefix(got, w) {
				return false
			}
			continue
		}
		if i == 0 && loose {
			// Case too: macOS and Windows find /bin/rm as RM.
			if !strings.EqualFold(baseName(got), baseName(w)) {
				return false
			}
			continue
		}
		if got != w {
			return false
		}
	}
	return true
}

// matchPath matches a path specifier against a slash-separated path that is
// workspace-relative, or absolute when it lies outside the workspace.
func (r Rule) matchPath(p string) bool {
	if r.Spec == "" {
		return true
	}
	if r.pattern == "" {
		return false
	}
	ok, _ := doublestar.Match(r.pattern, p)
	if !ok && strings.HasSuffix(r.pattern, "/**") {
		// dir/** also covers dir itself.
		ok = strings.TrimSuffix(r.pattern, "/**") == p
	}
	return ok
}

// foldCase is set where the usual file systems ignore case, so deny and ask
// path rules compare case-insensitively there. A variable so tests can
// turn it on.
var foldCase = runtime.GOOS == "darwin" || runtime.GOOS == "windows"

// matchPathFold is matchPath ignoring case.
func (r Rule) matchPathFold(p string) bool {
	if r.Spec == "" {
		return true
	}
	f := r
	f.pattern = strings.ToLower(r.pattern)
	return f.matchPath(strings.ToLower(p))
}

// matchName matches Skill and Task specifiers (and any other tool's).
func (r Rule) matchName(name string) bool {
	if r.Spec == "" {
		return true
	}
	ok, _ := doublestar.Match(r.Spec, name)
	return ok
}

// cmdName is the name a command is judged by: its base name in lower case,
// because case-insensitive file systems (macOS, Windows) run /bin/rm for
// RM or /BIN/Rm. On Linux such a name is merely not found.
func cmdName(s string) string { return strings.ToLower(baseName(s)) }

func baseName(s string) string {
	if i := strings.LastIndexByte(s, '/'); i >= 0 && i < len(s)-1 {
		return s[i+1:]
	}
	return s
}
