// Package web is the browser front end of `reasonix serve`: a small
// page embedded in the binary, an HTTP API for commands (open a session,
// send a turn, answer a question, interrupt) and the event stream as
// server-sent events with resume after a reconnect. Like the TUI it sees
// the core only through events and its own small [Engine] and [Host]
// interfaces.
//
// Every request, the page itself included, must carry the server's
// secret (a same-site cookie the link's one-time token is exchanged for)
// and, when the browser sends one, an Origin equal to the server's own;
// the Host header must name the server, which stops DNS-rebinding pages
// from reaching a loopback port.
package web

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/store"
)

//go:embed static
var static embed.FS

// Engine is what one browser session drives: one conversation
// (orchestrator.Engine satisfies it).
type Engine interface {
	Send(ctx context.Context, text string) error
	Plan(ctx context.Context, text string) error
	Goal(ctx context.Context, text string) error
	Answerer
	Interrupt()
	SessionID() string
	Commands() []events.Command
	Close()
}

// Answerer takes a person's answers to the questions of the event
// stream, by id.
type Answerer interface {
	// Answer answers the approval request id with one of its choices.
	Answer(id, choice, reason string) error
	// AnswerQuestion answers the ask tool's question id.
	AnswerQuestion(id, answer string) error
	// AnswerElicitation answers an MCP server's request for input id.
	AnswerElicitation(id string, a events.ElicitAnswer) error
}

// Host opens conversations on the assembled application; every engine
// publishes to the sink the server was given (see [Server.Publish]).
// As an [Answerer] it takes the answers to questions that belong to no
// open session (those asked at start-up, before any page connected).
type Host interface {
	Answerer
	Open() (Engine, error)
	// Resume reopens a saved conversation and publishes its history.
	Resume(id string) (Engine, error)
	Sessions() ([]store.Summary, error)
	Workspace() string
}

// TokenCookie is the cookie the page keeps the token in.
const TokenCookie = "reasonix_token"

// Options configure a server.
type Options struct {
	Version string
	// Token is the link's token, which opens the page once; empty makes
	// one. The link is printed and handed to a browser, whose command
	// line any process of the person's can read, so it is not the secret
	// requests carry afterwards: its first use sets a cookie with another
	// one, and spends it.
	Token string
	// MaxEvents bounds the event log replayed to a page that reconnects
	// (default 200,000).
	MaxEvents int
}

// Server serves the page, the API and the event stream.
type Server struct {
	opts Options
	host Host
	// secret is what the cookie (or an Authorization: Bearer header)
	// carries; it is never printed.
	secret string
	// linkUsed is set once the link's token was exchanged for the
	// cookie.
	linkUsed atomic.Bool
	// base is the random path the page and the API live under, and the
	// cookie's Path: a browser sends a host's cookies to each of its
	// ports, so without it any page the person opens on 127.0.0.1 (a dev
	// server a command started, another user's service) would be sent the
	// secret. "" serves at the root (tests).
	base  string
	log   *eventLog
	plans *planQueue

	mu       sync.Mutex
	sessions map[string]*session
	// owner maps a subagent or plan session to the browser session it
	// works for.
	owner map[string]string
	// planning is the session whose /plan is running.
	planning string
	planMu   sync.Mutex

	// turns are the running prompts; Close waits for them.
	turns sync.WaitGroup
	ctx   context.Context
	stop  context.CancelFunc
}

type session struct {
	id  string
	eng Engine

	mu      sync.Mutex
	running bool
}

// New returns a server for host.
func New(host Host, opts Options) (*Server, error) {
	if opts.Token == "" {
		b := make([]byte, 16)
		if _, err := rand.Read(b); err != nil {
			return nil, fmt.Errorf("make token: %w", err)
		}
		opts.Token = hex.EncodeToString(b)
	}
	if len(opts.Token) < 16 {
		return nil, errors.New("the token must have at least 16 characters")
	}
	b := make([]byte, 40)
	if _, err := rand.Read(b); err != nil {
		return nil, fmt.Errorf("make secret: %w", err)
	}
	if opts.MaxEvents <= 0 {
		opts.MaxEvents = 200_000
	}
	ctx, stop := context.WithCancel(context.Background())
	s := &Server{opts: opts, host: host, secret: hex.EncodeToString(b[:32]), base: "/r-" + hex.EncodeToString(b[32:]), log: newEventLog(opts.MaxEvents), sessions: map[string]*session{},
		owner: map[string]string{}, ctx: ctx, stop: stop}
	s.plans = &planQueue{s: s, pending: map[string]chan events.PlanDecision{}}
	return s, nil
}

// Token returns the one-time token the page's URL carries.
func (s *Server) Token() string { return s.opts.Token }

// Close interrupts every running turn, waits for them and closes the
// sessions.
func (s *Server) Close() {
	s.stop()
	s.mu.Lock()
	all := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		all = append(all, ss)
	}
	s.mu.Unlock()
	for _, ss := range all {
		ss.eng.Interrupt()
	}
	s.plans.closeAll()
	s.turns.Wait()
	for _, ss := range all {
		ss.eng.Close()
	}
	s.log.close()
}

// Publish records an event of any engine the host opened, for every page
// to see. Events of subagents are tagged with the browser session they
// work for ("root").
//
// A question a person must answer that belongs to no browser session (an
// MCP server's or the hooks' trust question asked at start-up, a request
// for input whose session is unknown) is kept with root "", as are
// notices and errors of no session (such as "MCP server X is running"):
// the page shows them whatever session it shows, and a page that
// connects later gets them from the log.
func (s *Server) Publish(e events.Event) {
	root := s.route(e)
	if root == "" && !(e.Session == "" && sessionless(e.Type)) && !asks(e.Type) {
		return
	}
	s.log.add(wire{Event: e, Root: root})
}

// asks reports whether events of type t put a question to a person or
// close one: these reach the page whatever session they carry, so no
// question is left waiting for an answer no page can give.
func asks(t events.Type) bool {
	switch t {
	case events.ApprovalRequest, events.ApprovalResolved, events.QuestionRequest, events.QuestionResolved,
		events.ElicitationRequest, events.ElicitationResolved:
		return true
	}
	return false
}

// sessionless reports whether an event of type t without a session is
// the page's to show (the process's own notices and errors).
func sessionless(t events.Type) bool {
	return t == events.Notice || t == events.Error
}

// wire is one event as the page receives it.
type wire struct {
	events.Event
	// Root is the browser session the event belongs to.
	Root string `json:"root"`
	// Seq is the event's position in the log (also the SSE id).
	Seq uint64 `json:"seq"`
	// Fields of the server's own events.
	Plan     *events.Plan     `json:"plan,omitempty"`
	PlanID   string           `json:"plan_id,omitempty"`
	Decision string           `json:"decision,omitempty"`
	Sessions []store.Summary  `json:"sessions,omitempty"`
	Commands []events.Command `json:"commands,omitempty"`
}

// The server's own event types, beside the core's.
const (
	evSessionOpen  events.Type = "session_open"
	evTurnStart    events.Type = "turn_start"
	evTurnDone     events.Type = "turn_done"
	evPlanRequest  events.Type = "plan_request"
	evPlanResolved events.Type = "plan_resolved"
)

func (s *Server) route(e events.Event) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.sessions[e.Session]; ok {
		return e.Session
	}
	if r, ok := s.owner[e.Session]; ok {
		return r
	}
	if e.Parent != "" {
		r := e.Parent
		if rr, ok := s.owner[r]; ok {
			r = rr
		}
		if _, ok := s.sessions[r]; ok {
			s.owner[e.Session] = r
			return r
		}
	}
	if s.planning != "" && e.Session != "" {
		s.owner[e.Session] = s.planning
		return s.planning
	}
	return ""
}

// Handler returns the HTTP handler: page, API and events, all behind the
// token and origin checks.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	sub, _ := fs.Sub(static, "static")
	files := http.FileServerFS(sub)
	mux.HandleFunc("GET /{$}", s.index)
	mux.Handle("GET /static/", http.StripPrefix("/static/", files))
	mux.HandleFunc("GET /api/events", s.events)
	mux.HandleFunc("GET /api/sessions", s.listSessions)
	mux.HandleFunc("POST /api/sessions", s.openSession)
	mux.HandleFunc("POST /api/sessions/{id}/resume", s.resumeSession)
	mux.HandleFunc("POST /api/sessions/{id}/prompt", s.prompt)
	mux.HandleFunc("POST /api/sessions/{id}/interrupt", s.interrupt)
	mux.HandleFunc("GET /api/sessions/{id}/commands", s.commands)
	mux.HandleFunc("POST /api/approvals/{id}", s.answer)
	mux.HandleFunc("POST /api/questions/{id}", s.answerQuestion)
	mux.HandleFunc("POST /api/elicitations/{id}", s.answerElicitation)
	mux.HandleFunc("POST /api/plans/{id}", s.decidePlan)
	mux.HandleFunc("GET /api/files", s.files)
	return s.guard(mux)
}

// guard checks the Host, the Origin and the token of every request.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		w.Header().Set("X-Frame-Options", "DENY")
		if !s.hostAllowed(r) {
			http.Error(w, "forbidden: unknown Host", http.StatusForbidden)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
			http.Error(w, "forbidden: cross-origin request", http.StatusForbidden)
			return
		}
		secret := ""
		if c, err := r.Cookie(TokenCookie); err == nil {
			secret = c.Value
		} else if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
			secret = strings.TrimPrefix(h, "Bearer ")
		}
		known := subtle.ConstantTimeCompare([]byte(secret), []byte(s.secret)) == 1
		if link := r.URL.Query().Get("token"); link != "" {
			if r.Method != http.MethodGet || r.URL.Path != "/" {
				http.Error(w, "unauthorized: the link's token only opens the page", http.StatusUnauthorized)
				return
			}
			if !known {
				if !s.redeem(link) {
					http.Error(w, "unauthorized: this link was used already (it opens the page once, in one browser) or is wrong; restart reasonix serve for a new one", http.StatusUnauthorized)
					return
				}
				// The link's token is spent; the cookie carries another
				// secret, which no command line or history shows.
				http.SetCookie(w, &http.Cookie{Name: TokenCookie, Value: s.secret, Path: s.base + "/", HttpOnly: true,
					SameSite: http.SameSiteStrictMode})
			}
			// Out of the address bar and the history.
			http.Redirect(w, r, s.base+"/", http.StatusSeeOther)
			return
		}
		if !known {
			http.Error(w, "unauthorized: open the URL reasonix serve printed (it carries the token)", http.StatusUnauthorized)
			return
		}
		if s.base != "" {
			rest, ok := strings.CutPrefix(r.URL.Path, s.base)
			if !ok || (rest != "" && rest[0] != '/') {
				http.NotFound(w, r)
				return
			}
			if rest == "" {
				http.Redirect(w, r, s.base+"/", http.StatusSeeOther)
				return
			}
			r = r.Clone(r.Context())
			r.URL.Path, r.URL.RawPath = rest, ""
		}
		next.ServeHTTP(w, r)
	})
}

// redeem spends the link's token: true the first time it is given right.
func (s *Server) redeem(link string) bool {
	if subtle.ConstantTimeCompare([]byte(link), []byte(s.opts.Token)) != 1 {
		return false
	}
	return s.linkUsed.CompareAndSwap(false, true)
}

// hostAllowed accepts loopback names and literal addresses: a page on
// another site that resolves its own name to 127.0.0.1 sends that name.
func (s *Server) hostAllowed(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.Host)
	if err != nil {
		host = r.Host
	}
	if host == "localhost" {
		return true
	}
	return net.ParseIP(strings.Trim(host, "[]")) != nil
}

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	b, err := static.ReadFile("static/index.html")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'")
	_, _ = w.Write(b)
}

// events streams the log as server-sent events from the position the
// page last saw (Last-Event-ID, or ?since=), then follows it.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	var since uint64
	if v := r.Header.Get("Last-Event-ID"); v != "" {
		fmt.Sscan(v, &since)
	} else if v := r.URL.Query().Get("since"); v != "" {
		fmt.Sscan(v, &since)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	tick := time.NewTicker(15 * time.Second)
	defer tick.Stop()
	for {
		batch, first, wake := s.log.after(since)
		if since != 0 && first > since+1 {
			// The page missed events that left the log: it starts over
			// from what is kept.
			fmt.Fprintf(w, "event: reset\ndata: {}\n\n")
		}
		for _, e := range batch {
			fmt.Fprintf(w, "id: %d\ndata: %s\n\n", e.seq, e.data)
			since = e.seq
		}
		if len(batch) > 0 {
			fl.Flush()
		}
		select {
		case <-wake:
		case <-tick.C:
			fmt.Fprint(w, ": keep-alive\n\n")
			fl.Flush()
		case <-r.Context().Done():
			return
		case <-s.ctx.Done():
			return
		}
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (s *Server) listSessions(w http.ResponseWriter, _ *http.Request) {
	saved, err := s.host.Sessions()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	s.mu.Lock()
	open := make([]string, 0, len(s.sessions))
	for id := range s.sessions {
		open = append(open, id)
	}
	s.mu.Unlock()
	sort.Strings(open)
	if saved == nil {
		saved = []store.Summary{}
	}
	writeJSON(w, map[string]any{"open": open, "saved": saved, "workspace": s.host.Workspace(), "version": s.opts.Version})
}

func (s *Server) add(eng Engine) *session {
	ss := &session{id: eng.SessionID(), eng: eng}
	s.mu.Lock()
	s.sessions[ss.id] = ss
	s.mu.Unlock()
	s.log.add(wire{Event: events.Event{Type: evSessionOpen, Session: ss.id}, Root: ss.id, Commands: eng.Commands()})
	return ss
}

func (s *Server) openSession(w http.ResponseWriter, _ *http.Request) {
	eng, err := s.host.Open()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	ss := s.add(eng)
	writeJSON(w, map[string]string{"id": ss.id})
}

func (s *Server) resumeSession(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	s.mu.Lock()
	_, open := s.sessions[id]
	s.mu.Unlock()
	if open {
		writeJSON(w, map[string]string{"id": id})
		return
	}
	// The session is registered before its history is published, so the
	// History event reaches the page.
	s.mu.Lock()
	s.owner[id] = id
	s.mu.Unlock()
	eng, err := s.host.Resume(id)
	s.mu.Lock()
	delete(s.owner, id)
	s.mu.Unlock()
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	ss := s.add(eng)
	writeJSON(w, map[string]string{"id": ss.id})
}

func (s *Server) session(w http.ResponseWriter, r *http.Request) *session {
	s.mu.Lock()
	ss := s.sessions[r.PathValue("id")]
	s.mu.Unlock()
	if ss == nil {
		http.Error(w, "no open session "+r.PathValue("id"), http.StatusNotFound)
	}
	return ss
}

// maxBody bounds a command's JSON body (a pasted file in a prompt).
const maxBody = 8 << 20

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, maxBody)).Decode(v); err != nil {
		http.Error(w, "bad JSON body: "+err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

// prompt starts a turn: "/plan TEXT" plans (the plan dialog approves it),
// "/goal TEXT" pursues a goal, anything else is a chat turn (with skills
// and commands as the engine runs them). It answers at once; the turn's
// progress and end are events.
func (s *Server) prompt(w http.ResponseWriter, r *http.Request) {
	ss := s.session(w, r)
	if ss == nil {
		return
	}
	var body struct {
		Text string `json:"text"`
	}
	if !decode(w, r, &body) {
		return
	}
	text := strings.TrimSpace(body.Text)
	if text == "" {
		http.Error(w, "empty prompt", http.StatusBadRequest)
		return
	}
	ss.mu.Lock()
	if ss.running {
		ss.mu.Unlock()
		http.Error(w, "a turn is already running in this session", http.StatusConflict)
		return
	}
	ss.running = true
	ss.mu.Unlock()
	s.turns.Add(1)
	go func() {
		defer s.turns.Done()
		s.log.add(wire{Event: events.Event{Type: evTurnStart, Session: ss.id, Text: text}, Root: ss.id})
		err := s.run(ss, text)
		ss.mu.Lock()
		ss.running = false
		ss.mu.Unlock()
		done := events.Event{Type: evTurnDone, Session: ss.id}
		switch {
		case errors.Is(err, context.Canceled):
			done.Text = "interrupted"
		case errors.Is(err, events.ErrPlanRejected):
			done.Text = "plan rejected; nothing was changed"
		case err != nil:
			done.Error = err.Error()
		}
		s.log.add(wire{Event: done, Root: ss.id})
	}()
	w.WriteHeader(http.StatusAccepted)
}

func (s *Server) run(ss *session, text string) error {
	ctx := s.ctx
	switch cmd, arg, _ := strings.Cut(text, " "); cmd {
	case "/plan":
		s.planMu.Lock()
		defer s.planMu.Unlock()
		s.mu.Lock()
		s.planning = ss.id
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			s.planning = ""
			s.mu.Unlock()
		}()
		return ss.eng.Plan(ctx, arg)
	case "/goal":
		return ss.eng.Goal(ctx, arg)
	}
	return ss.eng.Send(ctx, text)
}

func (s *Server) interrupt(w http.ResponseWriter, r *http.Request) {
	if ss := s.session(w, r); ss != nil {
		ss.eng.Interrupt()
		w.WriteHeader(http.StatusNoContent)
	}
}

func (s *Server) commands(w http.ResponseWriter, r *http.Request) {
	if ss := s.session(w, r); ss != nil {
		cmds := ss.eng.Commands()
		if cmds == nil {
			cmds = []events.Command{}
		}
		writeJSON(w, cmds)
	}
}

// answer answers an approval question; the engine's broker checks the id
// and that the choice was offered, so the page can widen nothing the gate
// did not offer a person.
func (s *Server) answer(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Session string `json:"session"`
		Choice  string `json:"choice"`
		Reason  string `json:"reason"`
	}
	if !decode(w, r, &body) {
		return
	}
	s.deliver(w, body.Session, func(eng Answerer) error {
		return eng.Answer(r.PathValue("id"), body.Choice, body.Reason)
	})
}

// deliver gives an answer to the engine of the browser session named id,
// or to the host when the question belongs to no open session: 409 when
// the answer is refused (no such question, a choice not offered), else
// 204.
func (s *Server) deliver(w http.ResponseWriter, id string, give func(Answerer) error) {
	var to Answerer = s.host
	s.mu.Lock()
	if ss := s.sessions[id]; ss != nil {
		to = ss.eng
	}
	s.mu.Unlock()
	if err := give(to); err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// answerQuestion answers the ask tool's question: text, or skip, which
// tells the model to go on under an assumption it states.
func (s *Server) answerQuestion(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Session string `json:"session"`
		Text    string `json:"text"`
		Skip    bool   `json:"skip"`
	}
	if !decode(w, r, &body) {
		return
	}
	answer := strings.TrimSpace(body.Text)
	if body.Skip {
		answer = events.QuestionSkipped
	}
	if answer == "" {
		http.Error(w, "empty answer", http.StatusBadRequest)
		return
	}
	s.deliver(w, body.Session, func(eng Answerer) error {
		return eng.AnswerQuestion(r.PathValue("id"), answer)
	})
}

// answerElicitation answers an MCP server's request for input: accept
// with the form's values, decline or cancel. Values the form refuses
// are a 409 whose text says why, and the request stays open.
func (s *Server) answerElicitation(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Session string         `json:"session"`
		Action  string         `json:"action"`
		Content map[string]any `json:"content"`
	}
	if !decode(w, r, &body) {
		return
	}
	s.deliver(w, body.Session, func(eng Answerer) error {
		return eng.AnswerElicitation(r.PathValue("id"), events.ElicitAnswer{Action: body.Action, Content: body.Content})
	})
}

func (s *Server) decidePlan(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Decision string `json:"decision"`
	}
	if !decode(w, r, &body) {
		return
	}
	d := events.PlanReject
	switch body.Decision {
	case "approve":
		d = events.PlanApprove
	case "reject":
	default:
		http.Error(w, "decision must be approve or reject", http.StatusBadRequest)
		return
	}
	if err := s.plans.decide(r.PathValue("id"), d); err != nil {
		http.Error(w, err.Error(), http.StatusConflict)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// maxListing bounds one directory listing for @ completion.
const maxListing = 500

// files lists one directory level of the workspace for @ completion:
// ?dir=sub/path. It never leaves the workspace and skips .git.
func (s *Server) files(w http.ResponseWriter, r *http.Request) {
	ws := s.host.Workspace()
	rel := filepath.Clean(filepath.FromSlash("/" + r.URL.Query().Get("dir")))
	dir := filepath.Join(ws, rel)
	if real, err := filepath.EvalSymlinks(dir); err != nil || (real != ws && !strings.HasPrefix(real, ws+string(filepath.Separator))) {
		http.Error(w, "not a folder in the workspace", http.StatusNotFound)
		return
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		http.Error(w, "not a folder in the workspace", http.StatusNotFound)
		return
	}
	out := []string{}
	for _, e := range ents {
		if e.Name() == ".git" {
			continue
		}
		p := strings.TrimPrefix(filepath.ToSlash(filepath.Join(rel, e.Name())), "/")
		if e.IsDir() {
			p += "/"
		}
		out = append(out, p)
		if len(out) == maxListing {
			break
		}
	}
	writeJSON(w, out)
}
