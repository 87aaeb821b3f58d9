// Package acp serves Reasonix to editors over the Agent Client Protocol
// (ACP, protocol version 1: JSON-RPC on stdio, as Zed, JetBrains IDEs and
// VS Code extensions speak it). It is a front end like the TUI: it turns
// the event stream into session updates and the editor's answers into
// engine commands, and it never touches the coordinator or the gate.
//
// One ACP session is one Reasonix conversation with the same id, so a
// session started in the editor can be resumed with `reasonix run
// --resume ID` or the TUI's /resume, and listed or loaded back here.
package acp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/store"
)

// Engine is what one ACP session drives: one conversation
// (orchestrator.Engine satisfies it).
type Engine interface {
	// Send runs one user turn.
	Send(ctx context.Context, text string) error
	// Plan plans text read-only, asks the plan approver, then executes.
	Plan(ctx context.Context, text string) error
	// Answer answers an approval request by id.
	Answer(id, choice, reason string) error
	// AnswerQuestion answers the ask tool's question by id.
	AnswerQuestion(id, answer string) error
	// DeclineQuestion ends the ask tool's question without an answer:
	// the model goes on as when no one can answer.
	DeclineQuestion(id string) error
	// Interrupt cancels what is running.
	Interrupt()
	// SessionID is the conversation's id.
	SessionID() string
	// Close closes the conversation; it waits for a running turn.
	Close()
}

// Host opens conversations on the assembled application. Every engine it
// returns publishes to the sink the server was subscribed to.
type Host interface {
	// Open starts a new conversation.
	Open() (Engine, error)
	// Resume reopens the saved conversation id (or unique prefix) and
	// publishes its history as an events.History event.
	Resume(id string) (Engine, error)
	// Sessions lists the project's conversations, newest first.
	Sessions() ([]store.Summary, error)
	// Workspace is the absolute root the conversations work in.
	Workspace() string
	// Answer answers an approval request that belongs to no session (a
	// project MCP server's or the hooks' trust question) by id.
	Answer(id, choice, reason string) error
	// Ready waits until the trust questions of the project's MCP servers
	// asked at start-up are answered and the servers they let start
	// have come up or failed, or ctx ends: a prompt that put them to the
	// editor waits, so its first request has those servers' tools.
	Ready(ctx context.Context) error
	// Posture is the gate's posture (ask, auto or yolo); SetPosture
	// switches it for the whole process, as a person chose in the editor.
	Posture() string
	SetPosture(mode string) error
}

// Mode ids offered to the editor: the gate's postures, which hold for
// every session of the process (one gate), and plan mode, which is the
// session's own and sends each prompt through the planner: a read-only
// plan, the editor's approval, then execution.
const (
	ModeAsk  = "ask"
	ModeAuto = "auto"
	ModeYolo = "yolo"
	ModePlan = "plan"
)

// maxResult bounds the tool output shown in a tool call's content; the
// model gets the whole (already truncated) result regardless.
const maxResult = 8 << 10

// maxDiffFile bounds the files read to show an edit as a diff.
const maxDiffFile = 1 << 20

// Server is the agent side of one ACP connection.
type Server struct {
	version string
	host    Host
	conn    *sdk.AgentSideConnection
	ctx     context.Context

	mu       sync.Mutex
	sessions map[string]*session
	// owner maps a subagent session id to the ACP session it runs for;
	// speaks marks those whose text is the session's answer (the planner
	// and executors of a plan prompt), not a subagent's working notes.
	owner  map[string]string
	speaks map[string]bool
	// planning is the session whose plan prompt is running: plans are
	// approved in its name (one plan prompt at a time).
	planning *session
	planMu   sync.Mutex
	nextPlan int
	// fs is what the editor offers for files (see ReadText and Wrote).
	fs sdk.FileSystemCapabilities

	// asks are the permission requests in flight; Serve waits for them.
	asks sync.WaitGroup
	// inflight are the approvals and questions put to the editor and not
	// yet answered, by their id: a cancelled prompt, a closed session or
	// a request the engine withdrew takes them back from the editor.
	inflight map[string]*editorAsk
	// held are the approval requests of no session (the trust questions
	// of a project's MCP servers and hooks) waiting for a prompt, and
	// shown those put to the editor in one, by id (see sessionless.go).
	// turns numbers the prompts as they start; looseSeq the requests of
	// no session as they come.
	held     []*loose
	shown    map[string]*loose
	turns    uint64
	looseSeq uint64

	// unrouted gets the notices and errors of no open session; set
	// before the first event (see [Server.Unrouted]).
	unrouted func(events.Event)
}

// editorAsk is a permission request the editor has not answered.
type editorAsk struct {
	session *session
	// cancel ends the request: the connection sends $/cancel_request,
	// so the editor can close its prompt, and the request's goroutine
	// returns.
	cancel context.CancelFunc
	// refuse tells the engine no one answered: it denies the approval
	// or declines the question.
	refuse func()
}

// session is one ACP session: one conversation.
type session struct {
	id  string
	eng Engine

	// turn numbers the running prompt while it takes questions of no
	// session (0: none); guarded by Server.mu.
	turn uint64

	mu sync.Mutex
	// plan sends prompts through the planner.
	plan    bool
	running bool
	// stop ends the running prompt's wait for what the questions it was
	// given at its start decide (see Host.Ready).
	stop context.CancelFunc
	// before holds each running write call's files as they were when it
	// started, so its end can be shown as a diff.
	before map[string][]fileText
}

type fileText struct {
	path, text string
	ok         bool
}

// Unrouted hands f the notices and errors that belong to no session the
// editor has open: the process's own (an MCP server came up or stays
// off, a skill file was skipped). ACP has no message outside a session,
// so the front end writes them to its log. Call it before the server
// receives its first event; without it they are dropped.
func (s *Server) Unrouted(f func(events.Event)) { s.unrouted = f }

// New returns a server reporting version to editors. Call [Server.Serve]
// to run it; [Server.Publish] must receive every event the host's engines
// publish, and [Server.PlanApprover] approves plans from plan mode.
func New(version string) *Server {
	return &Server{version: version, sessions: map[string]*session{}, owner: map[string]string{}, speaks: map[string]bool{},
		inflight: map[string]*editorAsk{}, shown: map[string]*loose{}}
}

// Serve speaks ACP on in and out until the editor disconnects or ctx
// ends, then interrupts and closes every session.
func (s *Server) Serve(ctx context.Context, host Host, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.mu.Lock()
	s.host, s.ctx = host, ctx
	s.conn = sdk.NewAgentSideConnection(s, out, in)
	// The library logs connection events; library code here prints
	// nothing, and stderr is the editor's log of what Reasonix says.
	s.conn.SetLogger(slog.New(slog.DiscardHandler))
	s.mu.Unlock()
	select {
	case <-s.conn.Done():
	case <-ctx.Done():
	}
	// Cancelled under the lock, so no question starts after the wait
	// below (see startAsk).
	s.mu.Lock()
	cancel()
	all := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		all = append(all, ss)
	}
	s.mu.Unlock()
	for _, ss := range all {
		ss.stopPrompt()
		if ss.eng != nil {
			ss.eng.Interrupt()
		}
	}
	s.asks.Wait()
	for _, ss := range all {
		if ss.eng != nil {
			ss.eng.Close()
		}
	}
	return nil
}

var _ sdk.Agent = (*Server)(nil)
var _ sdk.AgentLoader = (*Server)(nil)

// Initialize answers the handshake with the protocol version both sides
// speak and what this agent offers.
func (s *Server) Initialize(_ context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	s.mu.Lock()
	s.fs = p.ClientCapabilities.Fs
	s.mu.Unlock()
	v := p.ProtocolVersion
	if v > sdk.ProtocolVersionNumber || v <= 0 {
		v = sdk.ProtocolVersionNumber
	}
	return sdk.InitializeResponse{
		ProtocolVersion: v,
		AgentInfo:       &sdk.Implementation{Name: "reasonix", Version: s.version},
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: sdk.PromptCapabilities{EmbeddedContext: true},
			SessionCapabilities: sdk.SessionCapabilities{
				List:  &sdk.SessionListCapabilities{},
				Close: &sdk.SessionCloseCapabilities{},
			},
		},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

// Authenticate has nothing to do: the provider key comes from
// Reasonix's own configuration.
func (s *Server) Authenticate(context.Context, sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

// NewSession opens a conversation in the workspace.
func (s *Server) NewSession(_ context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	if err := s.checkCwd(p.Cwd); err != nil {
		return sdk.NewSessionResponse{}, err
	}
	eng, err := s.host.Open()
	if err != nil {
		return sdk.NewSessionResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	ss := &session{id: eng.SessionID(), eng: eng}
	s.mu.Lock()
	s.sessions[ss.id] = ss
	s.mu.Unlock()
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(ss.id), Modes: modes(s.modeOf(ss))}, nil
}

// LoadSession reopens a saved conversation and replays it as updates
// before answering, as the protocol asks.
func (s *Server) LoadSession(_ context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	if err := s.checkCwd(p.Cwd); err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	id := string(p.SessionId)
	s.mu.Lock()
	if _, open := s.sessions[id]; open {
		s.mu.Unlock()
		return sdk.LoadSessionResponse{}, sdk.NewInvalidParams(map[string]any{"error": "session " + id + " is already open"})
	}
	// Registered before the engine exists, so the History event the
	// resume publishes is routed here and replayed.
	ss := &session{id: id}
	s.sessions[id] = ss
	s.mu.Unlock()
	eng, err := s.host.Resume(id)
	if err != nil {
		s.mu.Lock()
		delete(s.sessions, id)
		s.mu.Unlock()
		return sdk.LoadSessionResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	ss.mu.Lock()
	ss.eng = eng
	ss.mu.Unlock()
	return sdk.LoadSessionResponse{Modes: modes(s.modeOf(ss))}, nil
}

// ListSessions lists the workspace's saved conversations.
func (s *Server) ListSessions(_ context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	if p.Cwd != nil && *p.Cwd != "" {
		if err := s.checkCwd(*p.Cwd); err != nil {
			return sdk.ListSessionsResponse{Sessions: []sdk.SessionInfo{}}, nil
		}
	}
	list, err := s.host.Sessions()
	if err != nil {
		return sdk.ListSessionsResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	out := make([]sdk.SessionInfo, 0, len(list))
	for _, sm := range list {
		info := sdk.SessionInfo{SessionId: sdk.SessionId(sm.ID), Cwd: s.host.Workspace()}
		if sm.Title != "" {
			info.Title = sdk.Ptr(sm.Title)
		}
		if !sm.Updated.IsZero() {
			info.UpdatedAt = sdk.Ptr(sm.Updated.UTC().Format(time.RFC3339))
		}
		out = append(out, info)
	}
	return sdk.ListSessionsResponse{Sessions: out}, nil
}

// ResumeSession is not offered: LoadSession does it with the history.
func (s *Server) ResumeSession(context.Context, sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionResume)
}

// CloseSession interrupts and closes a session.
func (s *Server) CloseSession(_ context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	s.mu.Lock()
	ss := s.sessions[string(p.SessionId)]
	delete(s.sessions, string(p.SessionId))
	s.mu.Unlock()
	if ss == nil {
		return sdk.CloseSessionResponse{}, sdk.NewInvalidParams(map[string]any{"error": "no session " + string(p.SessionId)})
	}
	ss.stopPrompt()
	eng := ss.engine()
	if eng != nil {
		eng.Interrupt()
	}
	// The questions of no session it shows go on to another prompt.
	s.endTurn(ss)
	if eng != nil {
		s.withdraw(ss)
		eng.Close()
	}
	return sdk.CloseSessionResponse{}, nil
}

// SetSessionMode switches plan mode for the session, or the posture for
// every session (the others are told of the change).
func (s *Server) SetSessionMode(_ context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	ss, err := s.session(p.SessionId)
	if err != nil {
		return sdk.SetSessionModeResponse{}, err
	}
	m := string(p.ModeId)
	switch m {
	case ModePlan:
		ss.mu.Lock()
		ss.plan = true
		ss.mu.Unlock()
		return sdk.SetSessionModeResponse{}, nil
	case ModeAsk, ModeAuto, ModeYolo:
	default:
		return sdk.SetSessionModeResponse{}, sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf("unknown mode %q (want ask, auto, yolo or plan)", m)})
	}
	if err := s.host.SetPosture(m); err != nil {
		return sdk.SetSessionModeResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	ss.mu.Lock()
	ss.plan = false
	ss.mu.Unlock()
	s.mu.Lock()
	others := make([]*session, 0, len(s.sessions))
	for _, o := range s.sessions {
		if o != ss {
			others = append(others, o)
		}
	}
	s.mu.Unlock()
	for _, o := range others {
		if mode := s.modeOf(o); mode != ModePlan {
			s.update(o.id, sdk.SessionUpdate{CurrentModeUpdate: &sdk.SessionCurrentModeUpdate{CurrentModeId: sdk.SessionModeId(mode)}})
		}
	}
	return sdk.SetSessionModeResponse{}, nil
}

// modeOf is the session's mode: plan, or the process's posture.
func (s *Server) modeOf(ss *session) string {
	ss.mu.Lock()
	plan := ss.plan
	ss.mu.Unlock()
	if plan {
		return ModePlan
	}
	return s.host.Posture()
}

// SetSessionConfigOption is not offered.
func (s *Server) SetSessionConfigOption(context.Context, sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	return sdk.SetSessionConfigOptionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionSetConfigOption)
}

// Cancel interrupts the session's running turn; its Prompt then answers
// with the cancelled stop reason. The protocol has the editor answer its
// open permission requests as cancelled, but the turn does not wait on
// that: the engine's approvals are denied (and questions declined) here,
// so nothing they guard runs whatever the editor answers later, and each
// request is cancelled on the wire, so an editor that left one open can
// close it.
func (s *Server) Cancel(_ context.Context, p sdk.CancelNotification) error {
	s.mu.Lock()
	ss := s.sessions[string(p.SessionId)]
	s.mu.Unlock()
	if ss != nil {
		ss.stopPrompt()
		if eng := ss.engine(); eng != nil {
			// Interrupted first, so a denial cannot let the turn go on
			// to another model request before the interrupt lands. The
			// questions of no session it shows go on to another prompt.
			eng.Interrupt()
			s.endTurn(ss)
			s.withdraw(ss)
		}
	}
	return nil
}

// withdraw refuses, in the engine, every request the session has open
// with the editor, and cancels them on the wire.
func (s *Server) withdraw(ss *session) {
	s.mu.Lock()
	var open []*editorAsk
	for id, a := range s.inflight {
		if a.session == ss {
			open = append(open, a)
			delete(s.inflight, id)
		}
	}
	s.mu.Unlock()
	for _, a := range open {
		a.refuse()
		a.cancel()
	}
}

// settled ends the editor's request for id, if one is open: the engine
// no longer waits for it (answered, or withdrawn when its turn ended).
func (s *Server) settled(id string) {
	s.mu.Lock()
	a := s.inflight[id]
	delete(s.inflight, id)
	s.mu.Unlock()
	if a != nil {
		a.cancel()
	}
}

// Prompt runs one turn (or, in plan mode, plans and executes) and
// answers when it is over; every update of the turn is sent before.
func (s *Server) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	ss, err := s.session(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	text := promptText(p.Prompt, s.host.Workspace())
	if strings.TrimSpace(text) == "" {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"error": "the prompt has no text"})
	}
	ss.mu.Lock()
	if ss.running {
		ss.mu.Unlock()
		return sdk.PromptResponse{}, sdk.NewInvalidRequest(map[string]any{"error": "a turn is already running in this session"})
	}
	ss.running = true
	plan, eng := ss.plan, ss.eng
	wait, stop := context.WithCancel(ctx)
	ss.stop = stop
	ss.mu.Unlock()
	defer func() {
		s.endTurn(ss)
		ss.mu.Lock()
		ss.running = false
		ss.stop = nil
		ss.mu.Unlock()
		stop()
	}()
	// The questions of no session held until now are put to the editor
	// here first; the turn waits for what they decide, so its first
	// request has the tools of the MCP servers they let start.
	if held := s.beginTurn(ss); len(held) > 0 {
		for _, q := range held {
			s.askLoose(q)
		}
		if err := s.host.Ready(wait); err != nil && wait.Err() != nil {
			return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
		}
	}
	if plan {
		s.planMu.Lock()
		s.mu.Lock()
		s.planning = ss
		s.mu.Unlock()
		err = eng.Plan(ctx, text)
		s.mu.Lock()
		s.planning = nil
		s.mu.Unlock()
		s.planMu.Unlock()
	} else {
		err = eng.Send(ctx, text)
	}
	switch {
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	case errors.Is(err, events.ErrPlanRejected):
		s.update(ss.id, sdk.UpdateAgentMessageText("The plan was rejected; nothing was changed."))
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	case err != nil:
		return sdk.PromptResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
}

func (s *Server) session(id sdk.SessionId) (*session, error) {
	s.mu.Lock()
	ss := s.sessions[string(id)]
	s.mu.Unlock()
	if ss == nil || ss.engine() == nil {
		return nil, sdk.NewInvalidParams(map[string]any{"error": "no session " + string(id) + " (create it with session/new or session/load)"})
	}
	return ss, nil
}

// stopPrompt ends the running prompt's wait, if it waits.
func (ss *session) stopPrompt() {
	ss.mu.Lock()
	stop := ss.stop
	ss.mu.Unlock()
	if stop != nil {
		stop()
	}
}

func (ss *session) engine() Engine {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.eng
}

// checkCwd accepts the workspace and folders inside it: the workspace,
// its configuration and its gate were set up when Reasonix started.
func (s *Server) checkCwd(cwd string) error {
	if cwd == "" {
		return nil
	}
	ws := s.host.Workspace()
	c := filepath.Clean(cwd)
	if rc, err := filepath.EvalSymlinks(c); err == nil {
		c = rc
	}
	if c == ws || inside(ws, c) {
		return nil
	}
	return sdk.NewInvalidParams(map[string]any{"error": fmt.Sprintf(
		"reasonix acp serves the workspace %s; %s is outside it (start the agent with that folder as its working directory)", ws, cwd)})
}

func modes(current string) *sdk.SessionModeState {
	return &sdk.SessionModeState{
		CurrentModeId: sdk.SessionModeId(current),
		AvailableModes: []sdk.SessionMode{
			{Id: ModeAsk, Name: "Ask", Description: sdk.Ptr("Ask before every change and command no rule allows")},
			{Id: ModeAuto, Name: "Auto", Description: sdk.Ptr("Edit files without asking; commands and ask rules still ask")},
			{Id: ModeYolo, Name: "Yolo", Description: sdk.Ptr("Allow everything not denied; dangerous commands still ask")},
			{Id: ModePlan, Name: "Plan", Description: sdk.Ptr("Plan read-only first; the plan runs after you approve it")},
		},
	}
}

// update sends one session update; a failure means the editor is gone,
// which Serve notices.
func (s *Server) update(id string, u sdk.SessionUpdate) {
	s.mu.Lock()
	conn, ctx := s.conn, s.ctx
	s.mu.Unlock()
	if conn == nil {
		return
	}
	_ = conn.SessionUpdate(ctx, sdk.SessionNotification{SessionId: sdk.SessionId(id), Update: u})
}

// inside reports whether path is below dir.
func inside(dir, path string) bool {
	return strings.HasPrefix(filepath.Clean(path), dir+string(filepath.Separator))
}
