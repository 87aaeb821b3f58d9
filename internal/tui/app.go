// Package tui is Reasonix's interactive front end: a tview application with
// a streaming transcript, a multi-line composer, a status line and overlays
// for tool approvals and plans. It only renders the event stream and sends
// commands through a small [Engine] interface; it never sees the
// coordinator, and nothing below cmd imports it.
//
// Concurrency: tview widgets belong to the UI goroutine. Every other
// goroutine (sessions publishing events, the gate asking for approval, the
// turn runner) hands closures to post; one pump goroutine hands them to
// the UI goroutine in batches (see handOver), at most about 80 times a
// second, so a fast stream of deltas costs one redraw per frame rather than
// one per delta.
package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/providers"
)

// Options configure an App. The zero value draws on the terminal.
type Options struct {
	// Screen is where the UI draws; nil opens the terminal. Tests pass a
	// tcell.SimulationScreen.
	Screen tcell.Screen
	// EditPlan edits a plan's JSON for the plan overlay's Edit, in the
	// user's editor while the UI is suspended; nil offers no editing.
	EditPlan func(ctx context.Context, draft []byte) (events.Plan, []byte, error)
	// Frame is the shortest time between two redraws; 0 means 12ms, so a
	// streamed chunk is on screen within a 60 Hz frame on average.
	Frame time.Duration
	// MaxLines bounds the transcript kept in memory; 0 means 20000.
	MaxLines int
	// Version is shown in the welcome line.
	Version string
	// History keeps the prompts sent from the composer between runs: Up
	// and Down recall them, Ctrl-R searches them. nil keeps them for this
	// run only.
	History History
	// Theme is "dark", "light" or "auto" (also ""): the terminal's
	// background from COLORFGBG, else dark.
	Theme string
	// Prompt, when set, is sent as soon as the UI is up, as if typed,
	// below a resumed conversation's history (reasonix demo, reasonix
	// -r ID PROMPT).
	Prompt string
	// PickResume opens the list of the project's conversations to resume
	// from as soon as the UI is up (reasonix -r).
	PickResume bool
	// Hooks lists the loaded hooks, one line each, for /hooks; nil lists
	// none.
	Hooks func() []string
	// MCP lists the MCP servers, one line each, for /mcp; nil lists none.
	MCP func() []string
	// MCPSignIn starts the OAuth sign-in of a remote MCP server (/mcp
	// login NAME): the browser opens and notices report the outcome. It
	// returns at once; nil offers no sign-in.
	MCPSignIn func(name string) error
	// Models lists the configured models for /model and /models; nil
	// lists none (/model REF still switches by name).
	Models func() []ModelChoice
	// ProviderModels asks the provider's endpoint which models it offers
	// (GET /models), for /models; it is called off the UI goroutine with
	// a deadline. nil asks no one.
	ProviderModels func(ctx context.Context, provider string) ([]string, error)
	// OpenURL opens an address in the person's browser and returns at
	// once; an MCP server's address is opened only after the person
	// agreed. nil: the address is shown to open by hand.
	OpenURL func(url string)
	// Posture and SetPosture read and switch the permission gate's
	// posture (ask, auto, yolo) for Shift-Tab and the status line; nil
	// hides it.
	Posture    func() string
	SetPosture func(posture string) error
}

// Engine is what the TUI drives: the commands a person gives, and a
// subscription to the event stream it renders (orchestrator.Engine
// implements it). Every method but Subscribe and Answer may block for the
// length of a turn; the TUI calls those from a worker goroutine and
// cancels their context to interrupt.
type Engine interface {
	// Subscribe delivers events to s until the returned function is called.
	Subscribe(s events.Sink) (unsubscribe func())
	// Send runs one turn: chat text, or "/name args" for a command the
	// engine lists in Commands.
	Send(ctx context.Context, text string) error
	// Plan plans text read-only, asks about the plan, then executes it.
	Plan(ctx context.Context, text string) error
	// Goal pursues text over several turns until it is done.
	Goal(ctx context.Context, text string) error
	CurrentGoal() (events.GoalState, bool, error)
	ClearGoal() error
	// NewConversation starts a fresh conversation (/clear).
	NewConversation() error
	// Commands are the slash commands Send understands (skills).
	Commands() []events.Command
	// Agents are the subagents the model can delegate to.
	Agents() []events.Command
	// Model is the "provider/model" of the next request; SetModel
	// switches it (ref is provider/model) and saves it in the session,
	// and returns the resolved "provider/model". Effort and SetEffort do
	// the same for the reasoning effort (low, medium, high; "" or
	// "default" the provider's configured one). Model and Effort never
	// block; the setters are called between turns.
	Model() string
	SetModel(ref string) (string, error)
	Effort() string
	SetEffort(level string) error
	// Answer answers the approval request id with one of its choices.
	Answer(id, choice, reason string) error
	// Sessions lists this project's conversations, newest first, and
	// Resume makes the one saved at path the conversation (its history
	// arrives as a History event).
	Sessions() ([]store.Summary, error)
	Resume(path, modelRef string) error
	// ResumeFork makes a fork of the session at path the conversation:
	// of one changed outside Reasonix (Resume's *store.ModifiedError),
	// what Reasonix wrote, or with accept the file as it stands.
	ResumeFork(path string, accept bool) (*store.ForkReport, error)
	// Turns lists the conversation's user turns; Rewind takes it (and
	// the files) back to just before turn to, or undoes the last rewind.
	Turns() []string
	Rewind(ctx context.Context, to int, undo bool) (events.RewindResult, error)
	// Close ends the engine's conversation once no turn is running.
	Close()
}

// App is the interactive front end. It is an events.Sink (it subscribes
// itself to its engine in Run) and answers approval requests from the
// stream through Engine.Answer; PlanApprover returns what asks about
// plans. Publish may be called from any goroutine, before or during Run.
type App struct {
	opts Options
	// zh shows the UI's own labels in Chinese (SetLanguage).
	zh  bool
	app *tview.Application

	pages      *tview.Pages
	transcript *tview.TextView
	composer   *tview.TextArea
	status     *tview.TextView
	body       *tview.Flex

	mu      sync.Mutex
	queue   []func()
	pending *pumpBatch // handed to the UI goroutine, not yet run
	wake    chan struct{}
	done    chan struct{} // closed when Run returns
	// side are background lookups (/models); Run waits for them.
	side sync.WaitGroup
	busy atomic.Bool // a turn is in flight; the pump ticks the status line

	// The fields below belong to the UI goroutine.
	eng       Engine
	ctx       context.Context
	cancel    context.CancelFunc // cancels the in-flight work; nil when idle
	workDone  chan struct{}
	workLabel string
	workStart time.Time
	armed     bool // a Ctrl-C on an idle composer: the next one quits
	overlays  []string
	overlayN  int
	screenH   int
	screenW   int
	// statusParts are the status line's fields, statusW the width they
	// were last fitted to (updateStatus, fitStatus).
	statusParts []statusPart
	statusW     int
	rs          renderState
	bl          blockState
	live        *tview.TextView
	th          *theme
	usage       providers.Usage
	// window is how full the conversation's context window is (the
	// newest Usage or Compacted event's figure).
	window   *events.ContextInfo
	model    string
	goal     *events.GoalState
	goalBusy bool
	// approvals close the overlay of each open approval request, by id.
	approvals map[string]func()
	recall    recall
	// follow: the transcript shows its end and keeps showing it as output
	// arrives; a scroll up turns it off, a scroll back to the end (or
	// End, or sending a prompt) on. unseen: output arrived while off.
	follow, unseen bool
	// todos is the conversation's newest todo list; workers the worker
	// sessions started and not yet done.
	todos   []events.Todo
	workers map[string]bool
	// titles are the worker sessions' descriptions, by session id.
	titles map[string]string
	// costs are the requests' usage by "provider/model", for /cost.
	costs map[string]*modelCost
	// menu is the completion menu above the composer; nil when closed.
	menu *menu
	// menuOff is the draft the menu was closed on (Esc); it opens again
	// once the draft changes.
	menuOff string
	// calls are the newest finished tool calls, for Ctrl-O.
	calls []keptCall
	// asks queues the approval requests and questions behind the one
	// on screen (overlay.go).
	asks askQueue
	// pastes are the large pastes held in the composer as placeholders;
	// queued the prompts typed while a turn ran.
	pastes []paste
	queued []queuedPrompt
	// composerItem is the composer as the layout holds it.
	composerItem tview.Primitive
	composerRows int // screen rows the draft needs
	// atLineStart: the transcript's text ends with a line break (see
	// guardLeadingBreak).
	atLineStart bool
}

const (
	defaultFrame    = 12 * time.Millisecond
	defaultMaxLines = 20000
	// tick refreshes the status line (elapsed time, spinner) while busy.
	tick       = 250 * time.Millisecond
	composerID = "main"
	// composerPlaceholder is the empty composer's hint.
	composerPlaceholder = "Ask Reasonix… (Enter sends, Ctrl-J newline, /help)"
)

// New builds the UI. Nothing is drawn until Run.
func New(opts Options) *App {
	if opts.Frame <= 0 {
		opts.Frame = defaultFrame
	}
	if opts.MaxLines <= 0 {
		opts.MaxLines = defaultMaxLines
	}
	useTerminalColours()
	a := &App{
		opts: opts,
		th:   pickTheme(opts.Theme, os.Getenv, nil),
		app:  tview.NewApplication(),
		wake: make(chan struct{}, 1),
		done: make(chan struct{}),
		rs:   newRenderState(),
		bl:   newBlockState(),

		approvals: map[string]func(){},
		follow:    true,
		workers:   map[string]bool{},
		titles:    map[string]string{},
		costs:     map[string]*modelCost{},
	}
	a.transcript = tview.NewTextView().SetDynamicColors(true).SetRegions(true).SetWrap(true).SetWordWrap(true).
		SetScrollable(true).SetMaxLines(opts.MaxLines)
	a.transcript.ScrollToEnd()
	a.composer = tview.NewTextArea().SetPlaceholder(composerPlaceholder)
	a.composer.SetPlaceholderStyle(tcell.StyleDefault.Foreground(tcell.ColorGray))
	a.composer.SetBorder(true).SetBorderPadding(0, 0, 1, 1)
	a.composer.SetInputCapture(a.composerKey)
	a.composer.SetChangedFunc(func() {
		a.resizeComposer()
		a.updateMenu()
	})
	a.composerItem = composerBox{TextArea: a.composer, a: a}
	a.status = tview.NewTextView().SetDynamicColors(true).SetWrap(false)
	a.live = tview.NewTextView().SetDynamicColors(true).SetWrap(false)
	a.body = tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(a.transcript, 0, 1, false).
		AddItem(a.live, 0, 0, false).
		AddItem(a.composerItem, 3, 0, true).
		AddItem(a.status, 1, 0, false)
	a.pages = tview.NewPages().AddPage(composerID, a.body, true, true)
	a.app.SetRoot(rootPages{Pages: a.pages, a: a}, true).SetFocus(a.composer)
	a.app.SetInputCapture(a.globalKey)
	a.app.EnableMouse(true)
	a.app.EnablePaste(true)
	a.app.SetMouseCapture(a.mouse)
	a.app.SetBeforeDrawFunc(a.beforeDraw)
	a.app.SetAfterDrawFunc(a.drawMenu)
	return a
}

// beforeDraw notes the screen's size; at a new width it refits the
// status line and lays the transcript out again (see reflow).
func (a *App) beforeDraw(s tcell.Screen) bool {
	w, h := s.Size()
	old := a.screenW
	a.screenW, a.screenH = w, h
	if w != old {
		a.reflow(old)
		// The composer spans the screen less its border and padding; its
		// rows were counted for the old width.
		a.resizeComposerFor(w - 4)
	}
	if a.screenW != a.statusW {
		a.fitStatus()
	}
	return false
}

// SetTheme picks the colours by name ("auto", "dark", "light"); call it
// before Run. On the real terminal "auto" may ask the terminal for its
// background (one round trip; see probeBackground).
func (a *App) SetTheme(name string) {
	var probe func() (bool, bool)
	if a.opts.Screen == nil && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb" {
		probe = func() (bool, bool) { return probeBackground(bgProbeTimeout) }
	}
	a.th = pickTheme(name, os.Getenv, probe)
}

// bgProbeTimeout bounds the wait for a terminal that answers neither
// query of probeBackground.
const bgProbeTimeout = 300 * time.Millisecond

// Run shows the UI and returns when the user quits (nil) or ctx ends
// (ctx.Err()). The terminal is restored on every path out, panics
// included.
func (a *App) Run(parent context.Context, eng Engine) (err error) {
	if eng == nil {
		return errors.New("tui: no engine")
	}
	ctx, stopAll := context.WithCancel(parent)
	defer stopAll()
	a.eng, a.ctx = eng, ctx
	if a.opts.Screen != nil {
		a.app.SetScreen(a.opts.Screen)
	}
	a.post(a.welcome)
	if a.opts.PickResume {
		a.post(a.resumePicker)
	}
	a.loadHistory()
	// After the welcome, so start-up events (a resumed conversation's
	// history, notices) come below it.
	unsubscribe := eng.Subscribe(a)
	defer unsubscribe()
	// After them (Subscribe hands over the events published before it),
	// so the first prompt shows below the history it continues.
	if p := a.opts.Prompt; p != "" {
		a.post(func() { a.submit(p) })
	}
	// Run owns both goroutines and waits for them once the UI is gone.
	var bg sync.WaitGroup
	bg.Go(a.pump)
	bg.Go(func() {
		select {
		case <-ctx.Done():
			a.app.Stop()
		case <-a.done:
		}
	})
	defer func() {
		// app.Run restores the terminal before re-panicking from its own
		// goroutine; this covers a panic anywhere else on the way out.
		if p := recover(); p != nil {
			a.app.Stop()
			panic(p)
		}
	}()
	err = a.app.Run()
	close(a.done)
	bg.Wait()
	stopAll()
	a.side.Wait()
	a.finishWork()
	a.eng.Close()
	if err != nil {
		return fmt.Errorf("tui: %w", err)
	}
	// A quit is nil; an ended parent (a signal) is reported as such.
	return parent.Err()
}

// finishWork waits briefly for in-flight work after its context ended, so
// the conversation's transcript is closed after its last write.
func (a *App) finishWork() {
	a.mu.Lock()
	done := a.workDone
	a.mu.Unlock()
	if done == nil {
		return
	}
	select {
	case <-done:
	case <-time.After(5 * time.Second):
	}
}

// post runs f on the UI goroutine with the next batch. It never blocks.
func (a *App) post(f func()) {
	a.mu.Lock()
	a.queue = append(a.queue, f)
	a.mu.Unlock()
	select {
	case a.wake <- struct{}{}:
	default:
	}
}

// pump moves posted closures to the UI goroutine, one batch and one
// redraw per frame at most.
func (a *App) pump() {
	t := time.NewTimer(tick)
	defer t.Stop()
	for {
		select {
		case <-a.wake:
		case <-t.C:
		case <-a.done:
			return
		}
		a.mu.Lock()
		batch := a.queue
		a.queue = nil
		a.mu.Unlock()
		if len(batch) > 0 || a.busy.Load() {
			if !a.handOver(batch) {
				return
			}
		}
		t.Reset(tick)
		select {
		case <-time.After(a.opts.Frame):
		case <-a.done:
			return
		}
	}
}

// keyPump is the key event that tells the UI goroutine a batch is waiting.
// No terminal sends it: tcell's keys end far below.
const keyPump tcell.Key = 0x7ff0

// maxPumpKeys bounds the keys sent for one batch, so that tview's event
// queue (100 events) can never fill with them after its loop has ended.
const maxPumpKeys = 5

// pumpBatch is a batch of posted closures on its way to the UI goroutine;
// ran is closed once they have run.
type pumpBatch struct {
	fns []func()
	ran chan struct{}
}

// handOver runs batch on the UI goroutine and redraws, and waits until it
// has; it returns false, with the batch dropped, when Run returns first.
//
// tview's QueueUpdateDraw cannot do this: it blocks until the event loop
// runs the update, so an update queued just as the loop ends blocks its
// caller forever (QueueUpdate too, and its update channel is not ours to
// drain). A key event is fire and forget instead: the loop hands it to the
// input capture, where pumpKey runs the batch, and tview redraws after a
// key the capture consumed. Once the loop has ended the event is simply
// never read. tview drops keys during a bracketed paste, so an unanswered
// key is sent again, a few times at most.
func (a *App) handOver(batch []func()) bool {
	b := &pumpBatch{fns: batch, ran: make(chan struct{})}
	a.mu.Lock()
	a.pending = b
	a.mu.Unlock()
	resend := time.NewTicker(time.Second)
	defer resend.Stop()
	for sent := 0; ; {
		if sent < maxPumpKeys {
			// Never blocks for long: tview's queue holds 100 events
			// and its loop drains it while it runs.
			a.app.QueueEvent(tcell.NewEventKey(keyPump, 0, tcell.ModNone))
			sent++
		}
		select {
		case <-b.ran:
			return true
		case <-a.done:
			return false
		case <-resend.C:
		}
	}
}

// pumpKey runs the waiting batch when ev is the pump's key; it reports
// whether it was. It runs on the UI goroutine, from the input capture.
func (a *App) pumpKey(ev *tcell.EventKey) bool {
	if ev.Key() != keyPump {
		return false
	}
	a.mu.Lock()
	b := a.pending
	a.pending = nil
	a.mu.Unlock()
	if b != nil {
		for _, f := range b.fns {
			f()
		}
		a.updateStatus()
		a.updateLive()
		close(b.ran)
	}
	return true
}

// goSafe runs f on its own goroutine; a panic there restores the terminal
// before it crashes the process.
func (a *App) goSafe(f func()) {
	go func() {
		defer func() {
			if p := recover(); p != nil {
				a.app.Stop()
				panic(p)
			}
		}()
		f()
	}()
}

// welcome is the first thing in the transcript.
func (a *App) welcome() {
	v := a.opts.Version
	if v != "" {
		v = " " + v
	}
	a.line(fmt.Sprintf("[::b]Reasonix%s[::-] [gray]· %s[-]", escape(v), a.tr("Enter sends · Ctrl-J or Alt-Enter newline · /help · Ctrl-C cancels · Ctrl-D quits")))
	if st, ok, err := a.eng.CurrentGoal(); err == nil && ok {
		a.goal = &st
		if st.Status == events.GoalActive {
			a.line(fmt.Sprintf("[yellow]%s[-] %s [gray]%s[-]", a.tr("a saved goal is active:"), escape(oneLine(st.Goal, 100)), a.tr("(/goal shows it, /goal clear forgets it)")))
		}
	}
}

// startWork runs f in the background as the one in-flight piece of work;
// Ctrl-C cancels its context.
func (a *App) startWork(label string, f func(ctx context.Context) error) {
	if a.cancel != nil {
		a.notef("still working on %s; wait, or press Ctrl-C to cancel it", a.tr(a.workLabel))
		return
	}
	ctx, cancel := context.WithCancel(a.ctx)
	done := make(chan struct{})
	a.cancel, a.workLabel, a.workStart = cancel, label, time.Now()
	a.mu.Lock()
	a.workDone = done
	a.mu.Unlock()
	a.busy.Store(true)
	a.goSafe(func() {
		defer close(done)
		err := f(ctx)
		interrupted := ctx.Err() != nil
		a.post(func() {
			a.endStream()
			a.flushThought()
			a.endAgents(interrupted)
			if a.cancel != nil && a.workDone == done {
				a.cancel()
			}
			a.cancel = nil
			a.busy.Store(false)
			switch {
			case err == nil:
			case interrupted:
				a.line("[gray]" + a.tr("interrupted") + "[-]")
			case errors.Is(err, events.ErrPlanRejected):
				a.line("[yellow]" + a.tr("plan rejected; nothing was changed") + "[-]")
			default:
				a.errorLine(err.Error())
			}
			a.sendQueued()
		})
	})
}

// globalKey sees every key first.
func (a *App) globalKey(ev *tcell.EventKey) *tcell.EventKey {
	if a.pumpKey(ev) {
		return nil // tview redraws after a key the capture consumed
	}
	if len(a.overlays) == 0 && a.menu != nil && a.menuKey(ev) {
		return nil // an open menu owns its keys, Esc included
	}
	switch ev.Key() {
	case tcell.KeyCtrlC:
		a.interrupt()
		return nil // tview would stop the application on Ctrl-C
	case tcell.KeyBacktab:
		if len(a.overlays) == 0 {
			a.cyclePosture()
			return nil
		}
	case tcell.KeyCtrlO:
		if len(a.overlays) == 0 {
			a.toolOutput()
			return nil
		}
	case tcell.KeyCtrlT:
		if len(a.overlays) == 0 {
			a.toggleBlocks()
			return nil
		}
	case tcell.KeyEscape:
		if len(a.overlays) == 0 && a.cancel != nil {
			a.cancel()
			a.unqueue()
			return nil
		}
	case tcell.KeyCtrlD:
		if len(a.overlays) == 0 && a.composer.GetText() == "" {
			a.quit()
			return nil
		}
	case tcell.KeyPgUp, tcell.KeyPgDn:
		if len(a.overlays) == 0 {
			a.armed = false
			a.transcript.InputHandler()(ev, func(tview.Primitive) {})
			a.scrolled()
			return nil
		}
	case tcell.KeyEnd, tcell.KeyHome:
		// Home and End scroll the transcript while it is scrolled back
		// (or with Ctrl); otherwise they belong to the composer.
		if len(a.overlays) == 0 && (!a.follow || ev.Modifiers()&tcell.ModCtrl != 0) {
			a.armed = false
			if ev.Key() == tcell.KeyEnd {
				a.followEnd()
			} else {
				a.transcript.ScrollToBeginning()
				a.follow = false
			}
			return nil
		}
	}
	a.armed = false
	return ev
}

// scrolled updates following after the transcript moved: at its end it
// follows again.
func (a *App) scrolled() {
	row, _ := a.transcript.GetScrollOffset()
	_, _, _, h := a.transcript.GetInnerRect()
	if row+h >= a.transcript.GetWrappedLineCount() {
		a.followEnd()
		return
	}
	a.follow = false
}

// followEnd shows the end of the transcript and follows it.
func (a *App) followEnd() {
	a.transcript.ScrollToEnd()
	a.follow, a.unseen = true, false
	a.updateStatus()
}

// mouse lets the wheel scroll the transcript (tview does the scrolling)
// and notes where it ended up.
func (a *App) mouse(ev *tcell.EventMouse, action tview.MouseAction) (*tcell.EventMouse, tview.MouseAction) {
	if action == tview.MouseScrollUp || action == tview.MouseScrollDown {
		if len(a.overlays) == 0 {
			a.transcript.MouseHandler()(action, ev, func(tview.Primitive) {})
			a.scrolled()
			return nil, action
		}
	}
	if len(a.overlays) == 0 && (action == tview.MouseLeftDown || action == tview.MouseLeftClick || action == tview.MouseLeftDoubleClick) && a.clickBlock(ev, action) {
		return nil, action
	}
	return ev, action
}

// interrupt is Ctrl-C: it cancels in-flight work; on an idle composer it
// clears the draft, and a second one quits.
func (a *App) interrupt() {
	switch {
	case a.cancel != nil:
		a.cancel()
		a.unqueue()
		a.armed = true
	case a.armed:
		a.quit()
	case a.composer.GetText() != "":
		// Clearing is one key from losing a long draft, so the draft stays
		// in this run's history (not the saved one: it was never sent),
		// where Up brings it back as it was, pastes expanded.
		a.recall.push(a.expandPastes(a.composer.GetText()))
		a.pastes = nil
		a.composer.SetText("", false)
		a.note("draft cleared (Up brings it back); Ctrl-C again quits")
		a.armed = true
	default:
		a.note("press Ctrl-C again (or Ctrl-D) to quit")
		a.armed = true
	}
}

// quit cancels any work and stops the application.
func (a *App) quit() {
	if a.cancel != nil {
		a.cancel()
	}
	a.app.Stop()
}

// composerKey: Enter sends; Alt-Enter and Ctrl-J insert a newline (Ctrl-J
// reaches the program unchanged through tmux and every terminal); Up and
// Down recall earlier prompts, Ctrl-R searches them (history.go).
func (a *App) composerKey(ev *tcell.EventKey) *tcell.EventKey {
	switch {
	case ev.Key() == tcell.KeyEnter && ev.Modifiers()&tcell.ModAlt != 0,
		ev.Key() == tcell.KeyCtrlJ:
		return tcell.NewEventKey(tcell.KeyEnter, 0, tcell.ModNone)
	case ev.Key() == tcell.KeyEnter:
		text := strings.TrimSpace(a.composer.GetText())
		if text != "" {
			a.composer.SetText("", false)
			full := a.expandPastes(text)
			a.pastes = nil
			if a.cancel != nil && !strings.HasPrefix(full, "/") {
				a.queuePrompt(full, text)
			} else {
				a.submitShown(full, text)
			}
			a.remember(full)
		}
		return nil
	case ev.Key() == tcell.KeyCtrlR:
		a.searchHistory()
		return nil
	case ev.Key() == tcell.KeyTab:
		if a.complete() {
			return nil
		}
	case a.recallKey(ev):
		return nil
	}
	return ev
}

// maxComposerLines is the most lines the composer grows to.
const maxComposerLines = 8

// statusPart is one field of the status line: its full text and a
// shorter one for a narrow terminal ("" leaves it out), with the ranks at
// which a line too wide shortens it and leaves it out (lower goes first;
// 0 never). See fitStatus.
type statusPart struct {
	full, short     string
	shortAt, dropAt int
}

// updateStatus redraws the status line from the UI state.
func (a *App) updateStatus() {
	var parts []statusPart
	add := func(full, short string, shortAt, dropAt int) {
		parts = append(parts, statusPart{full, short, shortAt, dropAt})
	}
	if a.eng != nil || a.model != "" {
		model, effort := a.model, ""
		if a.eng != nil {
			model, effort = a.eng.Model(), a.eng.Effort()
		}
		short := model
		if i := strings.LastIndexByte(model, '/'); i >= 0 {
			short = model[i+1:]
		}
		if effort != "" {
			model += " · " + a.tr("effort") + " " + effort
		}
		if model != "" {
			add("[::b]"+escape(model)+"[::-]", "[::b]"+escape(short)+"[::-]", 6, 12)
		}
	}
	switch p := a.posture(); p {
	case "":
	case "yolo":
		add("[white:red:b] yolo [-:-:-] [gray](Shift-Tab)[-]", "[white:red:b] yolo [-:-:-]", 5, 0)
	case "auto":
		add("[yellow]auto[-] [gray](Shift-Tab)[-]", "[yellow]auto[-]", 5, 0)
	default:
		add(escape(p)+" [gray](Shift-Tab)[-]", escape(p), 5, 0)
	}
	// What needs the person's eye first.
	if a.unseen {
		add("[black:yellow] "+a.tr("↓ new output below (End)")+" [-:-]", "[black:yellow] "+a.tr("↓ new below")+" [-:-]", 10, 0)
	}
	if n := len(a.queued); n > 0 {
		add(fmt.Sprintf("[::b]%d %s[::-]", n, a.tr("queued")), "", 0, 13)
	}
	u := a.usage
	tok := fmt.Sprintf(a.tr("tokens %s in (%s cached) %s out"), count(u.PromptTokens), count(u.CacheHitTokens), count(u.CompletionTokens))
	var short []string
	if u.PromptTokens > 0 {
		c := fmt.Sprintf(a.tr("cache %d%%"), u.CacheHitTokens*100/u.PromptTokens)
		tok += " · " + c
		short = append(short, c)
	}
	if u.Cost > 0 {
		m := money(u.Cost, u.Currency)
		tok += " · " + m
		short = append(short, m)
	}
	add(tok, strings.Join(short, " · "), 3, 6)
	if n := len(a.todos); n > 0 {
		done := 0
		for _, t := range a.todos {
			if t.Status == "completed" {
				done++
			}
		}
		add(a.trf("todo %d/%d", done, n), "", 0, 8)
	}
	if n := len(a.workers); n > 0 {
		add(a.trf("%d worker(s)", n), "", 0, 8)
	}
	if n := a.runningJobs(); n > 0 {
		jobs := a.plural(n, "job")
		add(a.trf("[::b]%s running[::-] [gray](/jobs)[-]", jobs), "[::b]"+jobs+"[::-]", 5, 9)
	}
	if w := a.window; w != nil && w.Limit > 0 {
		add(fmt.Sprintf(a.tr("context %s/%s (%d%%)"), count(w.Used), count(w.Limit), w.Percent), fmt.Sprintf(a.tr("ctx %d%%"), w.Percent), 4, 7)
	}
	if g := a.goal; g != nil {
		s := a.tr("goal") + " " + g.Status
		if g.Status == events.GoalActive && a.goalBusy && g.MaxTurns > 0 {
			s = a.trf("goal turn %d/%d", g.Turns+1, g.MaxTurns)
		} else if g.Turns > 0 {
			s += a.trf(" (%s)", a.plural(g.Turns, "turn"))
		}
		add(escape(s), "", 0, 11)
	}
	if a.cancel != nil {
		el := time.Since(a.workStart).Truncate(time.Second)
		w := fmt.Sprintf("[yellow]%c %s %s[-]", spinner(el), a.tr("working…"), el)
		short := w
		if a.workLabel == "plan" {
			// The mode says what the work is: a plan is researched
			// read-only, then asked about, then run step by step.
			w = "[::b]" + a.tr("plan mode") + "[::-] │ " + w
			short = "[::b]" + a.tr("plan") + "[::-] " + short
		}
		if r := a.rs.runningSteps(a.tr("%d step(s) running: %s")); r != "" {
			w += " [gray]" + escape(r) + "[-]"
		} else if r := a.rs.running(); r != "" {
			w += " [gray]" + escape(r) + "[-]"
		} else if a.bl.think != nil {
			w += " [gray]" + a.tr("thinking") + "[-]"
		}
		add(w, short, 10, 0)
		add("[gray]"+a.tr("Ctrl-C cancels")+"[-]", "", 0, 1)
	} else {
		add("[gray]"+a.tr("ready")+"[-]", "", 0, 2)
	}
	a.statusParts = parts
	a.fitStatus()
}

// fitStatus sets the status line from statusParts so that it fits the
// screen's width: the parts are shortened and left out in the order of
// their ranks (hints and token counts first, what is running never), so
// that the model, the posture and the work stay in sight at 80 columns.
// UI goroutine only.
func (a *App) fitStatus() {
	parts := a.statusParts
	text := make([]string, len(parts))
	for i, p := range parts {
		text[i] = p.full
	}
	width := func() int {
		n := 1 // the leading space
		for _, t := range text {
			if t != "" {
				if n > 1 {
					n += 3 // " │ "
				}
				n += tview.TaggedStringWidth(t)
			}
		}
		return n
	}
	type step struct {
		rank, part int
		to         string
	}
	var steps []step
	for i, p := range parts {
		if p.shortAt > 0 {
			steps = append(steps, step{p.shortAt, i, p.short})
		}
		if p.dropAt > 0 {
			steps = append(steps, step{p.dropAt, i, ""})
		}
	}
	sort.SliceStable(steps, func(i, j int) bool { return steps[i].rank < steps[j].rank })
	for _, st := range steps {
		if a.screenW <= 0 || width() <= a.screenW {
			break
		}
		if text[st.part] != "" {
			text[st.part] = st.to
		}
	}
	var shown []string
	for _, t := range text {
		if t != "" {
			shown = append(shown, t)
		}
	}
	a.statusW = a.screenW
	a.status.SetText(" " + strings.Join(shown, " │ "))
}

// money renders a cost: $ for USD, ¥ for CNY, else the currency code.
func money(v float64, currency string) string {
	sym := currency + " "
	switch currency {
	case "", "USD":
		sym = "$"
	case "CNY", "RMB":
		sym = "¥"
	}
	if v < 0.1 {
		return fmt.Sprintf("%s%.4f", sym, v)
	}
	return fmt.Sprintf("%s%.2f", sym, v)
}

func spinner(d time.Duration) rune {
	const frames = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
	r := []rune(frames)
	return r[int(d/tick)%len(r)]
}

// count renders a token count compactly.
func count(n int) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 10_000:
		return fmt.Sprintf("%.0fk", float64(n)/1e3)
	case n >= 1_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// oneLine is s on one line, clipped to n bytes, with the characters
// escape makes visible made visible first: a carriage return in a
// command is shown as ^M, not as the space it would collapse to.
func oneLine(s string, n int) string { return text.Clip(text.OneLine(text.Visible(s)), n) }

// escape is markup that shows s as it is: what a model, a tool or a
// server wrote, shown as text. tview's style tags in s are escaped, and
// the characters that would otherwise break a line, vanish or reorder
// what a person reads (a carriage return, ESC, U+202E) are made visible
// (^M, ^[, <U+202E>: text.Visible), so a command under approval reads as
// what will run. A skin-tone modifier on an emoji is dropped
// (dropToneModifiers).
func escape(s string) string { return escapeTags(dropToneModifiers(' ', text.Visible(s))) }

// dropToneModifiers removes the skin-tone modifiers (U+1F3FB to U+1F3FF)
// that follow another character, so 👍🏽 shows as 👍. The line breaker
// tview wraps with (uniseg v0.4.7) ends the line after an emoji modifier
// sequence as if a newline followed it, which broke "CCC 👍🏽 DDD" into two
// lines, the second starting with a space. A modifier alone stays; prev
// is the character before s (a space at the start of a text).
func dropToneModifiers(prev rune, s string) string {
	// Every modifier encodes as F0 9F 8F BB to BF.
	if !strings.Contains(s, "\xf0\x9f\x8f") {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if r >= 0x1F3FB && r <= 0x1F3FF && !unicode.IsSpace(prev) {
			continue
		}
		b.WriteRune(r)
		prev = r
	}
	return b.String()
}

// escapeTags is tview.Escape for any text: tview takes "[", characters
// other than brackets, one or more "[" and "]" for an escaped tag and
// shows it less one "[", while tview.Escape escapes only the brackets
// around the characters a tag may hold, so text such as "^[[1m^[]0;"
// (two escape sequences in caret notation) lost a "[". Every such "]"
// gets its "[" here.
func escapeTags(s string) string {
	if strings.IndexByte(s, ']') < 0 {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '[' {
			continue
		}
		j := i + 1
		for j < len(s) && s[j] != '[' && s[j] != ']' {
			j++
		}
		if j == i+1 {
			continue
		}
		for j < len(s) && s[j] == '[' {
			j++
		}
		if j < len(s) && s[j] == ']' {
			b.WriteString(s[last:j])
			b.WriteString("[]")
			last, i = j+1, j
		}
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}
