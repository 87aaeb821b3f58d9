package orchestrator

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/reasonix/reasonix/agents"
	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/roles"
)

// modelPin is the model a session's subagents inherit: its task tool and
// skill runner share one, so a switch reaches both.
type modelPin struct {
	mu  sync.Mutex
	ref string
}

func (p *modelPin) get() string {
	if p == nil {
		return ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ref
}

// set pins ref; on a nil pin (a worker that starts no subagents) it
// does nothing.
func (p *modelPin) set(ref string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.ref = ref
	p.mu.Unlock()
}

// Efforts are the reasoning effort levels a person can pick (/effort).
var Efforts = []string{"low", "medium", "high"}

// switchTo resolves ref for a session switch.
func (c *Coordinator) switchTo(ref string) (agents.Switch, error) {
	if c.rt.Resolve == nil {
		return agents.Switch{}, errors.New("no model resolver configured")
	}
	prov, model, err := c.rt.Resolve(ref)
	if err != nil {
		return agents.Switch{}, err
	}
	return agents.Switch{Provider: prov, Model: model, Window: providers.WindowOf(prov, model), Price: priceOf(prov, model)}, nil
}

// SetModel sends the conversation's next requests to the model ref
// ("provider/model", or any reference default_model accepts) and saves
// the choice in the session file, so `--continue` and `/resume` keep it.
// It waits for a running turn.
func (cv *Conversation) SetModel(ref string) (string, error) {
	sw, err := cv.c.switchTo(ref)
	if err != nil {
		return "", err
	}
	cv.mu.Lock()
	defer cv.mu.Unlock()
	if err := cv.w.SetModel(sw); err != nil {
		return "", err
	}
	key := cv.w.ModelKey()
	cv.w.mu.Lock()
	cv.w.modelRef, cv.w.modelKey = ref, key
	cv.w.mu.Unlock()
	if l := cv.w.log; l != nil {
		// A file not written yet starts with the model it will use.
		l.mu.Lock()
		if l.t == nil && l.opening == nil {
			l.hdr.Model = sw.Model
		}
		l.mu.Unlock()
	}
	// Subagents and subagent skills with no model of their own inherit
	// the conversation's: from now on, the switched one.
	cv.w.pin().set(ref)
	return key, cv.save()
}

// pin is the model the worker's subagents inherit (nil when it starts
// none).
func (w *worker) pin() *modelPin {
	if t, ok := w.Tools().Get(TaskTool); ok {
		if tt, ok := t.(*taskTool); ok {
			return tt.model
		}
	}
	return nil
}

// borrowModel sends w's next turn to modelRef, the model a custom command
// asks for (command names it in notices), and returns the function that
// gives w its own model back when the turn has ended. Nothing is saved:
// the session file, `--continue` and later turns keep w's model, and the
// prefix bytes stay the same (see agents.Session.BorrowModel). A
// reference no provider resolves (a command written for another tool's
// models) is a notice, and the turn stays on w's model.
func (c *Coordinator) borrowModel(w *worker, modelRef, command string) func() {
	if modelRef == "" {
		return func() {}
	}
	if command == "" {
		command = "the command"
	}
	sw, err := c.switchTo(modelRef)
	if err != nil {
		w.sink.Publish(events.Event{Type: events.Notice, Session: w.ID(),
			Text: fmt.Sprintf("%s asks for the model %q, which is not configured (%v); this turn uses %s", command, modelRef, err, w.key())})
		return func() {}
	}
	own := w.key()
	turn := sw.Provider.Name() + "/" + sw.Model
	if turn == own {
		return func() {}
	}
	restore, err := w.BorrowModel(sw)
	if err != nil {
		w.sink.Publish(events.Event{Type: events.Notice, Session: w.ID(),
			Text: fmt.Sprintf("%s asks for the model %q: %v; this turn uses %s", command, modelRef, err, own)})
		return func() {}
	}
	w.sink.Publish(events.Event{Type: events.Notice, Session: w.ID(),
		Text: fmt.Sprintf("%s runs on %s for this turn; the conversation stays on %s", command, turn, own)})
	// Subagents the turn starts with no model of their own inherit the
	// turn's model, as they would the conversation's.
	pin := w.pin()
	ownRef := pin.get()
	if pin != nil {
		pin.set(modelRef)
	}
	return func() {
		restore()
		if pin != nil {
			pin.set(ownRef)
		}
	}
}

// SetEffort sets the reasoning effort of the conversation's next requests
// ("" for the provider's configured one) and saves it like the model.
func (cv *Conversation) SetEffort(level string) error {
	if err := checkEffort(level); err != nil {
		return err
	}
	cv.mu.Lock()
	defer cv.mu.Unlock()
	cv.w.SetEffort(level)
	cv.w.mu.Lock()
	cv.w.effort = level
	cv.w.mu.Unlock()
	return cv.save()
}

// save writes the session's state once it has a file (a conversation with
// no turn yet writes its state with its first step). Call with cv.mu held.
func (cv *Conversation) save() error {
	if cv.w.log == nil || !cv.used() {
		return nil
	}
	if err := cv.w.log.EndStep(); err != nil {
		return fmt.Errorf("save the session's model: %w", err)
	}
	return nil
}

func checkEffort(level string) error {
	if level == "" {
		return nil
	}
	for _, e := range Efforts {
		if e == level {
			return nil
		}
	}
	return fmt.Errorf("reasoning effort %q: want %s (or default)", level, strings.Join(Efforts, ", "))
}

// Model is "provider/model" of the conversation's next request. It never
// waits for a running turn.
func (e *Engine) Model() string { return e.conversation().w.key() }

// SetModel switches the conversation to the model ref for its next
// request, and every conversation this engine opens later (/new); a
// resumed session keeps its own saved model. It returns the resolved
// "provider/model". Call it between turns.
func (e *Engine) SetModel(ref string) (string, error) {
	ref = strings.TrimSpace(ref)
	if ref == "" {
		return "", errors.New("no model given; a model reference is provider/model")
	}
	key, err := e.conversation().SetModel(ref)
	if err != nil {
		return "", err
	}
	e.mu.Lock()
	e.model = ref
	e.mu.Unlock()
	return key, nil
}

// Effort is the reasoning effort of the conversation's next request; ""
// is the provider's configured reasoning_effort.
func (e *Engine) Effort() string { return e.conversation().w.effortLevel() }

// key is the worker's "provider/model".
func (w *worker) key() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.modelKey
}

// effortLevel is the reasoning effort a person chose for the worker.
func (w *worker) effortLevel() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.effort
}

// SetEffort sets the reasoning effort (low, medium, high; "" or "default"
// for the provider's configured one) like SetModel sets the model.
func (e *Engine) SetEffort(level string) error {
	level = strings.ToLower(strings.TrimSpace(level))
	if level == "default" {
		level = ""
	}
	if err := e.conversation().SetEffort(level); err != nil {
		return err
	}
	e.mu.Lock()
	e.effort = level
	e.mu.Unlock()
	return nil
}

// adopt gives a conversation this engine opened the model and effort a
// person chose earlier in the run.
func (e *Engine) adopt(conv *Conversation) {
	e.mu.Lock()
	model, effort := e.model, e.effort
	e.mu.Unlock()
	if model != "" {
		if _, err := conv.SetModel(model); err != nil {
			e.c.rt.Sink.Publish(events.Event{Type: events.Notice, Session: conv.ID(),
				Text: fmt.Sprintf("the model %q chosen earlier is not usable (%v); using the default", model, err)})
		}
	}
	if effort != "" {
		_ = conv.SetEffort(effort)
	}
}

// Agents lists the subagents the model can delegate to, with where each
// was defined (Source "builtin" or "agent", Path the agent file).
func (e *Engine) Agents() []events.Command {
	var out []events.Command
	for _, r := range e.c.subagents() {
		c := events.Command{Name: r.Name, Description: r.Description, Source: r.Source}
		if r.Source != roles.SourceBuiltin {
			c.Source, c.Path = "agent", r.Source
			if rel, err := filepath.Rel(e.c.rt.Workspace, r.Source); err == nil && !strings.HasPrefix(rel, "..") {
				c.Source = "agent (project)"
			} else {
				c.Source = "agent (user)"
			}
		}
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// SavedUsage sums the requests recorded in the conversation's session
// file: every request it made, in this run and in earlier ones it was
// resumed from (its subagents keep files of their own). It reads the
// file, so call it on demand (/cost), not per frame.
func (e *Engine) SavedUsage() (providers.Usage, int, error) {
	path := e.conversation().w.path
	var total providers.Usage
	if path == "" {
		return total, 0, nil
	}
	l, err := store.Load(path)
	if errors.Is(err, fs.ErrNotExist) {
		return total, 0, nil // no turn yet
	}
	if err != nil {
		return total, 0, err
	}
	for _, r := range l.Requests {
		total.Add(r.Usage)
	}
	return total, len(l.Requests), nil
}
