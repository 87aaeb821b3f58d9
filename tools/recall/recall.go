// Package recall holds the tools that reach past the current session: the
// read-only history search over saved sessions and their compaction
// archives, and memory (list, search, read, save, forget) over the
// Markdown memory files of internal/memory. cmd builds them with the
// directories of the run; they are not built-in registrations because
// they need those.
package recall

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/reasonix/reasonix/internal/memory"
	"github.com/reasonix/reasonix/internal/search"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/tools"
)

// Tool names.
const (
	HistoryTool = "history"
	MemoryTool  = "memory"
)

// Options are the directories the tools work in.
type Options struct {
	// Workspace is the project root; its sessions are
	// <Workspace>/.reasonix/sessions.
	Workspace string
	// Home is the Reasonix home: user memories live in <Home>/memory and
	// the projects `scope = global` searches are listed in
	// <Home>/projects (see [RegisterProject]).
	Home string
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

// Tools returns the history and memory tools.
func Tools(o Options) []tools.Tool {
	if o.Now == nil {
		o.Now = time.Now
	}
	st := memory.New(o.Workspace, o.Home)
	return []tools.Tool{
		&historyTool{o: o, ix: search.NewHistory()},
		&memoryTool{st: st, now: o.Now},
	}
}

// projectsFile lists the workspaces whose sessions a global history
// search reads, one absolute path a line.
func projectsFile(home string) string { return filepath.Join(home, "projects") }

// maxProjects bounds the projects file.
const maxProjects = 1000

// RegisterProject adds workspace to the projects a global history search
// reads (once; the newest last; at most 1000 kept).
func RegisterProject(home, workspace string) error {
	if home == "" || workspace == "" {
		return nil
	}
	list := readProjects(home)
	for _, p := range list {
		if p == workspace {
			return nil
		}
	}
	list = append(list, workspace)
	if len(list) > maxProjects {
		list = list[len(list)-maxProjects:]
	}
	// Replaced whole (a synced temporary file renamed over it): written
	// in place, a crash or a full disk midway would cut the list short.
	return store.WriteFileAtomic(projectsFile(home), []byte(strings.Join(list, "\n")+"\n"), 0o644)
}

func readProjects(home string) []string {
	f, err := os.Open(projectsFile(home))
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); filepath.IsAbs(l) {
			out = append(out, l)
		}
	}
	return out
}

// ---- history

type historyTool struct {
	o  Options
	ix *search.History
	mu sync.Mutex // one search at a time: the index is refreshed in place
}

type historyArgs struct {
	Operation string    `json:"operation,omitempty"`
	Query     string    `json:"query,omitempty"`
	Scope     string    `json:"scope,omitempty"`
	Ref       string    `json:"ref,omitempty"`
	Limit     tools.Int `json:"limit,omitempty" jsonschema:"default 10, max 50"`
}

func (t *historyTool) Name() string { return HistoryTool }

func (t *historyTool) Description() string {
	return "Search the saved transcripts of earlier sessions, messages compaction folded away included: " +
		"search (default) ranks messages by query keywords, in this project or every one (scope global); " +
		"around reads the transcript near a hit's ref. Recovers details a digest left out and earlier decisions."
}

func (t *historyTool) Schema() json.RawMessage { return json.RawMessage(historySchema) }
func (t *historyTool) ReadOnly() bool          { return true }

func decodeHistory(raw json.RawMessage) (historyArgs, error) {
	var a historyArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return a, err
	}
	switch a.Operation {
	case "", "search":
		a.Operation = "search"
		if strings.TrimSpace(a.Query) == "" {
			return a, errors.New("search needs a query")
		}
	case "around":
		if a.Ref == "" {
			return a, errors.New("around needs the ref of a search hit")
		}
	default:
		return a, fmt.Errorf("operation %q is not search or around", a.Operation)
	}
	switch a.Scope {
	case "", "project", "global":
	default:
		return a, fmt.Errorf("scope %q is not project or global", a.Scope)
	}
	return a, nil
}

// Access: a read of Reasonix's own transcripts, named by the query.
func (t *historyTool) Access(raw json.RawMessage) (tools.Access, error) {
	a, err := decodeHistory(raw)
	if err != nil {
		return tools.Access{}, err
	}
	d := "search " + text.Clip(a.Query, 80)
	if a.Operation == "around" {
		d = "around " + a.Ref
	}
	if a.Scope == "global" {
		d += " (all projects)"
	}
	return tools.Access{Kind: tools.KindRead, Detail: d}, nil
}

func (t *historyTool) dirs(scope string) []search.Dir {
	own := filepath.Join(t.o.Workspace, ".reasonix", "sessions")
	dirs := []search.Dir{{Project: t.o.Workspace, Path: own}}
	if scope != "global" {
		return dirs
	}
	for _, p := range readProjects(t.o.Home) {
		if p != t.o.Workspace {
			dirs = append(dirs, search.Dir{Project: p, Path: filepath.Join(p, ".reasonix", "sessions")})
		}
	}
	return dirs
}

func (t *historyTool) Execute(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	a, err := decodeHistory(raw)
	if err != nil {
		return tools.Result{}, err
	}
	dirs := t.dirs(a.Scope)
	if a.Operation == "around" {
		msgs, _, err := search.Around(dirs, a.Ref, 6, 2000)
		if err != nil {
			return tools.Result{}, err
		}
		var b strings.Builder
		fmt.Fprintf(&b, "Transcript around %s:\n", a.Ref)
		for _, m := range msgs {
			mark := ""
			if strings.HasSuffix(a.Ref, fmt.Sprintf(":%d", m.Line)) {
				mark = " ◀"
			}
			fmt.Fprintf(&b, "\n[%d %s]%s\n%s\n", m.Line, m.Role, mark, m.Content)
		}
		return tools.Result{Content: b.String(), Summary: fmt.Sprintf("%d message(s) around %s", len(msgs), a.Ref)}, nil
	}
	limit := min(max(int(a.Limit), 0), 50)
	t.mu.Lock()
	hits, err := t.ix.Search(dirs, a.Query, limit)
	t.mu.Unlock()
	if err != nil {
		return tools.Result{}, err
	}
	if len(hits) == 0 {
		return tools.Result{Content: fmt.Sprintf("No message matches %q.", a.Query), Summary: "no hits"}, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d hit(s) for %q, best first (read more with operation \"around\" and the ref):\n", len(hits), a.Query)
	for _, h := range hits {
		where := h.Role
		if h.Archived {
			where += ", compacted away"
		}
		if a.Scope == "global" {
			where += ", project " + h.Project
		}
		fmt.Fprintf(&b, "\n- ref %s (%s, %s)\n  %s\n", h.Ref, where, h.Updated.Format("2006-01-02"), h.Snippet)
	}
	return tools.Result{Content: b.String(), Summary: fmt.Sprintf("%d hit(s)", len(hits))}, nil
}

// ---- memory

// memoryTool reads and writes the Markdown memory files. Its list, search
// and read calls are reads; save and forget write a memory file, which
// the permission gate treats as a control path: every such call needs a
// person's yes, in every posture, and a run with no one to ask refuses
// it. One tool instead of three keeps the cached prompt prefix small.
type memoryTool struct {
	st  memory.Store
	now func() time.Time
}

// Memory operations.
const (
	opList   = "list"
	opSearch = "search"
	opRead   = "read"
	opSave   = "save"
	opForget = "forget"
)

type memoryArgs struct {
	Operation   string    `json:"operation"`
	Name        string    `json:"name,omitempty"`
	Query       string    `json:"query,omitempty"`
	Content     string    `json:"content,omitempty"`
	Description string    `json:"description,omitempty" jsonschema:"save: one line shown by list"`
	Scope       string    `json:"scope,omitempty" jsonschema:"default: all to read, project to save or forget"`
	Limit       tools.Int `json:"limit,omitempty" jsonschema:"search: default 10"`
}

func (t *memoryTool) Name() string { return MemoryTool }

func (t *memoryTool) Description() string {
	return "Facts the user asked to keep across sessions, as Markdown files of this project or of the user (scope). " +
		"list, search (query) or read (name) them when a task may depend on the user's preferences or earlier decisions. " +
		"save (name, content in the user's words) adds or updates one, forget archives one: only when the user asks; " +
		"the user approves each. Names: a-z, 0-9, - and _."
}

func (t *memoryTool) Schema() json.RawMessage { return json.RawMessage(memorySchema) }

// ReadOnly is false: save and forget write. The gate still lets the reads
// through as reads, from their Access.
func (t *memoryTool) ReadOnly() bool { return false }

// decode checks the arguments and, for save and forget, returns the path
// of the memory file the call writes.
func (t *memoryTool) decode(raw json.RawMessage) (memoryArgs, string, error) {
	var a memoryArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return a, "", err
	}
	switch a.Scope {
	case "", "all", memory.ScopeProject, memory.ScopeUser:
	default:
		return a, "", fmt.Errorf("scope %q is not project, user or all", a.Scope)
	}
	switch a.Operation {
	case opList:
		return a, "", nil
	case opSearch:
		if strings.TrimSpace(a.Query) == "" {
			return a, "", errors.New("search needs a query")
		}
		return a, "", nil
	case opRead:
		return a, "", memory.CheckName(a.Name)
	case opSave, opForget:
		if a.Scope == "all" {
			return a, "", fmt.Errorf("%s needs scope project or user, not all", a.Operation)
		}
		if a.Operation == opSave && strings.TrimSpace(a.Content) == "" {
			return a, "", errors.New("content is empty")
		}
		p, err := t.st.Path(a.Scope, a.Name)
		return a, p, err
	default:
		return a, "", fmt.Errorf("operation %q is not list, search, read, save or forget", a.Operation)
	}
}

// Access: list, search and read are reads of Reasonix's own memory;
// save and forget are writes of the memory file, which the gate asks a
// person about every time.
func (t *memoryTool) Access(raw json.RawMessage) (tools.Access, error) {
	a, p, err := t.decode(raw)
	if err != nil {
		return tools.Access{}, err
	}
	if p != "" {
		w := []string{p}
		if a.Operation == opForget {
			// The memory moves into the archive folder beside it: a
			// person's yes covers that folder too (tools.Verdict.Writes).
			w = append(w, filepath.Dir(memory.ArchivePath(p, time.Time{})))
		}
		return tools.Access{Kind: tools.KindWrite, Writes: w, Detail: a.Operation + " " + a.Name}, nil
	}
	d := a.Operation
	switch a.Operation {
	case opSearch:
		d += " " + text.Clip(a.Query, 80)
	case opRead:
		d += " " + a.Name
	}
	return tools.Access{Kind: tools.KindRead, Detail: d}, nil
}

// Preview shows the person the memory as a save will write it; forget
// shows the memory it archives.
func (t *memoryTool) Preview(ctx context.Context, env *tools.Env, raw json.RawMessage) ([]tools.Preview, error) {
	a, p, err := t.decode(raw)
	if err != nil || p == "" {
		return nil, err
	}
	op, old, now := "create", "", strings.TrimSpace(a.Content)+"\n"
	if m, err := t.st.Read(a.Scope, a.Name); err == nil {
		op, old = "update", m.Content+"\n"
	}
	if a.Operation == opForget {
		op, now = "delete", ""
	}
	diff, err := udiff.ToUnified(p, p, old, []udiff.Edit{{Start: 0, End: len(old), New: now}}, 3)
	if err != nil {
		return nil, err
	}
	return []tools.Preview{{Path: p, Operation: op, Diff: diff, Added: strings.Count(now, "\n"), Removed: strings.Count(old, "\n")}}, nil
}

func (t *memoryTool) Execute(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	a, _, err := t.decode(raw)
	if err != nil {
		return tools.Result{}, err
	}
	switch a.Operation {
	case opSave:
		m, existed, err := t.st.Save(a.Scope, a.Name, a.Description, a.Content, t.now())
		if err != nil {
			return tools.Result{}, err
		}
		verb := "saved"
		if existed {
			verb = "updated"
		}
		return tools.Result{Content: fmt.Sprintf("%s %s memory %q (%s)", verb, m.Scope, m.Name, m.Path),
			Summary: verb + " memory " + m.Name}, nil
	case opForget:
		dst, err := t.st.Forget(a.Scope, a.Name, t.now())
		if err != nil {
			return tools.Result{}, err
		}
		return tools.Result{Content: fmt.Sprintf("forgot memory %q; archived as %s", a.Name, dst), Summary: "forgot memory " + a.Name}, nil
	case opRead:
		scopes := []string{a.Scope}
		if a.Scope == "" || a.Scope == "all" {
			scopes = []string{memory.ScopeProject, memory.ScopeUser}
		}
		var m memory.Memory
		for _, sc := range scopes {
			if m, err = t.st.Read(sc, a.Name); err == nil {
				break
			}
		}
		if err != nil {
			return tools.Result{}, err
		}
		return tools.Result{Content: fmt.Sprintf("%s memory %q (updated %s)\n%s\n\n%s", m.Scope, m.Name,
			m.Updated.Format("2006-01-02"), m.Description, m.Content), Summary: "read " + m.Name}, nil
	case opSearch:
		list, err := t.st.Search(a.Scope, a.Query, max(int(a.Limit), 0))
		if err != nil {
			return tools.Result{}, err
		}
		if len(list) == 0 {
			return tools.Result{Content: fmt.Sprintf("No memory matches %q.", a.Query), Summary: "no hits"}, nil
		}
		var b strings.Builder
		for _, m := range list {
			fmt.Fprintf(&b, "## %s (%s)\n%s\n\n", m.Name, m.Scope, text.Clip(m.Content, 2000))
		}
		return tools.Result{Content: b.String(), Summary: fmt.Sprintf("%d memory(ies)", len(list))}, nil
	}
	list, err := t.st.List(a.Scope)
	if err != nil {
		return tools.Result{}, err
	}
	if len(list) == 0 {
		return tools.Result{Content: "No memories yet.", Summary: "none"}, nil
	}
	var b strings.Builder
	for _, m := range list {
		desc := m.Description
		if desc == "" {
			desc = text.Clip(text.OneLine(m.Content), 120)
		}
		fmt.Fprintf(&b, "- %s (%s, %s): %s\n", m.Name, m.Scope, m.Updated.Format("2006-01-02"), desc)
	}
	return tools.Result{Content: b.String(), Summary: fmt.Sprintf("%d memory(ies)", len(list))}, nil
}
