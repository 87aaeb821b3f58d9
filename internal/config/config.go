// Package config loads Reasonix configuration: TOML layers (an explicit
// --config file > the project's reasonix.toml > the user's
// ~/.reasonix/config.toml > built-in defaults), ${VAR} expansion,
// REASONIX_* environment overrides, and errors that name the file, the line
// and the key at fault.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// File names of the configuration layers.
const (
	// ProjectFile is the project layer, looked up in the workspace root.
	ProjectFile = "reasonix.toml"
	// UserFile is the user layer, looked up in the Reasonix home.
	UserFile = "config.toml"
)

// Source labels used in Loaded.Sources for values that did not come from a
// file.
const (
	SourceDefault = "default"
)

// Config is the merged configuration. The toml tags name the keys; the
// other tags drive merging (merge:"concat") and validation (enum, min, max).
// Decode it with Load, not with toml.Decode: durations are written as
// strings such as "120s".
type Config struct {
	// DefaultModel is a provider name, a model name or "provider/model";
	// empty means the first configured provider.
	DefaultModel string `toml:"default_model"`
	// Instructions are extra rules files added to every session's system
	// prompt after AGENTS.md and friends; relative paths resolve against
	// the workspace, "~/" against the user's home, and globs expand.
	Instructions []string `toml:"instructions" merge:"concat"`
	// Language is the language the model is asked to answer in (a tag
	// such as "zh" or "en"); empty falls back to $REASONIX_LANG, then
	// $LANG (see [Config.AnswerLanguage]).
	Language string `toml:"language"`
	// CredentialsStore is where `reasonix setup` keeps API keys: auto (the
	// OS credential store, else a file under the Reasonix home), keyring
	// or file (internal/credentials).
	CredentialsStore string `toml:"credentials_store" enum:"auto,keyring,file"`
	// Theme picks the TUI's colours: "auto" (also empty) reads the
	// terminal's background from COLORFGBG, else "dark" or "light".
	Theme       string      `toml:"theme" enum:",auto,dark,light"`
	Agent       Agent       `toml:"agent"`
	Providers   []Provider  `toml:"providers"`
	Tools       Tools       `toml:"tools"`
	Permissions Permissions `toml:"permissions"`
	Sandbox     Sandbox     `toml:"sandbox"`
	Skills      Skills      `toml:"skills"`
	Validation  Validation  `toml:"validation"`
	// Hooks are the [[hooks]] entries of every layer, concatenated.
	Hooks []Hook `toml:"hooks"`
	// Plugins are MCP servers ([[plugins]]); entries merge across layers
	// by name like providers. Servers from .mcp.json files are read by
	// [MCPServers], not here.
	Plugins []Plugin `toml:"plugins"`
}

// Hook is one [[hooks]] entry: a command run at an event of a run, in
// Claude Code's hook protocol (internal/hooks).
type Hook struct {
	Event   string `toml:"event"`
	Matcher string `toml:"matcher"`
	Command string `toml:"command"`
	// Timeout is in seconds; 0 is the default (60).
	Timeout int `toml:"timeout" min:"0"`
	// Source and Line locate the entry; Project is set when it came from
	// the project's reasonix.toml, whose hooks run only once trusted.
	Source  string `toml:"-"`
	Line    int    `toml:"-"`
	Project bool   `toml:"-"`
}

// Plugin is one [[plugins]] entry: an MCP server Reasonix starts (stdio)
// or connects to (http, sse) and whose tools it offers as
// mcp__<name>__<tool>.
type Plugin struct {
	Name string `toml:"name"`
	// Type is "stdio" (also when empty), "http" (streamable HTTP) or
	// "sse" (the older HTTP+SSE transport).
	Type    string            `toml:"type" enum:",stdio,http,sse"`
	Command string            `toml:"command"`
	Args    []string          `toml:"args"`
	Env     map[string]string `toml:"env"`
	URL     string            `toml:"url"`
	Headers map[string]string `toml:"headers"`
	// Cwd is the stdio server's working directory; relative to the
	// workspace, empty is the workspace.
	Cwd string `toml:"cwd"`
	// Enabled is nil when not written (enabled).
	Enabled *bool `toml:"enabled"`
	// TimeoutMS bounds the handshake and each listing; 0 is the default.
	TimeoutMS int         `toml:"timeout_ms" min:"0"`
	Tools     PluginTools `toml:"tools"`
	// OAuth is the sign-in client of a remote server whose authorization
	// server does not let clients register themselves.
	OAuth PluginOAuth `toml:"oauth"`
}

// PluginOAuth names a client registered by hand with a remote server's
// authorization server, used by `reasonix mcp login`.
type PluginOAuth struct {
	ClientID     string `toml:"client_id"`
	ClientSecret string `toml:"client_secret"`
	// CallbackPort is the fixed port of its registered redirect address
	// (http://localhost:PORT/callback); 0 picks a free one.
	CallbackPort int `toml:"callback_port" min:"0" max:"65535"`
	// Scopes are asked for instead of the ones the server names.
	Scopes []string `toml:"scopes"`
}

// PluginTools filters a server's tools by their remote names (globs).
type PluginTools struct {
	// Allow, when non-empty, offers only the tools it matches.
	Allow []string `toml:"allow"`
	// Deny hides the tools it matches, after Allow.
	Deny []string `toml:"deny"`
}

// On reports whether the plugin is enabled.
func (p Plugin) On() bool { return p.Enabled == nil || *p.Enabled }

// Agent holds the [agent] table: step limits, role models and parallelism.
type Agent struct {
	// MaxSteps and PlannerMaxSteps are step limits; 0 means no limit.
	MaxSteps int `toml:"max_steps" min:"0"`
	// SystemPrompt, or the file SystemPromptFile names (relative to the
	// config file that sets it), replaces the executor's system prompt.
	SystemPrompt     string `toml:"system_prompt"`
	SystemPromptFile string `toml:"system_prompt_file"`
	// ReasoningLanguage asks for visible reasoning in zh or en; auto (or
	// empty) asks nothing.
	ReasoningLanguage string `toml:"reasoning_language" enum:",auto,zh,en"`
	// PlannerModel, when set and different from the executor model, makes
	// runs plan-then-execute.
	PlannerModel    string `toml:"planner_model"`
	PlannerMaxSteps int    `toml:"planner_max_steps" min:"0"`
	SubagentModel   string `toml:"subagent_model"`
	// SubagentModels maps a subagent role name to its model reference.
	SubagentModels map[string]string `toml:"subagent_models"`
	MaxParallel    int               `toml:"max_parallel" min:"1" max:"10"`
	// PlanIsolation keeps parallel plan workers apart: worktree (each in
	// its own git worktree; files outside git), files (steps sharing a
	// file never run together) or none.
	PlanIsolation string `toml:"plan_isolation" enum:"worktree,files,none"`
	GoalMaxTurns  int    `toml:"goal_max_turns" min:"1"`
	// Temperature is nil when not configured, so the provider default
	// applies.
	Temperature *float64 `toml:"temperature"`
	// PlanWriteWindow is how long, after a person approves a plan, the
	// plan's edits run without approval prompts; 0 turns the window off.
	// The decoder refuses negative durations.
	PlanWriteWindow time.Duration `toml:"plan_write_window"`
	// CompactRatio is the share of the context window the reported prompt
	// tokens of a request may reach before the session compacts its
	// history; nil is the default (0.8).
	CompactRatio *float64 `toml:"compact_ratio"`
	// Budget is the most a run (or a goal) may cost, in the models'
	// price currency; nil or 0 is no limit.
	Budget *float64 `toml:"budget"`
}

// Provider is one [[providers]] entry. Entries merge across layers by Name.
type Provider struct {
	Name string `toml:"name"`
	// Kind is "openai" (also when empty) or "scripted".
	Kind    string `toml:"kind"`
	BaseURL string `toml:"base_url"`
	// APIKey is accepted but discouraged: prefer APIKeyEnv so secrets stay
	// out of files.
	APIKey    string            `toml:"api_key"`
	APIKeyEnv string            `toml:"api_key_env"`
	Model     string            `toml:"model"`
	Models    []string          `toml:"models"`
	Default   string            `toml:"default"`
	Headers   map[string]string `toml:"headers"`
	Timeout   time.Duration     `toml:"timeout"`
	// ConnectTimeout, FirstByteTimeout and IdleTimeout bound connecting,
	// waiting for the first byte of an answer and silence inside a stream;
	// zero means the provider's default (10s, 60s, 120s).
	ConnectTimeout   time.Duration `toml:"connect_timeout" min:"0"`
	FirstByteTimeout time.Duration `toml:"first_byte_timeout" min:"0"`
	IdleTimeout      time.Duration `toml:"idle_timeout" min:"0"`
	// ContextWindow is the models' context size in tokens; nil uses the
	// known size of each model, 0 turns the window (and compaction) off.
	ContextWindow   *int   `toml:"context_window" min:"0"`
	Thinking        string `toml:"thinking" enum:",enabled,disabled"`
	ReasoningEffort string `toml:"reasoning_effort"`
	MaxAttempts     int    `toml:"max_attempts" min:"0"`
	// Script is the scripted-provider script; a relative path is resolved
	// against the directory of the file that set it.
	Script string `toml:"script"`
	// Price is what the provider's models cost per million tokens;
	// ModelPrices sets it per model. Unset, DeepSeek's own API gets
	// DeepSeek's published prices and other providers no cost.
	Price       Price            `toml:"price"`
	ModelPrices map[string]Price `toml:"model_prices"`
	// FlattenSchemas advertises deep tool schemas flattened to dot-paths;
	// nil is on for DeepSeek's API and off elsewhere.
	FlattenSchemas *bool `toml:"flatten_schemas"`
}

// Price is a price table: per million tokens, in Currency (default USD).
type Price struct {
	InputHit  *float64 `toml:"input_hit"`
	InputMiss *float64 `toml:"input_miss"`
	Output    *float64 `toml:"output"`
	Currency  string   `toml:"currency"`
}

// set reports whether any part of the price is configured.
func (p Price) set() bool {
	return p.InputHit != nil || p.InputMiss != nil || p.Output != nil
}

// Tools holds the [tools] table.
type Tools struct {
	OutputLimit    int           `toml:"output_limit" min:"1"`
	BashTimeout    time.Duration `toml:"bash_timeout"`
	BashMaxTimeout time.Duration `toml:"bash_max_timeout"`
	// Disabled lists tool names never offered to the model.
	Disabled []string `toml:"disabled"`
	// Enabled, when not empty, lists the only built-in tools offered.
	Enabled []string `toml:"enabled"`
	// BashTimeoutSeconds, when set, replaces bash_timeout and
	// bash_max_timeout; 0 means no time limit.
	BashTimeoutSeconds *int  `toml:"bash_timeout_seconds" min:"0"`
	Shell              Shell `toml:"shell"`
}

// Shell holds [tools.shell]: which shell runs bash commands.
type Shell struct {
	Prefer string `toml:"prefer" enum:"auto,bash,powershell,pwsh"`
	// Path is the shell executable; empty finds it on PATH.
	Path string `toml:"path"`
}

// Permissions holds the [permissions] table. Rule lists accumulate across
// layers so a project can add rules without repeating the user's.
type Permissions struct {
	Mode      string   `toml:"mode" enum:"ask,allow,auto,deny,yolo"`
	Allow     []string `toml:"allow" merge:"concat"`
	Ask       []string `toml:"ask" merge:"concat"`
	Deny      []string `toml:"deny" merge:"concat"`
	Dangerous []string `toml:"dangerous" merge:"concat"`
}

// Sandbox holds the [sandbox] table.
type Sandbox struct {
	WorkspaceRoot string   `toml:"workspace_root"`
	AllowRead     []string `toml:"allow_read" merge:"concat"`
	// DenyRead adds paths (a leading ~/ is the user's home) that neither
	// bash nor the file tools may read, to the built-in credential stores.
	DenyRead   []string `toml:"deny_read" merge:"concat"`
	AllowWrite []string `toml:"allow_write" merge:"concat"`
	Network    bool     `toml:"network"`
	Bash       string   `toml:"bash" enum:"enforce,off"`
}

// Validation holds the [validation] table: the command run after a turn
// that changed files, and when it runs.
type Validation struct {
	// Enabled is nil by default: on for /goal turns (plans always
	// validate), off for plain chat and run turns; true turns it on for
	// those too, false off everywhere but plans.
	Enabled *bool `toml:"enabled"`
	// Command replaces the plan's validation and the detected command.
	Command string `toml:"command"`
	// MaxAttempts bounds the fix-up rounds after one turn (0: 3).
	MaxAttempts int `toml:"max_attempts" min:"0"`
}

// Skills holds the [skills] table.
type Skills struct {
	Paths          []string `toml:"paths" merge:"concat"`
	ExcludedPaths  []string `toml:"excluded_paths" merge:"concat"`
	DisabledSkills []string `toml:"disabled_skills" merge:"concat"`
}

// Default returns the built-in defaults, the bottom layer of every Load.
func Default() *Config {
	return &Config{
		Agent: Agent{
			MaxSteps:        50,
			PlannerMaxSteps: 12,
			MaxParallel:     4,
			PlanIsolation:   "worktree",
			GoalMaxTurns:    20,
			PlanWriteWindow: 10 * time.Minute,
		},
		Tools: Tools{
			OutputLimit:    30000,
			BashTimeout:    120 * time.Second,
			BashMaxTimeout: 600 * time.Second,
			Shell:          Shell{Prefer: "auto"},
		},
		Permissions:      Permissions{Mode: "ask"},
		Sandbox:          Sandbox{Bash: "enforce"},
		CredentialsStore: "auto",
	}
}

// Options tell Load where to look.
type Options struct {
	// Workspace is the project directory holding reasonix.toml; empty
	// skips the project layer.
	Workspace string
	// Home is the Reasonix home; empty means REASONIX_HOME or ~/.reasonix.
	Home string
	// File is an explicit --config file; empty falls back to
	// REASONIX_CONFIG. Unlike the other layers it must exist.
	File string
	// Env reads environment variables; nil means os.Getenv. Tests inject
	// a map so they never see the real environment.
	Env func(string) string
}

// Loaded is the result of Load.
type Loaded struct {
	Config *Config
	// Sources maps a dotted key to where its value came from: a file
	// path, "default", or "env NAME". Provider fields are keyed
	// "providers.<name>.<field>"; map entries "<map key>.<entry>";
	// concatenated lists name every contributing file, joined by " + ".
	Sources map[string]string
	// Files lists the files read, lowest precedence first.
	Files []string
	// Home is the resolved Reasonix home.
	Home string
	// Getenv reads a variable: the environment, then the working
	// directory's .env (never REASONIX_* from there). Use it for
	// api_key_env lookups; it never changes the process environment, so
	// child processes do not see .env values.
	Getenv func(string) string
	// DotEnv is the .env file read, or ""; DotEnvSkipped the numbers of
	// its lines that were not KEY=VALUE and were left out.
	DotEnv        string
	DotEnvSkipped []int
	// Held are the project file's settings not applied because nobody
	// trusted the project (`reasonix trust`), in the file's order.
	Held []HeldKey
	// HeldDigest identifies the held settings' values, for
	// TrustProjectAsShown.
	HeldDigest string
	// TrustErr, when set, is why the trust file (ProjectTrustFile) could
	// not be read, a corrupt one included: Held holds every setting then,
	// and the caller should say so, naming the file.
	TrustErr error
	// settingsAllow and projectTrusted answer SettingsAllowApplies.
	settingsAllow  map[string]map[string]bool
	projectTrusted bool
	// fromDot says whether Getenv takes a variable from DotEnv.
	fromDot func(string) bool
}

// FromDotEnv reports whether [Loaded.Getenv] reads name from the
// working directory's .env (set there, and not in the environment).
func (l *Loaded) FromDotEnv(name string) bool {
	return l.fromDot != nil && l.fromDot(name)
}

// Home returns the Reasonix home: REASONIX_HOME when set; on Windows
// %AppData%\reasonix (unless only an older ~/.reasonix exists); else
// ~/.reasonix.
func Home(env func(string) string) (string, error) {
	return home(env, runtime.GOOS)
}

func home(env func(string) string, goos string) (string, error) {
	if env == nil {
		env = os.Getenv
	}
	if h := env("REASONIX_HOME"); h != "" {
		return filepath.Clean(h), nil
	}
	uh, err := os.UserHomeDir()
	if goos == "windows" {
		if app := env("APPDATA"); app != "" {
			legacy := filepath.Join(uh, ".reasonix")
			if _, lerr := os.Stat(legacy); err == nil && lerr == nil {
				if _, aerr := os.Stat(filepath.Join(app, "reasonix")); aerr != nil {
					return legacy, nil
				}
			}
			return filepath.Join(app, "reasonix"), nil
		}
	}
	if err != nil {
		return "", fmt.Errorf("config: cannot locate the home directory (set REASONIX_HOME): %w", err)
	}
	return filepath.Join(uh, ".reasonix"), nil
}

// layerFile is one candidate file and whether its absence is an error.
type layerFile struct {
	path     string
	required bool
}

// Load reads and merges the configuration layers, applies environment
// overrides and validates the result. Every problem found in the files is
// reported, each naming its file, line and key.
func Load(opts Options) (*Loaded, error) {
	env := opts.Env
	if env == nil {
		env = os.Getenv
	}
	home := opts.Home
	if home == "" {
		h, err := Home(env)
		if err != nil {
			return nil, err
		}
		home = h
	}
	layers := []layerFile{{path: filepath.Join(home, UserFile)}}
	if opts.Workspace != "" {
		layers = append(layers, layerFile{path: filepath.Join(opts.Workspace, ProjectFile)})
	}
	flag := opts.File
	if flag == "" {
		flag = env("REASONIX_CONFIG")
	}
	if flag != "" {
		layers = append(layers, layerFile{path: flag, required: true})
	}

	var errs []error
	dotPath := ""
	var dotSkipped []int
	var fromDot func(string) bool
	own := env
	if opts.Workspace != "" {
		p := filepath.Join(opts.Workspace, DotEnvFile)
		dot, skipped, derrs := readDotEnv(p)
		errs = append(errs, derrs...)
		if dot != nil {
			dotPath, dotSkipped = p, skipped
		}
		base := env
		fromDot = func(k string) bool { return dot[k] != "" && base(k) == "" && !strings.HasPrefix(k, "REASONIX_") }
		env = withDotEnv(env, dot)
	}
	m := newMerger(env)
	m.ownEnv = own
	if opts.Workspace != "" {
		m.project, m.home = filepath.Join(opts.Workspace, ProjectFile), home
	}
	seen := map[string]bool{}
	for _, lf := range layers {
		abs, err := filepath.Abs(lf.path)
		if err != nil {
			abs = lf.path
		}
		// The flag may name the project file itself; reading it twice would
		// only duplicate list entries.
		if seen[abs] {
			continue
		}
		seen[abs] = true
		data, err := os.ReadFile(lf.path)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && !lf.required {
				continue
			}
			errs = append(errs, fmt.Errorf("config: %w", err))
			continue
		}
		m.files = append(m.files, lf.path)
		errs = append(errs, m.mergeFile(lf.path, data)...)
	}
	if m.project != "" && !m.projectSeen && len(errs) == 0 {
		// No reasonix.toml: the project's Claude Code settings files may
		// still hold allow rules.
		held, herrs := m.holdUntrusted(m.project, nil, nil, nil)
		m.held, errs = held, herrs
	}
	if len(errs) == 0 {
		errs = append(errs, m.applyEnv()...)
	}
	if len(errs) == 0 {
		errs = append(errs, m.validate()...)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return &Loaded{Config: m.cfg, Sources: m.sources, Files: m.files, Home: home, Getenv: env, DotEnv: dotPath, DotEnvSkipped: dotSkipped, Held: m.held, HeldDigest: m.heldDigest, TrustErr: m.trustErr,
		settingsAllow: m.settingsAllow, projectTrusted: m.projectTrusted, fromDot: fromDot}, nil
}

// SettingsAllowApplies reports whether an allow rule of a project's Claude
// Code settings file (.claude/settings.json or settings.local.json; not
// the user's own) applies, given the file's path and the rule as written:
// only once the project is trusted as it is (its held allow rules are in
// Held until then), or when the person added that rule themselves
// (AllowAlways). A file Load did not read (one a workspace_root elsewhere
// brings) applies only in a project trusted as it is.
func (l *Loaded) SettingsAllowApplies(file, rule string) bool {
	abs, err := filepath.Abs(file)
	if err != nil {
		return false
	}
	if rules, ok := l.settingsAllow[abs]; ok {
		return rules[rule]
	}
	return l.projectTrusted
}
