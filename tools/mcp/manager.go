package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/tools"
)

// Options configure a [Manager].
type Options struct {
	// Root is the workspace: a stdio server's default working directory.
	Root string
	// LogDir receives one <server>.log of stderr per stdio server; ""
	// discards stderr.
	LogDir string
	// Environ is the environment the basics are taken from (os.Environ()).
	Environ []string
	// Notify reports a problem once (a server that failed, a tool left
	// out); nil drops them.
	Notify func(string)
	// Version is the client version sent in the handshake.
	Version string
	// MaxTools caps the tools taken from one server (default 100).
	MaxTools int
	// MaxSchema caps one tool's input schema in bytes (default 32 KiB).
	MaxSchema int
	// Restarts caps how often a crashed stdio server is restarted in a
	// row (default 3); Backoff is the first delay, doubled each time
	// (default 500ms).
	Restarts int
	Backoff  time.Duration
	// Elicit, when set, puts a server's request for input (MCP
	// elicitation, see [ElicitRequest]) to a person and returns the
	// answer; an accepted form's values are checked against the form
	// before they are sent, and asked for again when refused. An error
	// cancels the request. Nil declares no elicitation capability, so
	// servers do not ask.
	Elicit func(ctx context.Context, r ElicitRequest) (events.ElicitAnswer, error)
	// Secrets are the values (API keys) an answer to a server's form may
	// never carry: a server that asks for "DEEPSEEK_API_KEY" gets the
	// person's answer refused and asked again, whatever the person typed.
	Secrets *tools.Secrets
	// ElicitURL declares URL-mode elicitation too: Elicit can show a
	// person an address to open in a browser, which nothing opens without
	// the person's accept. Without it such requests are declined with a
	// notice.
	ElicitURL bool
	// Tokens keeps the OAuth sign-ins of remote servers; nil keeps none
	// (a server that asks for one is then left wanting it).
	Tokens TokenStore
	// SignIn, when set, lets a remote server that asks for an OAuth
	// sign-in get one now: it is handed the address a person must open
	// (a browser) and must return at once; the manager waits for the
	// browser's return on a loopback listener. Nil (a headless run)
	// leaves such a server in StateSignIn, so nothing waits for a person.
	SignIn func(server, url string)
	// Relogin ignores the stored sign-ins, so a server that asks signs in
	// again (`reasonix mcp login`).
	Relogin bool
	// SignInHint says how a person gives a server its sign-in, for
	// messages; nil says to run `reasonix mcp login NAME`.
	SignInHint func(server string) string
}

// Manager owns the MCP servers of one process. Its methods are safe for
// concurrent use.
type Manager struct {
	opts    Options
	servers []*server // sorted by name

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	closers []io.Closer
	closed  bool
	// snapshot is set once a session took its tools: a server that
	// first comes up after that is announced like a changed list.
	snapshot atomic.Bool
}

// New returns a manager of the given servers; nothing starts until
// [Manager.Start]. A later definition of a name is ignored (the caller
// puts the winning source first).
func New(cfgs []Config, opts Options) *Manager {
	if opts.MaxTools <= 0 {
		opts.MaxTools = 100
	}
	if opts.MaxSchema <= 0 {
		opts.MaxSchema = 32 << 10
	}
	if opts.Restarts <= 0 {
		opts.Restarts = 3
	}
	if opts.Backoff <= 0 {
		opts.Backoff = 500 * time.Millisecond
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &Manager{opts: opts, ctx: ctx, cancel: cancel}
	seen := map[string]string{}
	for _, c := range cfgs {
		// Names that differ only where ToolName replaces characters
		// ("git.hub", "git_hub") would give their tools one name, and
		// one server's permission rules would cover the other's tools.
		key := Normalize(c.Name)
		if prev, ok := seen[key]; ok {
			if prev != c.Name && opts.Notify != nil {
				opts.Notify(fmt.Sprintf("MCP server %s (%s) is left out: its tools would be named as server %s's are (%s__…)", c.Name, c.Source, prev, Prefix+key))
			}
			continue
		}
		seen[key] = c.Name
		s := &server{cfg: c.clone(), m: m, ready: make(chan struct{}), wake: make(chan struct{})}
		switch {
		case c.Disabled:
			s.state = StateDisabled
		case c.NeedsTrust:
			s.state = StateUntrusted
		default:
			s.state = StateStarting
		}
		m.servers = append(m.servers, s)
	}
	sort.Slice(m.servers, func(i, j int) bool { return m.servers[i].cfg.Name < m.servers[j].cfg.Name })
	return m
}

// Start connects every enabled, trusted server in the background and
// returns at once.
func (m *Manager) Start() {
	for _, s := range m.servers {
		if s.state == StateStarting {
			m.start(s)
		}
	}
}

func (m *Manager) start(s *server) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed || s.started {
		return
	}
	s.started = true
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		s.run(m.ctx)
	}()
}

// Trust starts a server that waited for a person's trust. It reports
// false when there is no such server or it is disabled.
func (m *Manager) Trust(name string) bool {
	s := m.server(name)
	if s == nil {
		return false
	}
	s.mu.Lock()
	if s.state != StateUntrusted {
		s.mu.Unlock()
		return s.state != StateDisabled
	}
	s.state = StateStarting
	s.mu.Unlock()
	m.start(s)
	return true
}

// SignIn connects a remote server that waits for a sign-in (or failed)
// again, this time signing in through open, which is handed the
// authorization address a person must visit (see Options.SignIn); a kept
// sign-in is not used. It returns at once: notices report the outcome, and
// a server that comes up is announced like one trusted mid-session.
func (m *Manager) SignIn(name string, open func(server, url string)) error {
	s := m.server(name)
	switch {
	case s == nil:
		return fmt.Errorf("no MCP server named %q", name)
	case s.cfg.kind() == TypeStdio:
		return fmt.Errorf("MCP server %s runs as a local command: it has no OAuth sign-in", name)
	case s.authHeader():
		return fmt.Errorf("MCP server %s is given an Authorization header in its config: it has no OAuth sign-in", name)
	}
	s.mu.Lock()
	if s.state != StateSignIn && s.state != StateFailed {
		st := s.state
		s.mu.Unlock()
		return fmt.Errorf("MCP server %s is %s, not waiting for a sign-in", name, st)
	}
	s.signIn, s.relogin = open, true
	s.state, s.err = StateStarting, nil
	s.changedLocked()
	s.mu.Unlock()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return errors.New("the MCP servers are closed")
	}
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		s.run(m.ctx)
	}()
	return nil
}

// signInHint says how a person gives the server its sign-in.
func (m *Manager) signInHint(server string) string {
	if m.opts.SignInHint != nil {
		return m.opts.SignInHint(server)
	}
	return "run `reasonix mcp login " + server + "`"
}

// Untrusted lists the servers that wait for a person's trust.
func (m *Manager) Untrusted() []Config {
	var out []Config
	for _, s := range m.servers {
		s.mu.Lock()
		if s.state == StateUntrusted {
			out = append(out, s.cfg.clone())
		}
		s.mu.Unlock()
	}
	return out
}

// Wait blocks until every started server has finished its first handshake
// and listing (or failed), each bounded by its own timeout, or ctx ends.
func (m *Manager) Wait(ctx context.Context) error {
	for _, s := range m.servers {
		s.mu.Lock()
		started := s.started
		s.mu.Unlock()
		if !started {
			continue
		}
		select {
		case <-s.ready:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Tools is the tools of every running server, sorted by name: the
// snapshot a session opens with.
func (m *Manager) Tools() []tools.Tool {
	m.snapshot.Store(true)
	var out []tools.Tool
	for _, s := range m.servers {
		s.mu.Lock()
		if s.state == StateRunning {
			for _, t := range s.tools {
				out = append(out, t)
			}
		}
		s.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out
}

// Changes describes the servers whose tool lists changed (or that came
// up after the first snapshot) since the last call, for the next user
// turn; "" when none did. Each change is reported once. [Manager.Tools]
// does not consume them: a subagent's session opening must not swallow
// what the conversation has not been told; a conversation that opens
// drains them (it has the current list).
func (m *Manager) Changes() string {
	var lines []string
	for _, s := range m.servers {
		s.mu.Lock()
		if s.toolsChanged {
			s.toolsChanged = false
			lines = append(lines, fmt.Sprintf("MCP server %s now offers: %s", s.cfg.Name, strings.Join(toolNames(s.tools), ", ")))
		}
		s.mu.Unlock()
	}
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n(The tools of this session stay as they are, so its prompt cache holds; the new list is offered from the next session or the next compaction.)"
}

// relist re-reads a server's lists after it announced a change.
func (m *Manager) relist(s *server, sess *sdk.ClientSession) {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.wg.Add(1)
	m.mu.Unlock()
	go func() {
		defer m.wg.Done()
		// The notification may come before the handshake has finished
		// (server-everything sends one first): the first listing after
		// the handshake reads the new list anyway.
		s.mu.Lock()
		live := s.sess == sess && sess != nil
		s.mu.Unlock()
		if !live {
			return
		}
		if err := s.list(m.ctx, sess, true); err != nil && m.ctx.Err() == nil {
			m.notify(fmt.Sprintf("MCP server %s: re-listing its tools failed: %v", s.cfg.Name, err))
		}
	}()
}

// Status describes one server for `reasonix mcp list` and /mcp.
type Status struct {
	Name   string
	Type   string
	Source string
	State  State
	// Err says why a server failed.
	Err       string
	Tools     []ToolInfo
	Prompts   []PromptInfo
	Resources []ResourceInfo
	// Target is the command line or URL.
	Target string
	// SignedIn says the connection uses an OAuth sign-in.
	SignedIn bool
}

// ToolInfo is a listed tool.
type ToolInfo struct {
	Name, Remote, Description string
	ReadOnly                  bool
}

// PromptInfo is a listed prompt, offered as the slash command
// /mcp__<server>__<prompt>.
type PromptInfo struct {
	Server, Name, Command, Description string
	Arguments                          []PromptArg
}

// PromptArg is one prompt argument.
type PromptArg struct {
	Name, Description string
	Required          bool
}

// ResourceInfo is a listed resource, referenced as @<server>:<uri>.
type ResourceInfo struct {
	Server, URI, Name, Description, MIMEType string
}

// Statuses describes every configured server, sorted by name.
func (m *Manager) Statuses() []Status {
	out := make([]Status, 0, len(m.servers))
	for _, s := range m.servers {
		out = append(out, s.status())
	}
	return out
}

func (s *server) status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Name: s.cfg.Name, Type: s.cfg.kind(), Source: s.cfg.Source, State: s.state}
	if s.cfg.kind() == TypeStdio {
		st.Target = strings.Join(append([]string{s.cfg.Command}, s.cfg.Args...), " ")
	} else {
		st.Target = s.cfg.URL
	}
	if s.err != nil && (s.state == StateFailed || s.state == StateSignIn) {
		st.Err = s.err.Error()
	}
	st.SignedIn = s.state == StateRunning && s.auth != nil && s.auth.source() != nil
	for _, t := range s.tools {
		st.Tools = append(st.Tools, ToolInfo{Name: t.name, Remote: t.remote, Description: t.desc, ReadOnly: t.readOnly})
	}
	for _, p := range s.prompts {
		st.Prompts = append(st.Prompts, promptInfo(s.cfg.Name, p))
	}
	for _, r := range s.resources {
		st.Resources = append(st.Resources, ResourceInfo{Server: s.cfg.Name, URI: r.URI, Name: r.Name, Description: r.Description, MIMEType: r.MIMEType})
	}
	return st
}

func promptInfo(server string, p *sdk.Prompt) PromptInfo {
	pi := PromptInfo{Server: server, Name: p.Name, Command: ToolName(server, p.Name), Description: p.Description}
	for _, a := range p.Arguments {
		if a != nil {
			pi.Arguments = append(pi.Arguments, PromptArg{Name: a.Name, Description: a.Description, Required: a.Required})
		}
	}
	return pi
}

// Status describes one server; ok is false when there is none.
func (m *Manager) Status(name string) (Status, bool) {
	s := m.server(name)
	if s == nil {
		return Status{}, false
	}
	return s.status(), true
}

func (m *Manager) server(name string) *server {
	for _, s := range m.servers {
		if s.cfg.Name == name {
			return s
		}
	}
	return nil
}

// LogPath is where a stdio server's stderr goes ("" when discarded).
func (m *Manager) LogPath(name string) string {
	if m.opts.LogDir == "" {
		return ""
	}
	return filepath.Join(m.opts.LogDir, Normalize(name)+".log")
}

func (m *Manager) openLog(name string) (*os.File, error) {
	p := m.LogPath(name)
	if p == "" {
		return os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	}
	if err := os.MkdirAll(m.opts.LogDir, 0o700); err != nil {
		return nil, fmt.Errorf("log directory: %w", err)
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("log: %w", err)
	}
	fmt.Fprintf(f, "--- %s start\n", time.Now().Format(time.RFC3339))
	return f, nil
}

func (m *Manager) addCloser(c io.Closer) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.closers = append(m.closers, c)
}

func (m *Manager) notify(msg string) {
	if m.opts.Notify != nil {
		m.opts.Notify(msg)
	}
}

// Close stops every server and waits for their goroutines.
func (m *Manager) Close() {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return
	}
	m.closed = true
	m.mu.Unlock()
	for _, s := range m.servers {
		s.mu.Lock()
		sess := s.sess
		s.mu.Unlock()
		if sess != nil {
			_ = sess.Close()
		}
	}
	m.cancel()
	m.wg.Wait()
	m.mu.Lock()
	for _, c := range m.closers {
		_ = c.Close()
	}
	m.closers = nil
	m.mu.Unlock()
}
