package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/reasonix/reasonix/internal/text"
)

// State is where a server stands.
type State string

// Server states.
const (
	StateStarting  State = "starting"
	StateRunning   State = "running"
	StateFailed    State = "failed"
	StateUntrusted State = "untrusted"
	StateDisabled  State = "disabled"
	// StateSignIn is a remote server that wants an OAuth sign-in this
	// process could not give (`reasonix mcp login NAME` gives it).
	StateSignIn State = "needs sign-in"
)

// server is one configured server and its current connection.
type server struct {
	cfg Config
	m   *Manager

	mu    sync.Mutex
	state State
	err   error
	sess  *sdk.ClientSession
	// cancelConn ends the context the connection was opened with and
	// releases what it held (a sign-in's loopback listener).
	cancelConn context.CancelFunc
	// auth is the connection's OAuth handler (nil for stdio or a server
	// given an Authorization header).
	auth *connAuth
	// signIn and relogin are Manager.SignIn's: who signs this server in
	// and whether a kept sign-in is passed over.
	signIn    func(server, url string)
	relogin   bool
	tools     []*Tool
	prompts   []*sdk.Prompt
	resources []*sdk.Resource
	// toolsChanged is set when the server announced a new tool list that
	// sessions already running have not been told about.
	toolsChanged bool
	// everUp is set once the server was running (a restart is not news).
	everUp  bool
	started bool
	ready   chan struct{} // closed when the first attempt has ended
	// wake is closed and replaced whenever state or sess changes, so a
	// call can wait for a restart (see awaitSession).
	wake      chan struct{}
	readyOnce sync.Once
	// calls counts the tool calls in flight by session, so a request for
	// input can name the session it serves (see callSession); opened are
	// the URL requests the person accepted, by elicitation id, with their
	// address (see expectCompletion).
	calls  map[string]int
	opened map[string]string
}

func (s *server) markReady() { s.readyOnce.Do(func() { close(s.ready) }) }

// session is the live connection, or an error that says why there is none.
func (s *server) session() (*sdk.ClientSession, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sess == nil {
		if s.err != nil {
			return nil, fmt.Errorf("MCP server %s is not running: %v", s.cfg.Name, s.err)
		}
		return nil, fmt.Errorf("MCP server %s is not running (%s)", s.cfg.Name, s.state)
	}
	return s.sess, nil
}

// awaitSession is the live connection other than dead (a connection a
// call just found closed). While a crashed stdio server is being
// restarted it waits for the new process, bounded by ctx and by the
// longest backoff plus the handshake timeout, so the call after a crash
// goes to the restarted server instead of failing.
func (s *server) awaitSession(ctx context.Context, dead *sdk.ClientSession) (*sdk.ClientSession, error) {
	limit := time.NewTimer(s.m.opts.Backoff<<s.m.opts.Restarts + s.cfg.timeout())
	defer limit.Stop()
	for {
		s.mu.Lock()
		sess, state, started, wake := s.sess, s.state, s.started, s.wake
		s.mu.Unlock()
		if sess != nil && sess != dead {
			return sess, nil
		}
		if sess == nil && (state != StateStarting || !started) {
			return s.session()
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-limit.C:
			return s.session()
		}
	}
}

// changedLocked wakes the calls waiting in awaitSession; s.mu is held.
func (s *server) changedLocked() {
	close(s.wake)
	s.wake = make(chan struct{})
}

func (s *server) setState(st State, err error) {
	s.mu.Lock()
	s.state, s.err = st, err
	s.changedLocked()
	s.mu.Unlock()
}

// run connects, lists, and waits for the connection to end; a stdio
// server that stops after it was up is restarted with backoff, at most
// m.opts.Restarts times in a row (a server that stayed up for a minute
// starts the count again). A server whose first handshake fails is failed.
func (s *server) run(ctx context.Context) {
	restarts := 0
	for {
		sess, err := s.connect(ctx)
		if err != nil {
			if ctx.Err() != nil {
				s.setState(StateFailed, ctx.Err())
				s.markReady()
				return
			}
			// Reported before a waiting run goes on, so the notice comes
			// ahead of the answer.
			if errors.Is(err, ErrSignIn) {
				s.setState(StateSignIn, err)
				s.m.notify(fmt.Sprintf("MCP server %s %v; its tools are unavailable until then", s.cfg.Name, err))
			} else {
				s.setState(StateFailed, err)
				s.m.notify(fmt.Sprintf("MCP server %s failed: %v%s", s.cfg.Name, err, s.logHint()))
			}
			s.markReady()
			return
		}
		up := time.Now()
		s.markReady()
		// Closing the manager ends the connection whatever its transport.
		stop := context.AfterFunc(ctx, func() { _ = sess.Close() })
		err = sess.Wait()
		stop()
		if err == nil {
			err = errors.New("connection closed")
		}
		if time.Since(up) > time.Minute {
			restarts = 0
		}
		restart := ctx.Err() == nil && s.cfg.kind() == TypeStdio && restarts < s.m.opts.Restarts
		s.mu.Lock()
		// The connection goes and the restart is announced in one step: a
		// call that found the connection closed (awaitSession) must never
		// see no connection while the state still says running, or it
		// fails instead of waiting for the restarted server.
		if s.sess == sess {
			s.sess = nil
		}
		if restart {
			s.state, s.err = StateStarting, fmt.Errorf("restarting after: %v", err)
		}
		s.changedLocked()
		if s.cancelConn != nil {
			s.cancelConn()
			s.cancelConn = nil
		}
		s.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		if !restart {
			s.setState(StateFailed, fmt.Errorf("stopped: %v", err))
			s.m.notify(fmt.Sprintf("MCP server %s stopped (%v); its tools are unavailable%s", s.cfg.Name, err, s.logHint()))
			return
		}
		restarts++
		delay := s.m.opts.Backoff << (restarts - 1)
		s.m.notify(fmt.Sprintf("MCP server %s stopped (%v); restarting in %s (attempt %d of %d)", s.cfg.Name, err, delay, restarts, s.m.opts.Restarts))
		select {
		case <-ctx.Done():
			return
		case <-time.After(delay):
		}
	}
}

// connect starts or reaches the server, completes the handshake and lists
// its tools, prompts and resources, each within the server's timeout.
func (s *server) connect(ctx context.Context) (*sdk.ClientSession, error) {
	s.setState(StateStarting, nil)
	// The SSE transport ties its event stream to the context Connect is
	// given, so that context lives as long as the connection; the
	// handshake's bound is a timer that cancels it only while Connect
	// has not returned, and that stops while a person signs in.
	cctx, cancel := context.WithCancel(ctx)
	clock := newPausable(s.cfg.timeout(), cancel)
	var authAsked atomic.Bool // a 401 or 403 answer with WWW-Authenticate
	transport, a, release, err := s.transport(cctx, &authAsked, clock)
	if err != nil {
		clock.finish()
		cancel()
		return nil, err
	}
	end := func() { cancel(); release() }
	opts := &sdk.ClientOptions{
		// No roots or sampling: the client offers nothing a server could
		// use to reach into the session. Elicitation (when the front end
		// can ask a person) carries only what the person types or picks.
		Capabilities: &sdk.ClientCapabilities{},
		ToolListChangedHandler: func(_ context.Context, req *sdk.ToolListChangedRequest) {
			s.m.relist(s, req.Session)
		},
	}
	if s.m.opts.Elicit != nil {
		opts.ElicitationHandler = s.elicit
		if s.m.opts.ElicitURL {
			// Both modes declared; the SDK would infer the form mode only.
			opts.Capabilities.Elicitation = &sdk.ElicitationCapabilities{Form: &sdk.FormElicitationCapabilities{}, URL: &sdk.URLElicitationCapabilities{}}
			opts.ElicitationCompleteHandler = s.elicitationComplete
		}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "reasonix", Version: s.m.opts.Version}, opts)
	sess, err := client.Connect(cctx, transport, nil)
	timedOut := clock.finish()
	if timedOut && err == nil {
		_ = sess.Close()
		err = context.DeadlineExceeded
	}
	if err != nil {
		end()
		var syn *json.SyntaxError
		switch {
		case a != nil && a.wanted.Load() && a.signIn == nil:
			return nil, fmt.Errorf("%w: %s", ErrSignIn, s.m.signInHint(s.cfg.Name))
		case a != nil && a.wanted.Load() && ctx.Err() == nil:
			return nil, fmt.Errorf("sign-in: %w", err)
		case timedOut:
			return nil, fmt.Errorf("no handshake within %s", s.cfg.timeout())
		case errors.As(err, &syn) || strings.Contains(err.Error(), "invalid character"):
			return nil, fmt.Errorf("it wrote something that is not JSON-RPC on stdout (a stdio server may only print protocol messages there; logs belong on stderr): %w", err)
		case authAsked.Load() && a == nil && s.authHeader():
			return nil, fmt.Errorf("the server refused the Authorization header of its config (it answered the handshake with an HTTP authorization challenge): %w", err)
		case authAsked.Load():
			return nil, fmt.Errorf("%w: %s", ErrSignIn, s.m.signInHint(s.cfg.Name))
		}
		return nil, fmt.Errorf("handshake: %w", err)
	}
	if err := s.list(ctx, sess, false); err != nil {
		_ = sess.Close()
		end()
		return nil, err
	}
	s.mu.Lock()
	s.sess, s.state, s.err, s.cancelConn, s.auth = sess, StateRunning, nil, end, a
	s.changedLocked()
	// A server that first comes up after a session took its tools (one
	// trusted mid-session) is announced to that session's next turn.
	// (A front end that has not run a turn yet reopens its session
	// instead, which takes the announcement back.)
	first := !s.everUp
	s.everUp = true
	if first && s.m.snapshot.Load() && len(s.tools) > 0 {
		s.toolsChanged = true
	}
	n := len(s.tools)
	s.mu.Unlock()
	switch {
	case a != nil && a.signIn != nil && a.asked.Load():
		s.m.notify(fmt.Sprintf("Signed in to MCP server %s; it is running (%d tools)", s.cfg.Name, n))
	case first && s.cfg.NeedsTrust:
		// A person just said yes to it: confirm it came up.
		s.m.notify(fmt.Sprintf("MCP server %s is running (%d tools)", s.cfg.Name, n))
	}
	return sess, nil
}

// list reads the server's tools (and, when it offers them, prompts and
// resources) within its timeout. changed marks a re-listing after a
// tools/list_changed notification.
func (s *server) list(ctx context.Context, sess *sdk.ClientSession, changed bool) error {
	lctx, cancel := context.WithTimeout(ctx, s.cfg.timeout())
	defer cancel()
	caps := sess.InitializeResult().Capabilities
	var remote []*sdk.Tool
	if caps == nil || caps.Tools != nil {
		for t, err := range sess.Tools(lctx, nil) {
			if err != nil {
				if errors.Is(lctx.Err(), context.DeadlineExceeded) {
					return fmt.Errorf("tools/list: no answer within %s", s.cfg.timeout())
				}
				return fmt.Errorf("tools/list: %w", err)
			}
			remote = append(remote, t)
		}
	}
	var prompts []*sdk.Prompt
	var resources []*sdk.Resource
	if caps != nil && caps.Prompts != nil {
		for p, err := range sess.Prompts(lctx, nil) {
			if err != nil {
				break // prompts are optional; tools still work
			}
			prompts = append(prompts, p)
		}
	}
	if caps != nil && caps.Resources != nil {
		for r, err := range sess.Resources(lctx, nil) {
			if err != nil {
				break
			}
			resources = append(resources, r)
		}
	}
	adapted, notices := s.adapt(remote)
	for _, n := range notices {
		s.m.notify(n)
	}
	s.mu.Lock()
	old := toolNames(s.tools)
	s.tools, s.prompts, s.resources = adapted, prompts, resources
	now := toolNames(adapted)
	changed = changed && !slices.Equal(old, now)
	if changed {
		s.toolsChanged = true
	}
	s.mu.Unlock()
	if changed {
		// The person sees it at once; the model in its next user turn.
		s.m.notify(fmt.Sprintf("MCP server %s changed its tools (now: %s); the model is told in its next turn, and a new session or the next compaction offers them", s.cfg.Name, strings.Join(now, ", ")))
	}
	return nil
}

func toolNames(ts []*Tool) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = t.name
	}
	return out
}

// adapt turns listed tools into [Tool]s, sorted by name: filtered by the
// allow and deny lists, a tool whose schema is too big or whose name
// clashes dropped, and at most MaxTools kept, each drop with a notice.
func (s *server) adapt(remote []*sdk.Tool) ([]*Tool, []string) {
	var out []*Tool
	var notices []string
	seen := map[string]string{}
	sort.Slice(remote, func(i, j int) bool { return remote[i].Name < remote[j].Name })
	for _, rt := range remote {
		if rt == nil || rt.Name == "" || !s.offered(rt.Name) {
			continue
		}
		name := ToolName(s.cfg.Name, rt.Name)
		if prev, dup := seen[name]; dup {
			notices = append(notices, fmt.Sprintf("MCP server %s: tools %q and %q have the same name %s; %q is left out", s.cfg.Name, prev, rt.Name, name, rt.Name))
			continue
		}
		schema, err := encodeSchema(rt.InputSchema)
		if err != nil {
			notices = append(notices, fmt.Sprintf("MCP server %s: tool %q has an unusable input schema (%v); it is left out", s.cfg.Name, rt.Name, err))
			continue
		}
		if len(schema) > s.m.opts.MaxSchema {
			notices = append(notices, fmt.Sprintf("MCP server %s: tool %q has a %d-byte input schema, over the %d-byte limit; it is left out", s.cfg.Name, rt.Name, len(schema), s.m.opts.MaxSchema))
			continue
		}
		seen[name] = rt.Name
		desc := rt.Description
		if desc == "" && rt.Annotations != nil {
			desc = rt.Annotations.Title
		}
		out = append(out, &Tool{srv: s, name: name, remote: rt.Name, desc: text.Clip(strings.TrimSpace(desc), maxDescription),
			schema: schema, readOnly: rt.Annotations != nil && rt.Annotations.ReadOnlyHint})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	if n := s.m.opts.MaxTools; len(out) > n {
		notices = append(notices, fmt.Sprintf("MCP server %s offers %d tools; only the first %d by name are used (narrow them with tools.allow in its [[plugins]] entry)", s.cfg.Name, len(out), n))
		out = out[:n]
	}
	return out, notices
}

// offered applies the server's allow and deny globs to a remote name.
func (s *server) offered(name string) bool {
	match := func(globs []string) bool {
		return slices.ContainsFunc(globs, func(g string) bool {
			ok, _ := path.Match(g, name)
			return ok || g == name
		})
	}
	if len(s.cfg.Allow) > 0 && !match(s.cfg.Allow) {
		return false
	}
	return !match(s.cfg.Deny)
}

// encodeSchema re-encodes an input schema with sorted keys, so the bytes
// are the same every time the server is listed.
func encodeSchema(v any) (json.RawMessage, error) {
	if v == nil {
		return json.RawMessage(`{"type":"object"}`), nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		return nil, err
	}
	m, ok := generic.(map[string]any)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	if _, ok := m["type"]; !ok {
		m["type"] = "object"
	}
	return json.Marshal(m)
}

// transport builds the connection the server's type names; authAsked is
// set when an HTTP answer asks for authorization. A remote server not
// given an Authorization header gets an OAuth handler (see newAuth);
// release frees what the handler holds.
func (s *server) transport(ctx context.Context, authAsked *atomic.Bool, clock *pausable) (t sdk.Transport, a *connAuth, release func(), err error) {
	release = func() {}
	if open, _ := s.signer(); s.cfg.kind() != TypeStdio && !s.authHeader() && (s.m.opts.Tokens != nil || open != nil) {
		if a, release, err = s.newAuth(clock); err != nil {
			return nil, nil, nil, err
		}
	}
	t, err = s.baseTransport(ctx, authAsked, a)
	if err != nil {
		release()
		return nil, nil, nil, err
	}
	return t, a, release, nil
}

// authHeader reports a configured Authorization header: the person gave
// the server its credentials, so no sign-in is offered.
func (s *server) authHeader() bool {
	for k := range s.cfg.Headers {
		if strings.EqualFold(k, "Authorization") {
			return true
		}
	}
	return false
}

func (s *server) baseTransport(ctx context.Context, authAsked *atomic.Bool, a *connAuth) (sdk.Transport, error) {
	switch s.cfg.kind() {
	case TypeStdio:
		cmd := exec.CommandContext(ctx, s.cfg.Command, s.cfg.Args...)
		cmd.Env = serverEnv(s.m.opts.Environ, s.cfg.Env)
		cmd.Dir = s.m.opts.Root
		if s.cfg.Cwd != "" {
			cmd.Dir = s.cfg.Cwd
			if !filepath.IsAbs(s.cfg.Cwd) {
				cmd.Dir = filepath.Join(s.m.opts.Root, s.cfg.Cwd)
			}
		}
		log, err := s.m.openLog(s.cfg.Name)
		if err != nil {
			return nil, err
		}
		cmd.Stderr = log
		// The log stays open for the process's life; exec closes its copy
		// when Wait returns, ours when the manager closes.
		s.m.addCloser(log)
		cmd.WaitDelay = 2 * time.Second
		return &sdk.CommandTransport{Command: cmd, TerminateDuration: 2 * time.Second}, nil
	case TypeHTTP:
		t := &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.httpClient(authAsked, nil), MaxRetries: 2}
		if a != nil {
			t.OAuthHandler = a
		}
		return t, nil
	case TypeSSE:
		// The SDK gives this older transport no OAuth handler field.
		return &sdk.SSEClientTransport{Endpoint: s.cfg.URL, HTTPClient: s.httpClient(authAsked, a)}, nil
	}
	return nil, fmt.Errorf("unknown type %q", s.cfg.Type)
}

func (s *server) httpClient(authAsked *atomic.Bool, a *connAuth) *http.Client {
	var base http.RoundTripper = http.DefaultTransport
	if a != nil {
		base = authTransport{h: a, base: base}
	}
	return &http.Client{Transport: headerTransport{headers: s.cfg.Headers, base: base, authAsked: authAsked}}
}

// headerTransport adds the configured headers to every request and notes
// an answer that asks for authorization.
type headerTransport struct {
	headers   map[string]string
	base      http.RoundTripper
	authAsked *atomic.Bool
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(h.headers) > 0 {
		r = r.Clone(r.Context())
		for k, v := range h.headers {
			r.Header.Set(k, v)
		}
	}
	resp, err := h.base.RoundTrip(r)
	if err == nil && h.authAsked != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) &&
		resp.Header.Get("WWW-Authenticate") != "" {
		h.authAsked.Store(true)
	}
	return resp, err
}

// basicEnv are the variables a server inherits from Reasonix's own
// environment: what finding programs, a home, a locale and a temp
// directory need, nothing that carries a credential.
var basicEnv = []string{
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "TERM", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE",
	"TMPDIR", "TZ", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME",
	// Windows
	"SYSTEMROOT", "SYSTEMDRIVE", "WINDIR", "COMSPEC", "PATHEXT", "TEMP", "TMP", "USERPROFILE",
	"USERNAME", "APPDATA", "LOCALAPPDATA", "PROGRAMDATA", "PROGRAMFILES", "PROGRAMFILES(X86)",
	"HOMEDRIVE", "HOMEPATH", "NUMBER_OF_PROCESSORS", "PROCESSOR_ARCHITECTURE",
}

// serverEnv is a stdio server's environment: the basics from environ and
// the server's own env entries, which win.
func serverEnv(environ []string, extra map[string]string) []string {
	out := make([]string, 0, len(basicEnv)+len(extra))
	for _, kv := range environ {
		name, _, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		if _, own := extra[name]; own {
			continue
		}
		if slices.ContainsFunc(basicEnv, func(b string) bool {
			if runtime.GOOS == "windows" {
				return strings.EqualFold(b, name)
			}
			return b == name
		}) {
			out = append(out, kv)
		}
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		out = append(out, k+"="+extra[k])
	}
	return out
}

// logHint points a failure notice at the server's stderr log: only a stdio
// server has one, and only when the manager keeps logs.
func (s *server) logHint() string {
	p := s.m.LogPath(s.cfg.Name)
	if s.cfg.kind() != TypeStdio || p == "" {
		return ""
	}
	return " (stderr log: " + p + ")"
}
