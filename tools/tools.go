// Package tools defines the Tool interface the session loop executes, the
// per-run environment tools work in, the init-time catalogue that built-in
// tools register into, the per-run Registry, and output truncation.
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/reasonix/reasonix/events"
)

// Tool is one capability offered to the model.
type Tool interface {
	Name() string
	Description() string
	// Schema is the JSON schema of the arguments object, the same bytes on
	// every call (they are part of the cached prompt prefix). The built-in
	// tools return constants generated at build time from their argument
	// structs by tools/schemagen (go generate; see schemas_gen.go).
	Schema() json.RawMessage
	// ReadOnly reports whether the tool never changes anything; read-only
	// calls in one assistant message run in parallel.
	ReadOnly() bool
	// Execute runs the tool. An error is a failure the model should see
	// and can act on (bad arguments, file not found); it becomes an error
	// result, not the end of the session.
	Execute(ctx context.Context, env *Env, args json.RawMessage) (Result, error)
}

// Preparer is a tool that can get ready for a call while the session is
// still deciding on it (hooks, the gate, the checkpoint before a change):
// Prepare runs concurrently with those and does work every call of the
// tool needs whatever its arguments, so it must do nothing a refused call
// would regret. The call itself waits for whatever Prepare still holds.
type Preparer interface {
	Prepare(env *Env)
}

// Result is what a tool returns to the model.
type Result struct {
	Content string
	IsError bool
	// Summary is one line for humans (front ends), e.g. "updated main.go +3 -1".
	Summary string
	// Diff is the change a file tool made, as a unified diff, for front
	// ends to show; it never reaches the model.
	Diff string
	// Todos is set by the todo tools so front ends can render the list.
	Todos []events.Todo
	// Halt ends the session after this step (submit_plan, goal_status):
	// the model has handed over its structured answer.
	Halt bool
}

// PathGuard turns a path argument into an absolute, confined path. The
// permission package provides the real one (symlinks, allow lists).
type PathGuard interface {
	Resolve(path string, write bool) (string, error)
}

// ReadRooter is implemented by path guards whose read roots can grow
// during a run: a loaded skill's folder becomes readable.
type ReadRooter interface {
	AllowRead(dir string) error
}

// AllowRead makes dir readable through the guard for the rest of the run,
// when the guard supports it (a lexical guard reads only the workspace).
func (e *Env) AllowRead(dir string) error {
	if r, ok := e.Guard.(ReadRooter); ok {
		return r.AllowRead(dir)
	}
	return nil
}

// Env is the per-session environment tools run in.
type Env struct {
	// Root is the absolute workspace root; relative paths resolve against it.
	Root string
	// Guard confines paths; nil means a lexical check against Root.
	Guard PathGuard
	// OutputLimit is the byte budget of one result (default 30000).
	OutputLimit int
	// BashTimeout is the default and BashMaxTimeout the cap of a bash call.
	BashTimeout    time.Duration
	BashMaxTimeout time.Duration
	// Sandbox, when set, starts a shell command confined, in place of
	// cmd.Start.
	Sandbox func(cmd *exec.Cmd) error
	// PrepareSandbox, when set, does ahead of a command what Sandbox
	// would do first for any command (permission.Sandbox.Prepare).
	PrepareSandbox func()
	// Shell is the shell executable bash commands run in ([tools.shell]
	// path); empty finds bash, else sh, on PATH.
	Shell string
	// TempDir, when set, is the run's private temporary directory: shell
	// commands get it as TMPDIR (and TMP, TEMP).
	TempDir string
	// MakeTempDir, when set, makes TempDir the first time it is called
	// (a run makes it for its first command, not at start) and reports
	// whether that failed; no command starts before it returns nil.
	MakeTempDir func() error
	// ReadDenied, when set, reports whether a file a tool found by itself
	// (grep's walk of a folder) may not be read: a Read deny rule or the
	// read deny list names it. The gate judges only the paths a call
	// names; nil denies nothing more.
	ReadDenied func(abs string) bool
	// WriteRoots are the folders confined commands may write (the
	// workspace, also for a plan worker whose Root is its worktree, and
	// allow_write): a program Reasonix runs itself, outside the sandbox
	// (ripgrep), is never one found on PATH there or in Root
	// (internal/lookpath).
	WriteRoots []string
	// Secrets are withheld from shell commands' environment and redacted
	// from every tool result; nil still withholds DefaultSecretEnv.
	Secrets *Secrets
	// Publish sends events (may be nil).
	Publish func(events.Event)
	// Reads remembers which files this session has read, so write_file
	// can refuse to overwrite a file the model has never seen.
	Reads *ReadSet
	// State holds per-session values owned by individual tools (todo list).
	State *State
	// Session is the id of the session the tools work for.
	Session string
	// Asker, when set, lets the ask tool put a question to a person; nil
	// is a run no one watches.
	Asker Asker
	// Editor, when set, is an editor's view of the files (see [Editor]).
	Editor Editor
}

// Editor is an editor's view of the workspace's files, such as an Agent
// Client Protocol client's open buffers. File tools read through it, so
// they see unsaved changes, and tell it what they wrote, so edits show
// in the editor at once. Disk stays the record: every write still lands
// there first, so checkpoints, rewind and the control-file guard see it.
// Implementations bound their own waiting; a file the editor cannot give
// is read from disk.
type Editor interface {
	// ReadText returns the editor's text of the file at abs; ok is false
	// when the editor has nothing to say about it.
	ReadText(session, abs string) (text string, ok bool)
	// Wrote tells the editor the file at abs now holds content.
	Wrote(session, abs, content string)
}

// Resolve resolves a path argument through the guard.
func (e *Env) Resolve(p string, write bool) (string, error) {
	if e.Guard != nil {
		return e.Guard.Resolve(p, write)
	}
	return lexicalResolve(e.Root, p)
}

// Limit returns the output budget in bytes.
func (e *Env) Limit() int {
	if e.OutputLimit > 0 {
		return e.OutputLimit
	}
	return 30000
}

func lexicalResolve(root, p string) (string, error) {
	if p == "" {
		return "", fmt.Errorf("path is empty")
	}
	abs := p
	if !filepath.IsAbs(p) {
		abs = filepath.Join(root, p)
	}
	abs = filepath.Clean(abs)
	rel, err := filepath.Rel(root, abs)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q is outside the workspace %s", p, root)
	}
	return abs, nil
}

// ReadSet is a concurrency-safe set of absolute paths.
type ReadSet struct {
	mu sync.Mutex
	m  map[string]bool
}

// Add marks path as read.
func (r *ReadSet) Add(path string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	if r.m == nil {
		r.m = map[string]bool{}
	}
	r.m[path] = true
	r.mu.Unlock()
}

// Has reports whether path was read.
func (r *ReadSet) Has(path string) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[path]
}

// State is a small concurrency-safe key/value store for per-session tool state.
type State struct {
	mu sync.Mutex
	m  map[string]any
}

// Get returns the value under key.
func (s *State) Get(key string) any {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[key]
}

// Set stores v under key.
func (s *State) Set(key string, v any) {
	if s == nil {
		return
	}
	s.mu.Lock()
	if s.m == nil {
		s.m = map[string]any{}
	}
	s.m[key] = v
	s.mu.Unlock()
}

// LoadOrStore returns the value under key, first storing mk() there when
// there is none, atomically.
func (s *State) LoadOrStore(key string, mk func() any) any {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.m[key]; ok {
		return v
	}
	if s.m == nil {
		s.m = map[string]any{}
	}
	v := mk()
	s.m[key] = v
	return v
}

// Close closes every value in the state that is an [io.Closer] (a
// session's background jobs), for the end of its session. Values stay in
// place, so a closed value can refuse further use.
func (s *State) Close() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	var closers []io.Closer
	for _, v := range s.m {
		if c, ok := v.(io.Closer); ok {
			closers = append(closers, c)
		}
	}
	s.mu.Unlock()
	var errs []error
	for _, c := range closers {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// NewEnv returns an Env rooted at root with fresh per-session state.
func NewEnv(root string) *Env {
	return &Env{Root: root, Reads: &ReadSet{}, State: &State{}}
}

// Fork returns a copy of e with fresh per-session state, for a child session.
func (e *Env) Fork() *Env {
	c := *e
	c.Reads = &ReadSet{}
	c.State = &State{}
	return &c
}

// DecodeArgs unmarshals raw arguments into v with an error the model can
// act on. Empty arguments decode as {}.
func DecodeArgs(raw json.RawMessage, v any) error {
	if len(strings.TrimSpace(string(raw))) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("invalid arguments: %v; send a JSON object matching the tool schema", err)
	}
	return nil
}
