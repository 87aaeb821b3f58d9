package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"sync"
	"unicode"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/acp"
	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/orchestrator"
	"github.com/reasonix/reasonix/tools"
)

// cmdACP is `reasonix acp`: Reasonix as an agent an editor starts and
// drives over the Agent Client Protocol on stdin and stdout (see
// docs/EDITORS.md). Stdout carries protocol messages only; notices go to
// stderr, which editors show in their logs.
func cmdACP(ctx context.Context, args []string, io stdio) error {
	var f runFlags
	fs := flag.NewFlagSet("acp", flag.ContinueOnError)
	fs.SetOutput(io.err)
	f.sessionFlags(fs)
	fs.BoolVar(&f.hooksTrust, "hooks-trust", false, "run this project's hooks without asking")
	fs.BoolVar(&f.mcpTrust, "mcp-trust", false, "start the MCP servers of this project's .mcp.json without asking")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError{err}
	}
	if len(pos) > 0 {
		return usagef("acp takes no prompt: the editor sends them")
	}
	srv := acp.New(version)
	// Notices of no session (an MCP server is running, one stays off)
	// have no place in the protocol: they go to stderr, the editor's log
	// of the agent, one plain line each.
	var logMu sync.Mutex
	srv.Unrouted(func(e events.Event) {
		msg := e.Text
		if e.Type == events.Error && e.Error != "" {
			msg = "error: " + e.Error
		}
		if msg = plainLine(msg); msg == "" {
			return
		}
		logMu.Lock()
		defer logMu.Unlock()
		fmt.Fprintf(io.err, "reasonix: %s\n", msg)
	})
	hub := &events.Hub{}
	unsubscribe := hub.Subscribe(srv)
	defer unsubscribe()
	// Every question goes to the editor through the event stream, like
	// the TUI's; when the editor leaves, what is still asked is refused.
	broker := permission.NewBroker(hub.Publish)
	defer broker.Close("the editor disconnected")
	// The ask tool's questions with choices go to the editor as
	// permission requests; one without choices has no one to answer it.
	app, err := assemble(assembleOptions{flags: f, sink: hub, stderr: io.err, approver: broker, planApprover: srv.PlanApprover(), editor: srv, askMCPTrust: true,
		asker: tools.NewChoiceQuestions(hub.Publish),
		// ACP has no form an editor shows for a server's request for
		// input, so it is declined with a notice the editor shows.
		noForms: "editors over ACP have no form for it"})
	if err != nil {
		return err
	}
	defer app.Close()
	return srv.Serve(ctx, &acpHost{engines{app: app, hub: hub, broker: broker}}, io.in, io.out)
}

// plainLine is msg on one line without control or format characters: a
// notice can carry text a project chose (a server's name), which must not
// move, colour or reorder the log it is written to.
func plainLine(msg string) string {
	return strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return ' '
		}
		return r
	}, msg)), " ")
}

// acpHost opens the editor's sessions as engines on the one coordinator.
type acpHost struct{ engines }

func (h *acpHost) Open() (acp.Engine, error)            { return h.open() }
func (h *acpHost) Resume(id string) (acp.Engine, error) { return h.resume(id) }

// engines opens conversations for a front end that serves several at
// once (an editor, the browser): each is an engine on the one
// coordinator, publishing to the one hub and asking through the one
// broker.
type engines struct {
	app    *app
	hub    *events.Hub
	broker *permission.Broker
}

func (h *engines) open() (*orchestrator.Engine, error) {
	return orchestrator.NewEngine(h.app.coord, h.hub, h.broker)
}

// resume reopens the saved conversation id (or a unique prefix); its
// history is published as a History event.
func (h *engines) resume(id string) (*orchestrator.Engine, error) {
	path, err := h.app.coord.FindSession(id)
	if err != nil {
		return nil, err
	}
	eng, err := h.open()
	if err != nil {
		return nil, err
	}
	if err := eng.Resume(path, ""); err != nil {
		eng.Close()
		return nil, err
	}
	return eng, nil
}

// Sessions lists the project's conversations, newest first.
func (h *engines) Sessions() ([]store.Summary, error) {
	dir := h.app.coord.SessionsDir()
	if dir == "" {
		return nil, nil
	}
	return orchestrator.Conversations(dir)
}

// Workspace is the root the conversations work in.
func (h *engines) Workspace() string { return h.app.workspace }

// Posture is the gate's posture.
func (h *engines) Posture() string { return string(h.app.gate.Posture()) }

// SetPosture switches the gate's posture, as a person chose in a front end.
func (h *engines) SetPosture(mode string) error { return h.app.gate.SetPosture(permission.Mode(mode)) }

// Answer answers an approval request of no session (the trust questions
// of the project's MCP servers and hooks) through the one broker.
func (h *acpHost) Answer(id, choice, reason string) error { return h.broker.Answer(id, choice, reason) }

// Ready waits until the start-up trust questions of the project's MCP
// servers are answered, then until the servers started so far (those
// they let start among them) have come up or failed, each within its
// own timeout, as a headless run waits for its servers.
func (h *acpHost) Ready(ctx context.Context) error {
	if h.app.trustAsked != nil {
		select {
		case <-h.app.trustAsked:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if h.app.mcp == nil {
		return nil
	}
	return h.app.mcp.Wait(ctx)
}

// quietEditor hands the file tools' reads and writes to the editor only
// while no confined command runs (permission.Orphans.Quiet): the editor
// resolves a path itself, through symlinks, and a confined background job
// that swapped a folder on it for a symlink to ~/.ssh had the editor read
// the key for the model and write the model's text there. Otherwise the
// tools read and write the disk alone, as without an editor, and the
// editor sees the change on disk.
type quietEditor struct {
	ed      tools.Editor
	orphans *permission.Orphans
}

func (q quietEditor) ReadText(session, abs string) (text string, ok bool) {
	q.orphans.Quiet(func() { text, ok = q.ed.ReadText(session, abs) })
	return text, ok
}

func (q quietEditor) Wrote(session, abs, content string) {
	q.orphans.Quiet(func() { q.ed.Wrote(session, abs, content) })
}
