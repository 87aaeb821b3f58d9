package store

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/providers"
)

// A session file is a header line, then one line per message
// (providers.Message, as sent to the model), with typed records between
// them: Meta at the end of each step (the newest wins) and Marks for
// checkpoints and rewinds. Nothing is ever rewritten: a rewind is a record
// that later readers apply.

// Record types.
const (
	TypeMeta       = "meta"
	TypeCheckpoint = "checkpoint"
	TypeRewind     = "rewind"
	TypeUnrewind   = "unrewind"
	TypeCompaction = "compaction"
	TypeRequest    = "request"
)

// Request records one model request: its usage (with its cost when the
// price was known), the SHA-256 fingerprint of the prefix (system prompt
// and tool schemas) it was sent with, and, when the provider's cache was
// knowingly thrown away before it, why (Reset: "compaction", ...).
type Request struct {
	Type   string          `json:"type"` // "request"
	Time   time.Time       `json:"time"`
	Turn   int             `json:"turn"`
	Usage  providers.Usage `json:"usage"`
	Prefix string          `json:"prefix,omitempty"`
	Reset  string          `json:"reset,omitempty"`
}

// Compaction records that a session compacted its history: from this
// line on, the conversation is Messages (system prompt first) plus what
// follows. The originals it replaced are in the archive beside the file
// (ArchivePath).
type Compaction struct {
	Type         string              `json:"type"` // "compaction"
	Time         time.Time           `json:"time"`
	BeforeTokens int                 `json:"before_tokens"`
	AfterTokens  int                 `json:"after_tokens"`
	Pruned       int                 `json:"pruned,omitempty"`
	Folded       int                 `json:"folded,omitempty"`
	Messages     []providers.Message `json:"messages"`
}

// ArchivePath is the archive of the session file path: the messages its
// compactions replaced, one per line after a compaction record.
func ArchivePath(path string) string {
	return strings.TrimSuffix(path, ".jsonl") + archiveExt
}

const archiveExt = ".archive.jsonl"

// isSessionFile says whether a file name in a sessions directory is a
// session (not an archive).
func isSessionFile(name string) bool {
	return strings.HasSuffix(name, ".jsonl") && !strings.HasSuffix(name, archiveExt)
}

// Meta is the state of a session at the end of a step.
type Meta struct {
	Type    string    `json:"type"` // "meta"
	Updated time.Time `json:"updated"`
	Title   string    `json:"title,omitempty"`
	Model   string    `json:"model,omitempty"`
	// Effort is the reasoning effort a person chose for the session
	// (/effort); empty is the provider's configured one.
	Effort string `json:"effort,omitempty"`
	// Turns counts the user turns of the session.
	Turns int             `json:"turns"`
	Usage providers.Usage `json:"usage"`
	Todos []events.Todo   `json:"todos,omitempty"`
	// Goal is the session's goal, when it has one.
	Goal *events.GoalState `json:"goal,omitempty"`
	// Notes are what happened outside the conversation since its last
	// turn (a person's ! lines, a skill run as a subagent, an executed
	// plan), waiting to ride in its next turn.
	Notes []string `json:"notes,omitempty"`
}

// Mark is a checkpoint or rewind record.
type Mark struct {
	Type string    `json:"type"`
	Time time.Time `json:"time"`
	// Turn is the user turn a checkpoint was taken before (1-based).
	Turn int `json:"turn,omitempty"`
	// Checkpoint is the workspace checkpoint id.
	Checkpoint string `json:"checkpoint,omitempty"`
	// Keep is how many user turns a rewind keeps: the conversation goes
	// back to just before turn Keep+1.
	Keep int `json:"keep,omitempty"`
	// Files says a rewind restored the workspace too.
	Files bool `json:"files,omitempty"`
	// Undo is the checkpoint taken just before a rewind restored files,
	// which `rewind --undo` restores.
	Undo string `json:"undo,omitempty"`
}

// Loaded is a session file read back.
type Loaded struct {
	Path   string
	Header Header
	// Messages are the conversation as it stands: rewinds applied, tool
	// calls left without results (a crash between them) closed with a
	// synthetic "interrupted" result, results without a call dropped.
	Messages []providers.Message
	// Meta is the newest state record (zero when none was written).
	Meta Meta
	// Checkpoints are the checkpoint marks of the turns still in the
	// conversation, oldest first.
	Checkpoints []Mark
	// Rewinds are the rewinds still in effect, newest last.
	Rewinds []Mark
	// Notices say what was repaired (a torn last line, closed calls).
	Notices []string
	// Compactions counts the compaction records applied.
	Compactions int
	// Requests are the request records, oldest first, whatever rewinds
	// later did to the conversation: they are what was spent.
	Requests []Request

	// Sealed says the file was checked against its seal and is what
	// Reasonix last wrote (false: unchecked, or a legacy file without a
	// seal, which Notices names).
	Sealed bool

	lastRecord *Mark // a rewind or unrewind just read, for Load to apply
	seals      *Seals
	// end is where the lines loaded end: Open drops what follows (a torn
	// tail) so an append starts on a line of its own.
	end int64
	// entries seal the lines loaded (nil without seals).
	entries  []sealEntry
	accepted bool // a line that differs was dealt with by the mode
}

// Interrupted is the synthetic result of a tool call that never got one.
const Interrupted = "Error: interrupted: the session stopped before this call finished; its effect is unknown"

// Turns counts the user turns in msgs.
func Turns(msgs []providers.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == providers.RoleUser {
			n++
		}
	}
	return n
}

// TurnStart returns the index of user turn n (1-based) in msgs, or -1.
func TurnStart(msgs []providers.Message, n int) int {
	k := 0
	for i, m := range msgs {
		if m.Role == providers.RoleUser {
			k++
			if k == n {
				return i
			}
		}
	}
	return -1
}

// lineKind peeks at a line's discriminating fields.
type lineKind struct {
	Type string `json:"type"`
	Role string `json:"role"`
}

// Load reads a session file without checking it against a seal (see
// [Seals.Load]). A torn last line (a crash mid-append) is skipped with a
// notice; a damaged line anywhere else is an error naming the file and
// line, because guessing would lose or invent history.
func Load(path string) (*Loaded, error) { return (*Seals)(nil).Load(path, Refuse) }

// Load reads a session file and checks it against its seal: a file that
// is not what Reasonix last wrote is a *ModifiedError (mode Refuse), its
// part before the first line that differs (KeepSealed) or the whole of
// it (AcceptModified). A file without a seal loads with a notice when it
// was there before sealing began; any other is one Reasonix did not
// write. A nil s checks nothing.
func (s *Seals) Load(path string, mode LoadMode) (*Loaded, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("open session: %w", err)
	}
	defer f.Close()
	l := &Loaded{Path: path, seals: s}
	var v *verifier
	if s != nil {
		var notice string
		v, notice, err = s.newVerifier(path)
		var mod *ModifiedError
		switch {
		case errors.As(err, &mod) && mode == AcceptModified:
			notice = fmt.Sprintf("%s: taken as it stands (Reasonix has no seal for it); it is sealed from now on", path)
		case err != nil:
			return nil, err
		}
		if notice != "" {
			l.Notices = append(l.Notices, notice)
		}
		l.Sealed = v.sealed
	}
	r := bufio.NewReaderSize(f, 64<<10)
	// stack holds the message lists a rewind replaced, for unrewind.
	type saved struct {
		msgs  []providers.Message
		marks []Mark
	}
	var stack []saved
	var marks []Mark
	var off int64
lines:
	for n := 1; ; n++ {
		line, rerr := r.ReadBytes('\n')
		if len(line) > 0 {
			complete := line[len(line)-1] == '\n'
			if v != nil {
				cerr := v.check(n, line, off+int64(len(line)))
				switch {
				case errors.Is(cerr, errTorn) || (!complete && (cerr == nil || mode != Refuse)):
					// Reasonix ends every line it writes; an append after
					// this one would be glued to it.
					l.Notices = append(l.Notices, fmt.Sprintf("%s:%d: skipped a torn last line (the session stopped mid-write)", path, n))
					break lines
				case cerr == nil:
				case mode == AcceptModified:
					// Taken as the person's: sealed as it stands.
					v.got = append(v.got, sealEntry{end: off + int64(len(line)), sum: sha256.Sum256(line)})
					if !l.accepted {
						l.accepted = true
						l.Notices = append(l.Notices, fmt.Sprintf("%v; taken as it stands, as you asked", cerr))
					}
				case mode == KeepSealed:
					l.Notices = append(l.Notices, fmt.Sprintf("%v; kept the %d line(s) before it, which Reasonix wrote", cerr, n-1))
					l.accepted = true
					break lines
				default:
					return nil, cerr
				}
			}
			perr := l.apply(n, line, &marks)
			if perr == nil {
				if k := l.lastRecord; k != nil {
					switch k.Type {
					case TypeRewind:
						stack = append(stack, saved{l.Messages, marks})
						keep := TurnStart(l.Messages, max(k.Keep, 0)+1)
						if keep < 0 {
							keep = len(l.Messages)
						}
						l.Messages = append([]providers.Message(nil), l.Messages[:keep]...)
						marks = marksBefore(marks, k.Keep+1)
						l.Rewinds = append(l.Rewinds, *k)
					case TypeUnrewind:
						if len(stack) > 0 {
							top := stack[len(stack)-1]
							stack = stack[:len(stack)-1]
							l.Messages, marks = top.msgs, top.marks
							l.Rewinds = l.Rewinds[:len(l.Rewinds)-1]
						}
					}
					l.lastRecord = nil
				}
			}
			if perr != nil {
				if !complete {
					l.Notices = append(l.Notices, fmt.Sprintf("%s:%d: skipped a torn last line (the session stopped mid-write)", path, n))
					break
				}
				return nil, fmt.Errorf("%s:%d: %w", path, n, perr)
			}
			off += int64(len(line))
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return nil, fmt.Errorf("read session %s: %w", path, rerr)
		}
	}
	if l.Header.ID == "" {
		return nil, fmt.Errorf("%s:1: not a Reasonix session (no header with an id)", path)
	}
	if v != nil && !l.accepted {
		if err := v.finish(len(v.got)); err != nil {
			if mode == Refuse {
				return nil, err
			}
			l.Notices = append(l.Notices, err.Error())
		}
	}
	l.end = off
	if v != nil {
		l.entries = v.got
	}
	l.Checkpoints = marks
	l.Messages, l.Notices = closeToolCalls(l.Messages, l.Notices)
	return l, nil
}

// marksBefore keeps the checkpoint marks of turns before turn n.
func marksBefore(marks []Mark, n int) []Mark {
	var out []Mark
	for _, m := range marks {
		if m.Turn < n {
			out = append(out, m)
		}
	}
	return out
}

// apply adds one line to l.
func (l *Loaded) apply(n int, line []byte, marks *[]Mark) error {
	if n == 1 {
		if err := json.Unmarshal(line, &l.Header); err != nil {
			return fmt.Errorf("session header: %w", err)
		}
		if l.Header.ID == "" {
			return errors.New("session header has no id")
		}
		return nil
	}
	var k lineKind
	if err := json.Unmarshal(line, &k); err != nil {
		return err
	}
	switch k.Type {
	case "":
		if k.Role == "" {
			return errors.New("line is neither a message nor a record")
		}
		var m providers.Message
		if err := json.Unmarshal(line, &m); err != nil {
			return err
		}
		l.Messages = append(l.Messages, m)
	case TypeMeta:
		var m Meta
		if err := json.Unmarshal(line, &m); err != nil {
			return err
		}
		l.Meta = m
	case TypeCompaction:
		var c Compaction
		if err := json.Unmarshal(line, &c); err != nil {
			return err
		}
		if len(c.Messages) > 0 {
			l.Messages = append([]providers.Message(nil), c.Messages...)
			l.Compactions++
		}
	case TypeRequest:
		var r Request
		if err := json.Unmarshal(line, &r); err != nil {
			return err
		}
		l.Requests = append(l.Requests, r)
	case TypeCheckpoint, TypeRewind, TypeUnrewind:
		var m Mark
		if err := json.Unmarshal(line, &m); err != nil {
			return err
		}
		if k.Type == TypeCheckpoint {
			*marks = append(*marks, m)
		} else {
			l.lastRecord = &m
		}
	default:
		// A record from a newer Reasonix: keep reading.
	}
	return nil
}

// closeToolCalls gives every tool call a result, in call order right
// after its assistant message, and drops results whose call is gone, so
// the provider accepts the history.
func closeToolCalls(msgs []providers.Message, notices []string) ([]providers.Message, []string) {
	out := make([]providers.Message, 0, len(msgs))
	closed := 0
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		if m.Role == providers.RoleTool {
			notices = append(notices, fmt.Sprintf("dropped a tool result (%s) whose call is not in the history", m.ToolCallID))
			continue
		}
		out = append(out, m)
		if m.Role != providers.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		results := map[string]providers.Message{}
		j := i + 1
		for ; j < len(msgs) && msgs[j].Role == providers.RoleTool; j++ {
			results[msgs[j].ToolCallID] = msgs[j]
		}
		for _, c := range m.ToolCalls {
			r, ok := results[c.ID]
			if !ok {
				r = providers.Message{Role: providers.RoleTool, ToolCallID: c.ID, Content: Interrupted}
				closed++
			}
			out = append(out, r)
		}
		i = j - 1
	}
	if closed > 0 {
		notices = append(notices, fmt.Sprintf("closed %d tool call(s) that had no result as interrupted", closed))
	}
	return out, notices
}

// readHeader reads only the first line.
func readHeader(path string) (Header, error) {
	var h Header
	f, err := os.Open(path)
	if err != nil {
		return h, fmt.Errorf("open session: %w", err)
	}
	defer f.Close()
	line, err := bufio.NewReader(f).ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return h, fmt.Errorf("read session %s: %w", path, err)
	}
	if err := json.Unmarshal(line, &h); err != nil || h.ID == "" {
		return h, fmt.Errorf("%s:1: not a Reasonix session (no header with an id)", path)
	}
	return h, nil
}

// Summary is one session in a listing.
type Summary struct {
	ID     string `json:"id"`
	Title  string `json:"title"`
	Model  string `json:"model"`
	Role   string `json:"role"`
	Parent string `json:"parent,omitempty"`
	// Step is the plan step of a plan worker session (Header.Step).
	Step    string          `json:"step,omitempty"`
	Created time.Time       `json:"created"`
	Updated time.Time       `json:"updated"`
	Turns   int             `json:"turns"`
	Usage   providers.Usage `json:"usage"`
	Goal    string          `json:"goal,omitempty"`
	// GoalStatus is the goal's status (active, done, blocked, stopped).
	GoalStatus string `json:"goal_status,omitempty"`
	Path       string `json:"path"`
}

// tailBytes is how much of a file's end List reads for its newest Meta.
const tailBytes = 64 << 10

// List summarises the sessions in dir, newest first. It reads each file's
// header and the newest Meta in its last 64 KB, never whole files.
// Subagent sessions (with a parent) are listed only when all is set.
// Unreadable files are skipped and named in the returned notices.
func List(dir string, all bool) ([]Summary, []string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("list sessions: %w", err)
	}
	var out []Summary
	var notices []string
	for _, e := range ents {
		if e.IsDir() || !isSessionFile(e.Name()) {
			continue
		}
		path := filepath.Join(dir, e.Name())
		s, err := summarize(path)
		if err != nil {
			notices = append(notices, err.Error())
			continue
		}
		if s.Parent != "" && !all {
			continue
		}
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Updated.Equal(out[j].Updated) {
			return out[i].Updated.After(out[j].Updated)
		}
		return out[i].ID > out[j].ID
	})
	return out, notices, nil
}

func summarize(path string) (Summary, error) {
	h, err := readHeader(path)
	if err != nil {
		return Summary{}, err
	}
	s := Summary{ID: h.ID, Title: h.Title, Model: h.Model, Role: h.Role, Parent: h.Parent, Step: h.Step,
		Created: h.Created, Updated: h.Created, Path: path}
	f, err := os.Open(path)
	if err != nil {
		return s, fmt.Errorf("open session: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return s, fmt.Errorf("stat session: %w", err)
	}
	off := max(st.Size()-tailBytes, 0)
	buf := make([]byte, st.Size()-off)
	if _, err := f.ReadAt(buf, off); err != nil && !errors.Is(err, io.EOF) {
		return s, fmt.Errorf("read session %s: %w", path, err)
	}
	lines := bytes.Split(buf, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		if !bytes.Contains(lines[i], []byte(`"type":"meta"`)) {
			continue
		}
		var m Meta
		if json.Unmarshal(lines[i], &m) != nil || m.Type != TypeMeta {
			continue
		}
		if m.Title != "" {
			s.Title = m.Title
		}
		if m.Model != "" {
			s.Model = m.Model
		}
		s.Turns, s.Usage = m.Turns, m.Usage
		if !m.Updated.IsZero() {
			s.Updated = m.Updated
		}
		s.Goal, s.GoalStatus = "", ""
		if m.Goal != nil {
			s.Goal, s.GoalStatus = m.Goal.Goal, m.Goal.Status
		}
		break
	}
	if s.Updated.Equal(s.Created) {
		// No state record yet: the file's own time is the best guess.
		s.Updated = st.ModTime().UTC()
	}
	return s, nil
}

// Find resolves an id, or a prefix of exactly one id, in dir.
func Find(dir, idOrPrefix string) (string, error) {
	idOrPrefix = strings.TrimSuffix(strings.TrimSpace(idOrPrefix), ".jsonl")
	if idOrPrefix == "" {
		return "", errors.New("no session id given")
	}
	if strings.ContainsAny(idOrPrefix, `/\`) || strings.HasPrefix(idOrPrefix, ".") || filepath.IsAbs(idOrPrefix) || filepath.VolumeName(idOrPrefix) != "" {
		// An id is a file name in dir: "../../x" would load (and a resumed
		// run append to) any .jsonl file, one a model wrote among them.
		return "", fmt.Errorf("session id %q is a path, not an id (reasonix sessions lists them)", idOrPrefix)
	}
	exact := filepath.Join(dir, idOrPrefix+".jsonl")
	if _, err := os.Stat(exact); err == nil {
		return exact, nil
	}
	ents, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("find session: %w", err)
	}
	var hits []string
	for _, e := range ents {
		if isSessionFile(e.Name()) && strings.HasPrefix(e.Name(), idOrPrefix) {
			hits = append(hits, strings.TrimSuffix(e.Name(), ".jsonl"))
		}
	}
	switch len(hits) {
	case 0:
		return "", fmt.Errorf("no session %q in %s (reasonix sessions lists them)", idOrPrefix, dir)
	case 1:
		return filepath.Join(dir, hits[0]+".jsonl"), nil
	}
	sort.Strings(hits)
	if len(hits) > 5 {
		hits = append(hits[:5], "…")
	}
	return "", fmt.Errorf("session %q is ambiguous: %s", idOrPrefix, strings.Join(hits, ", "))
}

// TitleFrom makes a session title from its first prompt: one line, at
// most 80 bytes, cut at a rune boundary.
func TitleFrom(prompt string) string {
	return text.Clip(text.OneLine(prompt), 80)
}
