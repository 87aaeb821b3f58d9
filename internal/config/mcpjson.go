package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// MCPFile is the project file of MCP servers in Claude Code's schema.
const MCPFile = ".mcp.json"

// Problem says what a merged plugin lacks, or "" when it is usable.
func (p Plugin) Problem() string {
	if strings.Contains(p.Name, "__") {
		// Tools are offered as mcp__<server>__<tool>: server "github__x"
		// would name tools mcp__github__x__…, which the rules of server
		// "github" (mcp__github, mcp__github__*) cover.
		return "has \"__\" in its name, which would make its tools read as another server's (mcp__<server>__<tool>) and fall under that server's permission rules; rename it"
	}
	switch p.Type {
	case "", "stdio":
		if strings.TrimSpace(p.Command) == "" {
			return "has no command: a stdio server needs command = \"...\""
		}
	case "http", "sse":
		if strings.TrimSpace(p.URL) == "" {
			return fmt.Sprintf("is of type %q but has no url", p.Type)
		}
		if n := p.OAuth.CallbackPort; n < 0 || n > 65535 {
			return fmt.Sprintf("has oauth callback port %d: want 1..65535, or none for a free one", n)
		}
	default:
		return fmt.Sprintf("has unknown type %q: want \"stdio\", \"http\" or \"sse\"", p.Type)
	}
	return ""
}

// MCPServer is one MCP server definition with where it came from.
type MCPServer struct {
	Plugin
	// Source is the file that defined it.
	Source string
	// Project is set for servers from the project's .mcp.json or
	// reasonix.toml (and the project entries of ~/.claude.json): a cloned
	// repository wrote them, so they start only once a person trusted
	// them.
	Project bool
}

// mcpJSON is Claude Code's .mcp.json: {"mcpServers": {name: server}}.
type mcpJSON struct {
	MCPServers map[string]mcpJSONServer `json:"mcpServers"`
}

type mcpJSONServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
	Cwd     string            `json:"cwd"`
	// Disabled is not Claude Code's; some clients write it.
	Disabled bool `json:"disabled"`
	// OAuth is Claude Code's client registered by hand (its secret is
	// never in the file).
	OAuth struct {
		ClientID     string `json:"clientId"`
		CallbackPort int    `json:"callbackPort"`
		// Scopes is one space-separated string.
		Scopes string `json:"scopes"`
	} `json:"oauth"`
}

// claudeJSON is the part of ~/.claude.json that holds MCP servers: user
// scope at the top, local scope per project path.
type claudeJSON struct {
	MCPServers map[string]mcpJSONServer `json:"mcpServers"`
	Projects   map[string]struct {
		MCPServers map[string]mcpJSONServer `json:"mcpServers"`
	} `json:"projects"`
}

// MCPServers lists the MCP servers of a run: the [[plugins]] of cfg, then
// the project's .mcp.json and the user's ~/.claude.json (user scope and
// this project's local scope), with ${VAR} and ${VAR:-default} expanded
// through env in command, args, env, url and headers. A name defined in
// reasonix.toml wins over the JSON files; the project file wins over
// ~/.claude.json. userHome "" skips ~/.claude.json. Errors name the file
// and the server.
//
// Variables whose names are in withheld expand to nothing in JSON-file
// servers: a repository's .mcp.json must not be able to hand a provider
// key to a program it names.
func MCPServers(cfg *Config, sources map[string]string, workspace, userHome string, env func(string) string, withheld []string) ([]MCPServer, error) {
	if env == nil {
		env = os.Getenv
	}
	var out []MCPServer
	seen := map[string]bool{}
	projectFile := ""
	if workspace != "" {
		projectFile = filepath.Join(workspace, ProjectFile)
	}
	for _, p := range cfg.Plugins {
		src := sources["plugins."+p.Name+".name"]
		// A [[plugins]] entry of the project's reasonix.toml is a command
		// the repository wrote, started outside the sandbox: it needs
		// trust as a .mcp.json server does.
		out = append(out, MCPServer{Plugin: p, Source: src, Project: projectFile != "" && sameFile(src, projectFile)})
		seen[p.Name] = true
	}
	isWithheld := func(name string) bool {
		return slices.ContainsFunc(withheld, func(w string) bool { return strings.EqualFold(w, name) })
	}
	guarded := func(name string) string {
		if isWithheld(name) {
			return ""
		}
		return env(name)
	}
	var errs []error
	add := func(file string, servers map[string]mcpJSONServer, project bool) {
		for _, name := range sortedServerNames(servers) {
			if seen[name] {
				continue
			}
			seen[name] = true
			s := servers[name]
			p := Plugin{Name: name, Type: s.Type, Command: s.Command, Args: s.Args, Env: s.Env,
				URL: s.URL, Headers: s.Headers, Cwd: s.Cwd,
				OAuth: PluginOAuth{ClientID: s.OAuth.ClientID, CallbackPort: s.OAuth.CallbackPort, Scopes: strings.Fields(s.OAuth.Scopes)}}
			if p.Type == "streamable-http" || p.Type == "streamableHttp" {
				p.Type = "http"
			}
			if p.Type == "" && p.Command == "" && p.URL != "" {
				p.Type = "http"
			}
			if s.Disabled {
				off := false
				p.Enabled = &off
			}
			// Unset variables are reported, not fatal: the server may
			// still work (an optional header), and the person sees why
			// it does not.
			for _, u := range unsetPluginRefs(&p, guarded, isWithheld) {
				errs = append(errs, fmt.Errorf("%s: mcpServers.%s: %s", file, name, u))
			}
			expandPlugin(&p, guarded)
			if msg := p.Problem(); msg != "" {
				errs = append(errs, fmt.Errorf("%s: mcpServers.%s: server %s", file, name, msg))
				continue
			}
			out = append(out, MCPServer{Plugin: p, Source: file, Project: project})
		}
	}
	if workspace != "" {
		path := filepath.Join(workspace, MCPFile)
		var f mcpJSON
		if ok, err := readJSON(path, &f); err != nil {
			errs = append(errs, err)
		} else if ok {
			add(path, f.MCPServers, true)
		}
	}
	if userHome != "" {
		path := filepath.Join(userHome, ".claude.json")
		var f claudeJSON
		if ok, err := readJSON(path, &f); err != nil {
			errs = append(errs, err)
		} else if ok {
			if pr, ok := f.Projects[workspace]; ok && workspace != "" {
				add(path, pr.MCPServers, true)
			}
			add(path, f.MCPServers, false)
		}
	}
	return out, errors.Join(errs...)
}

func sortedServerNames(m map[string]mcpJSONServer) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// readJSON decodes path into v; a missing file is (false, nil). A syntax
// error names the file and its line.
func readJSON(path string, v any) (bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("config: %w", err)
	}
	if err := json.Unmarshal(data, v); err != nil {
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			return false, fmt.Errorf("%s:%d: %s", path, lineOf(data, se.Offset), se.Error())
		case errors.As(err, &te):
			return false, fmt.Errorf("%s:%d: key %q: expected %s, got %s", path, lineOf(data, te.Offset), te.Field, te.Type, te.Value)
		}
		return false, fmt.Errorf("%s: %w", path, err)
	}
	return true, nil
}

func lineOf(data []byte, off int64) int {
	off = min(max(off, 0), int64(len(data)))
	return bytes.Count(data[:off], []byte("\n")) + 1
}

// unsetPluginRefs describes the ${VAR} references (without a default) of
// a server definition that env leaves empty, field by field; a name in
// withheld is said to be withheld rather than unset.
func unsetPluginRefs(p *Plugin, env func(string) string, withheld func(string) bool) []string {
	var out []string
	check := func(field, v string) {
		for _, name := range unsetRefs(v, env) {
			if withheld(name) {
				out = append(out, fmt.Sprintf("%s uses ${%s}, a provider key, which a JSON-file server never gets (it expands to nothing)", field, name))
			} else {
				out = append(out, fmt.Sprintf("%s uses ${%s}, which is not set (it expands to nothing)", field, name))
			}
		}
	}
	check("command", p.Command)
	check("url", p.URL)
	check("cwd", p.Cwd)
	for i, a := range p.Args {
		for _, name := range unsetRefs(a, env) {
			if _, own := p.Env[name]; !own {
				check(fmt.Sprintf("args[%d]", i), "${"+name+"}")
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(p.Env)) {
		check("env."+k, p.Env[k])
	}
	for _, k := range slices.Sorted(maps.Keys(p.Headers)) {
		check("headers."+k, p.Headers[k])
	}
	return out
}

// expandPlugin expands ${VAR} in the fields a server definition may
// reference variables in. An argument's ${VAR} that the environment leaves
// empty but the server's own env block defines stays as written: the
// server expands it (mcp-remote's "--header", "Authorization:${AUTH}"
// with AUTH in env, as PostHog's setup has it).
func expandPlugin(p *Plugin, env func(string) string) {
	p.Command = Expand(p.Command, env)
	p.URL = Expand(p.URL, env)
	p.Cwd = Expand(p.Cwd, env)
	argEnv := func(name string) string {
		if v := env(name); v != "" {
			return v
		}
		if _, own := p.Env[name]; own {
			return "${" + name + "}"
		}
		return ""
	}
	for i, a := range p.Args {
		p.Args[i] = Expand(a, argEnv)
	}
	for k, v := range p.Env {
		p.Env[k] = Expand(v, env)
	}
	for k, v := range p.Headers {
		p.Headers[k] = Expand(v, env)
	}
}
