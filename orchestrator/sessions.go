package orchestrator

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/reasonix/reasonix/agents"
	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/checkpoint"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/roles"
)

// sessionLog is a worker's transcript: each message as it is appended,
// and at the end of each step the session's state (store.Meta: title,
// model, turns, usage, todos, goal), synced to disk.
//
// The sync at the end of a step runs behind the next request rather than
// before it: it costs a millisecond or more of waiting on the disk, on
// the path from a tool's result to the model. So does a mark's, which
// would otherwise stand between a checkpoint and the change it guards.
// The end of the next step, any mark and closing wait for it first (a
// coordinator's session hands closing's wait to the coordinator, whose
// Wait the program calls before it exits), so the file is still synced
// step by step; a crash of the machine within that millisecond can lose
// the step before the one in flight too. A crash of Reasonix alone loses
// nothing written: the lines are in the kernel's cache already.
type sessionLog struct {
	w *worker

	mu sync.Mutex
	// t is the open file. A new session holds its messages until its
	// first request goes out, so a conversation opened and never used
	// leaves no file behind. The file (and the sessions directory with
	// its .gitignore) is made while that request is out (StartStep),
	// with the header, the messages so far and a state record, so a
	// process killed before the answer is over keeps the prompt as a
	// conversation to continue; no disk work stands between a run's
	// start and its first request.
	t *store.Transcript
	// opening is closed once the file started by StartStep is created,
	// with the result in opened and openErr; nil when none is started.
	// The goroutine making it never takes mu (Append waits for it with
	// mu held): it gets what it writes by value, and openedN says how
	// many of pending it wrote.
	opening chan struct{}
	opened  *store.Transcript
	openErr error
	openedN int
	dir     string
	seals   *store.Seals
	hdr     store.Header
	pending []providers.Message
	// requests are request records held with pending until the file
	// exists; they follow the messages (records are read in any order).
	requests []store.Request
	title    string
	turns    int
	// syncing is closed when the sync started at the end of the last
	// step has finished, with its result in syncErr; nil when none runs.
	syncing chan struct{}
	syncErr error
	// behind, when set, owns what closing leaves running: the last sync
	// and then the file's close (see close).
	behind *closings
}

// waitSync waits for the sync the last step started and returns its
// error. Call with l.mu held.
func (l *sessionLog) waitSync() error {
	if l.syncing == nil {
		return nil
	}
	<-l.syncing
	err := l.syncErr
	l.syncing, l.syncErr = nil, nil
	return err
}

// begun reports whether the file exists or is being created.
func (l *sessionLog) begun() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.t != nil || l.opening != nil
}

// StartStep creates the file in the background when it does not exist
// yet (agents.StepStarter), with the messages so far and the session's
// state: the step that is starting will end, and its end writes to the
// file; until then a kill keeps the prompt.
func (l *sessionLog) StartStep() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.t != nil || l.opening != nil {
		return
	}
	done := make(chan struct{})
	l.opening = done
	first := make([]any, 0, len(l.pending)+1)
	for _, m := range l.pending {
		first = append(first, m)
	}
	l.openedN = len(l.pending)
	if l.turns > 0 {
		// The state record makes it a conversation --continue finds.
		first = append(first, l.meta())
	}
	dir, seals, hdr := l.dir, l.seals, l.hdr
	go func() {
		defer close(done)
		l.opened, l.openErr = create(dir, seals, hdr, first...)
	}()
}

// create makes the sessions directory (ignored by git) and the file,
// sealed with seals.
func create(dir string, seals *store.Seals, hdr store.Header, first ...any) (*store.Transcript, error) {
	if err := store.EnsureIgnored(dir); err != nil {
		return nil, err
	}
	return seals.Create(dir, hdr, first...)
}

// file returns the open transcript, creating it on first use (or taking
// the one StartStep created) and writing the lines held until then. Call
// with l.mu held.
func (l *sessionLog) file() (*store.Transcript, error) {
	if l.t != nil {
		return l.t, nil
	}
	var t *store.Transcript
	var err error
	written := 0
	if l.opening != nil {
		<-l.opening
		t, err = l.opened, l.openErr
		written = l.openedN
		l.opening, l.opened, l.openErr, l.openedN = nil, nil, nil, 0
	} else {
		t, err = create(l.dir, l.seals, l.hdr)
	}
	if err != nil {
		return nil, err
	}
	l.t = t
	for _, m := range l.pending[written:] {
		if err := t.Append(m); err != nil {
			return nil, err
		}
	}
	l.pending = nil
	for _, r := range l.requests {
		if err := t.Record(r); err != nil {
			return nil, err
		}
	}
	l.requests = nil
	return t, nil
}

func (l *sessionLog) Append(m providers.Message) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m.Role == providers.RoleUser {
		l.turns++
		if l.title == "" {
			l.title = store.TitleFrom(m.Content)
		}
		if l.t == nil && l.hdr.Title == "" {
			// The header carries the title from the start.
			l.hdr.Title = l.title
		}
		if l.w.fam != nil && l.w.fam.turn != nil {
			l.w.fam.turn.arm(l.w.checkpointer(l.turns))
		}
	}
	if l.t == nil && (m.Role == providers.RoleSystem || m.Role == providers.RoleUser) {
		l.pending = append(l.pending, m)
		return nil
	}
	if l.t == nil {
		// The model has answered, so the first request is over: the file
		// is made now, with a state record, so that a crash in this
		// step's tool calls keeps the prompt, the answer and the results
		// in as a conversation to continue.
		t, err := l.file()
		if err != nil {
			return err
		}
		if err := t.Append(m); err != nil {
			return err
		}
		return t.Record(l.meta())
	}
	return l.t.Append(m)
}

// EndStep writes the session's state and starts syncing the file, once
// the previous step's sync is done (see sessionLog).
func (l *sessionLog) EndStep() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.waitSync(); err != nil {
		return err
	}
	t, err := l.file()
	if err != nil {
		return err
	}
	if err := t.Record(l.meta()); err != nil {
		return err
	}
	l.syncBehind(t)
	return nil
}

// syncBehind starts syncing the file, to be waited for by the next
// step's end, mark or closing. Call with l.mu held, no sync running.
func (l *sessionLog) syncBehind(t *store.Transcript) {
	done := make(chan struct{})
	l.syncing = done
	go func() {
		defer close(done)
		l.syncErr = t.Sync()
	}()
}

// RecordRequest appends a request record (agents.RequestRecorder): its
// usage, cost and prefix fingerprint, for `reasonix stats` and `diff`.
func (l *sessionLog) RecordRequest(r agents.Request) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	rec := store.Request{Type: store.TypeRequest, Time: time.Now().UTC(), Turn: r.Turn, Usage: r.Usage, Prefix: r.Prefix, Reset: r.Reset}
	if l.t == nil {
		l.requests = append(l.requests, rec)
		return nil
	}
	return l.t.Record(rec)
}

// mark appends a checkpoint or rewind record. Its sync runs behind, as a
// step's does: a checkpoint's mark stands between the checkpoint and the
// change it guards, and the checkpoint itself, with its session and turn,
// is on disk already (internal/checkpoint syncs it).
func (l *sessionLog) mark(m store.Mark) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.waitSync(); err != nil {
		return err
	}
	t, err := l.file()
	if err != nil {
		return err
	}
	if err := t.Record(m); err != nil {
		return err
	}
	l.syncBehind(t)
	return nil
}

// turnCount is how many user turns the session has.
func (l *sessionLog) turnCount() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.turns
}

// close closes the file if it was ever created.
//
// With behind set, a sync still running is not waited for here: it and
// then the file's close go on in behind's care, so a run's last sync
// overlaps the work of its exit (the coordinator's Wait, which the
// program calls before it exits, waits for them). Every line is written
// before close returns; only the wait for the disk moves.
func (l *sessionLog) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	// syncErr is the sync's to write until syncing is closed: left alone.
	syncing := l.syncing
	l.syncing = nil
	if l.opening != nil {
		// Created for a step that has not ended: its lines go in too.
		_, _ = l.file()
	}
	t := l.t
	if syncing != nil && l.behind != nil {
		l.behind.add(syncing, t)
		return
	}
	if syncing != nil {
		<-syncing
	}
	if t != nil {
		_ = t.Close()
	}
}

// closings are the session files closed with their last sync still
// running (sessionLog.close), each done once its sync has finished and the
// file is closed. Not a sync.WaitGroup: a session may close while wait
// runs (a subagent ending as the program exits), which a WaitGroup does
// not allow.
type closings struct {
	mu   sync.Mutex
	done []chan struct{}
}

// add closes t once syncing is closed.
func (q *closings) add(syncing <-chan struct{}, t *store.Transcript) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-syncing
		_ = t.Close()
	}()
	q.mu.Lock()
	defer q.mu.Unlock()
	// The finished ones go, so a long session of the TUI keeps no list.
	q.done = slices.DeleteFunc(q.done, func(c chan struct{}) bool {
		select {
		case <-c:
			return true
		default:
			return false
		}
	})
	q.done = append(q.done, done)
}

// wait waits for every file added, those added meanwhile too.
func (q *closings) wait() {
	for {
		q.mu.Lock()
		d := q.done
		q.done = nil
		q.mu.Unlock()
		if len(d) == 0 {
			return
		}
		for _, c := range d {
			<-c
		}
	}
}

// meta is the session's state now. Call with l.mu held.
func (l *sessionLog) meta() store.Meta {
	m := store.Meta{Type: store.TypeMeta, Updated: time.Now().UTC(), Title: l.title, Model: l.w.key(), Effort: l.w.effortLevel(), Turns: l.turns}
	if l.w.Session != nil {
		m.Usage = l.w.Usage()
		m.Todos = l.w.Env().Todos()
	}
	m.Goal = l.w.goalState()
	m.Notes = l.w.notesSnapshot()
	return m
}

// goalState returns a copy of the worker's goal, or nil.
func (w *worker) goalState() *events.GoalState {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.goal == nil {
		return nil
	}
	g := *w.goal
	return &g
}

func (w *worker) setGoal(st *events.GoalState) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if st == nil {
		w.goal = nil
		return
	}
	g := *st
	w.goal = &g
}

// SessionsDir is where this run's session files live ("" without a state
// directory).
func (c *Coordinator) SessionsDir() string {
	if c.rt.StateDir == "" {
		return ""
	}
	return filepath.Join(c.rt.StateDir, "sessions")
}

// Seals keeps the seals of this run's session files (nil when sessions
// are not saved or there is no Reasonix home).
func (c *Coordinator) Seals() *store.Seals { return c.seals }

// FindSession resolves a session id or unique prefix to its file; an
// empty id is the newest top-level session (--continue).
func (c *Coordinator) FindSession(id string) (string, error) {
	dir := c.SessionsDir()
	if dir == "" {
		return "", errors.New("sessions are not saved in this run (no state directory)")
	}
	return FindSession(dir, id)
}

// FindSession resolves id (or a unique prefix) in dir; an empty id is the
// newest conversation (a top-level executor session).
func FindSession(dir, id string) (string, error) {
	if id != "" {
		return store.Find(dir, id)
	}
	list, err := Conversations(dir)
	if err != nil {
		return "", err
	}
	if len(list) == 0 {
		return "", fmt.Errorf("no conversation with a turn in %s yet", dir)
	}
	return list[0].Path, nil
}

// Conversations lists the sessions in dir worth resuming, newest first:
// top-level executor sessions with at least one turn (not planners, not
// subagents, not plan workers, not conversations opened and never used).
func Conversations(dir string) ([]store.Summary, error) {
	list, _, err := store.List(dir, false)
	if err != nil {
		return nil, err
	}
	out := list[:0]
	for _, s := range list {
		if s.Role == roles.Executor && s.Step == "" && s.Turns > 0 {
			out = append(out, s)
		}
	}
	return out, nil
}

// resumeState is what a resumed worker starts from.
type resumeState struct {
	loaded *store.Loaded
}

// Resume reopens the session saved at path as the conversation: the same
// id and file, its history (repaired: see store.Load), todos, goal and
// model (modelRef, when not empty, overrides the saved model). Notices
// about repairs are published. A file that is not what Reasonix last
// wrote is refused with a *store.ModifiedError (see store.Seals): its
// lines would be sent on as the person's.
func (c *Coordinator) Resume(path, modelRef string) (*Conversation, error) {
	l, err := c.seals.Load(path, store.Refuse)
	if err != nil {
		return nil, err
	}
	if l.Header.Parent != "" {
		return nil, fmt.Errorf("session %s is a subagent of %s; resume that one", l.Header.ID, l.Header.Parent)
	}
	if l.Header.Role != "" && l.Header.Role != roles.Executor {
		return nil, fmt.Errorf("session %s is a %s session, not a conversation; resume the executor session it worked for", l.Header.ID, l.Header.Role)
	}
	for _, n := range l.Notices {
		c.rt.Sink.Publish(events.Event{Type: events.Notice, Session: l.Header.ID, Text: "resume: " + n})
	}
	if modelRef == "" {
		modelRef = l.Meta.Model
		if modelRef != "" {
			if _, _, err := c.rt.Resolve(modelRef); err != nil {
				c.rt.Sink.Publish(events.Event{Type: events.Notice, Session: l.Header.ID,
					Text: fmt.Sprintf("resume: the session's model %q is not configured any more (%v); using the default", modelRef, err)})
				modelRef = ""
			}
		}
	}
	w, err := c.openGoalSessionWith(&resumeState{loaded: l}, "", modelRef)
	if err != nil {
		return nil, err
	}
	c.settleToolChanges()
	cv := &Conversation{c: c, w: w}
	cv.sent.Store(true) // it has history: its prefix is what was cached
	return cv, nil
}

// keepCheckpoints is how many checkpoints of a workspace are kept.
const keepCheckpoints = 100

// turnCheckpoint takes one workspace checkpoint per user turn of a
// conversation, before the turn's first change, whoever makes it (the
// conversation or one of its subagents: they share it). Writers that
// arrive while it is being taken wait for it.
type turnCheckpoint struct {
	mu   sync.Mutex
	take func(ctx context.Context) // nil once taken, until the next turn
}

// arm makes the next change of the turn take a checkpoint first.
func (t *turnCheckpoint) arm(take func(ctx context.Context)) {
	t.mu.Lock()
	t.take = take
	t.mu.Unlock()
}

// before runs before a change: the first one of the turn checkpoints.
func (t *turnCheckpoint) before(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.take != nil {
		take := t.take
		t.take = nil
		take(ctx)
	}
	return nil
}

// checkpointer returns what checkpoints the workspace before w's turn:
// the checkpoint, then a mark in the session file naming it. A failure is
// a notice, not a refused call: the change goes ahead, and rewind says it
// cannot restore the files of that turn.
func (w *worker) checkpointer(turn int) func(ctx context.Context) {
	return func(ctx context.Context) {
		notice := func(text string) {
			w.c.rt.Sink.Publish(events.Event{Type: events.Notice, Session: w.ID(), Role: w.Role(), Text: text})
		}
		st, err := w.c.rt.Checkpoints()
		if err != nil {
			notice("checkpoint: " + err.Error() + "; rewind cannot restore this turn's files")
			return
		}
		rep, err := st.Checkpoint(ctx, checkpoint.Labels{Session: w.ID(), Turn: turn})
		if err != nil {
			notice("checkpoint: " + err.Error() + "; rewind cannot restore this turn's files")
			return
		}
		if len(rep.Skipped) > 0 {
			var names []string
			for _, s := range rep.Skipped {
				names = append(names, s.Path)
			}
			notice(fmt.Sprintf("checkpoint left out %d path(s) rewind will not restore: %s", len(names), text.Clip(strings.Join(names, ", "), 300)))
		}
		if w.log != nil {
			if err := w.log.mark(store.Mark{Type: store.TypeCheckpoint, Time: time.Now().UTC(), Turn: turn, Checkpoint: rep.ID}); err != nil {
				notice("checkpoint: " + err.Error())
			}
		}
		// The store is bounded: past twice the limit, the oldest go (a
		// rewind that far back then restores the conversation only).
		if n, err := st.Count(); err == nil && n > 2*keepCheckpoints {
			if _, err := st.Prune(keepCheckpoints); err != nil {
				notice("checkpoint: prune: " + err.Error())
			}
		}
	}
}
