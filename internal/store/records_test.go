package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/providers"
)

func user(s string) providers.Message { return providers.Message{Role: providers.RoleUser, Content: s} }
func answer(s string) providers.Message {
	return providers.Message{Role: providers.RoleAssistant, Content: s}
}

func contents(msgs []providers.Message) string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Role[:1]+":"+m.Content)
	}
	return strings.Join(out, " ")
}

func TestLoadAppliesMetaCheckpointsAndRewinds(t *testing.T) {
	dir := t.TempDir()
	tr, err := (*Seals)(nil).Create(dir, Header{ID: "e-1", Role: "executor", Model: "m1", Cwd: "/w"})
	if err != nil {
		t.Fatal(err)
	}
	step := func(turn int, q, a string) {
		must(t, tr.Record(Mark{Type: TypeCheckpoint, Turn: turn, Checkpoint: fmt.Sprintf("cp%d", turn)}))
		must(t, tr.Append(user(q)))
		must(t, tr.Append(answer(a)))
		must(t, tr.Record(Meta{Type: TypeMeta, Updated: time.Now().UTC(), Title: "first", Model: "m2", Turns: turn,
			Todos: []events.Todo{{Content: q, Status: "pending"}}}))
		must(t, tr.Sync())
	}
	step(1, "q1", "a1")
	step(2, "q2", "a2")
	step(3, "q3", "a3")
	// Rewind to before turn 2: keep q1 a1.
	must(t, tr.Record(Mark{Type: TypeRewind, Keep: 1, Undo: "cp-undo"}))
	must(t, tr.Close())

	l, err := Load(filepath.Join(dir, "e-1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if got := contents(l.Messages); got != "u:q1 a:a1" {
		t.Fatalf("after rewind: %s", got)
	}
	if len(l.Checkpoints) != 1 || l.Checkpoints[0].Checkpoint != "cp1" || len(l.Rewinds) != 1 || l.Rewinds[0].Undo != "cp-undo" {
		t.Fatalf("marks %+v rewinds %+v", l.Checkpoints, l.Rewinds)
	}
	if l.Meta.Model != "m2" || l.Meta.Turns != 3 || len(l.Meta.Todos) != 1 || l.Header.Cwd != "/w" {
		t.Fatalf("meta %+v header %+v", l.Meta, l.Header)
	}

	// Appending after the rewind continues from it; an unrewind brings
	// the rewound turns back (and drops what came after the rewind).
	tr, err = Open(l)
	if err != nil {
		t.Fatal(err)
	}
	must(t, tr.Append(user("q2b")))
	l, _ = Load(tr.Path())
	if got := contents(l.Messages); got != "u:q1 a:a1 u:q2b" {
		t.Fatalf("after rewind and a new turn: %s", got)
	}
	must(t, tr.Record(Mark{Type: TypeUnrewind}))
	must(t, tr.Close())
	l, _ = Load(tr.Path())
	if got := contents(l.Messages); got != "u:q1 a:a1 u:q2 a:a2 u:q3 a:a3" || len(l.Checkpoints) != 3 || len(l.Rewinds) != 0 {
		t.Fatalf("after unrewind: %s %+v", got, l.Checkpoints)
	}
}

func TestLoadClosesToolCallsWithoutResults(t *testing.T) {
	call := func(ids ...string) providers.Message {
		m := providers.Message{Role: providers.RoleAssistant}
		for _, id := range ids {
			m.ToolCalls = append(m.ToolCalls, providers.ToolCall{ID: id, Type: "function", Function: providers.FunctionCall{Name: "bash", Arguments: "{}"}})
		}
		return m
	}
	result := func(id string) providers.Message {
		return providers.Message{Role: providers.RoleTool, ToolCallID: id, Content: "ok " + id}
	}
	dir := t.TempDir()
	tr, _ := (*Seals)(nil).Create(dir, Header{ID: "s"})
	// A crash between two results of one message, then a resumed turn
	// was appended; and a stray result with no call.
	for _, m := range []providers.Message{user("go"), call("a", "b"), result("a"), user("go on"), result("zz"), call("c"), result("c"), answer("done"), call("d")} {
		must(t, tr.Append(m))
	}
	tr.Close()
	l, err := Load(tr.Path())
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range l.Messages {
		s := m.Role
		if m.ToolCallID != "" {
			s += ":" + m.ToolCallID
			if m.Content == Interrupted {
				s += "!"
			}
		}
		roles = append(roles, s)
	}
	want := "user assistant tool:a tool:b! user assistant tool:c assistant assistant tool:d!"
	if got := strings.Join(roles, " "); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if len(l.Notices) != 2 {
		t.Fatalf("notices %q", l.Notices)
	}
}

func TestListAndFind(t *testing.T) {
	dir := t.TempDir()
	mk := func(id, parent string, updated time.Time, turns int) {
		tr, err := (*Seals)(nil).Create(dir, Header{ID: id, Role: "executor", Parent: parent, Model: "m", Title: "t " + id})
		must(t, err)
		must(t, tr.Append(user("hi")))
		// A long session: the newest meta is found in the file's tail.
		for i := 0; i < 300; i++ {
			must(t, tr.Append(answer(strings.Repeat("x", 400))))
		}
		must(t, tr.Record(Meta{Type: TypeMeta, Updated: updated, Turns: turns, Usage: providers.Usage{PromptTokens: 10 * turns}}))
		must(t, tr.Close())
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk("e-20260101-aaaa1", "", base.Add(time.Hour), 2)
	mk("e-20260101-aaaa2", "", base.Add(3*time.Hour), 5)
	mk("g-20260101-bbbb1", "e-20260101-aaaa2", base.Add(4*time.Hour), 1)
	must(t, os.WriteFile(filepath.Join(dir, "junk.jsonl"), []byte("garbage\n"), 0o644))

	got, notices, err := List(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != "e-20260101-aaaa2" || got[0].Turns != 5 || got[0].Usage.PromptTokens != 50 || got[1].ID != "e-20260101-aaaa1" {
		t.Fatalf("list %+v", got)
	}
	if len(notices) != 1 || !strings.Contains(notices[0], "junk.jsonl:1") {
		t.Fatalf("notices %q", notices)
	}
	if all, _, _ := List(dir, true); len(all) != 3 {
		t.Fatalf("all: %d", len(all))
	}
	if p, err := Find(dir, "e-20260101-aaaa2"); err != nil || filepath.Base(p) != "e-20260101-aaaa2.jsonl" {
		t.Fatalf("exact: %s %v", p, err)
	}
	if p, err := Find(dir, "g-"); err != nil || filepath.Base(p) != "g-20260101-bbbb1.jsonl" {
		t.Fatalf("prefix: %s %v", p, err)
	}
	if _, err := Find(dir, "e-2026"); err == nil || !strings.Contains(err.Error(), "ambiguous") {
		t.Fatalf("ambiguous: %v", err)
	}
	// An id is a name in dir, never a path out of it.
	sub := filepath.Join(dir, "sub")
	for _, id := range []string{"../" + filepath.Base(dir) + "/e-20260101-aaaa2", "sub/../e-20260101-aaaa2", "..", ".hidden", dir + "/e-20260101-aaaa2", `..\x`} {
		if p, err := Find(sub, id); err == nil || !strings.Contains(err.Error(), "is a path") {
			t.Errorf("Find(%q) = %s, %v; want refused", id, p, err)
		}
	}
	if _, err := Find(dir, "nope"); err == nil || !strings.Contains(err.Error(), "no session") {
		t.Fatalf("missing: %v", err)
	}
}

func TestTitleFrom(t *testing.T) {
	if got := TitleFrom("  fix the\nparser  "); got != "fix the parser" {
		t.Fatalf("%q", got)
	}
	long := strings.Repeat("字", 40)
	if got := TitleFrom(long); len(got) > 84 || !strings.HasSuffix(got, "…") {
		t.Fatalf("%q", got)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Read is Load reduced to header and messages, as the older tests use it.
func Read(path string) (Header, []providers.Message, error) {
	l, err := Load(path)
	if err != nil {
		return Header{}, nil, err
	}
	return l.Header, l.Messages, nil
}
