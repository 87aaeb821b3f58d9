package orchestrator

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/providers"
)

// TestSessionLogSyncsBehind: the end of a step, and a mark, return with
// the file's sync still running behind them; the next step's end, a mark
// and closing wait for it (goleak, in TestMain, fails the package if a sync is left
// running), and every step's state is in the file.
func TestSessionLogSyncsBehind(t *testing.T) {
	l := &sessionLog{w: &worker{}, dir: t.TempDir(), hdr: store.Header{ID: "s-sync", Role: "executor"}}
	if err := l.Append(providers.Message{Role: providers.RoleUser, Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := l.EndStep(); err != nil {
			t.Fatal(err)
		}
		l.mu.Lock()
		behind := l.syncing != nil
		l.mu.Unlock()
		if !behind {
			t.Fatal("the end of a step did not leave its sync running behind it")
		}
	}
	prev := l.syncing
	if err := l.mark(store.Mark{Type: store.TypeUnrewind}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-prev:
	default:
		t.Error("a mark did not wait for the step's sync")
	}
	if l.syncing == nil || l.syncing == prev {
		t.Error("a mark did not leave its own sync running behind it")
	}
	if err := l.EndStep(); err != nil {
		t.Fatal(err)
	}
	path := l.t.Path()
	l.close()
	if l.syncing != nil {
		t.Error("closing did not wait for the step's sync")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(b, []byte(`"type":"meta"`)); n != 4 {
		t.Errorf("%d meta records in the file, want 4:\n%s", n, b)
	}
}

// TestSessionLogCreatesWhileFirstRequestIsOut: the file, the sessions
// directory and its .gitignore are made once the first step's request is
// about to go out (StartStep), not at the step's end, and hold the
// header, the prompt and a state record from then on (a kill before the
// answer keeps a conversation to continue); the step's end writes the
// lines that came after, without the prompt a second time. Closing after
// a StartStep without an end still writes them.
func TestSessionLogCreatesWhileFirstRequestIsOut(t *testing.T) {
	for _, end := range []bool{true, false} {
		dir := filepath.Join(t.TempDir(), ".reasonix", "sessions")
		l := &sessionLog{w: &worker{}, dir: dir, hdr: store.Header{ID: "s-open", Role: "executor"}}
		if err := l.Append(providers.Message{Role: providers.RoleUser, Content: "hello"}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Fatal("the sessions directory exists before the first request")
		}
		l.StartStep()
		l.mu.Lock()
		opening := l.opening
		l.mu.Unlock()
		if opening == nil {
			t.Fatal("StartStep started no file")
		}
		<-opening
		path := store.PathFor(dir, "s-open")
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("no file while the first request is out: %v", err)
		}
		if lines := bytes.Split(bytes.TrimSuffix(b, []byte("\n")), []byte("\n")); len(lines) != 3 ||
			!bytes.Contains(lines[0], []byte(`"type":"session"`)) || !bytes.Contains(lines[1], []byte(`"content":"hello"`)) ||
			!bytes.Contains(lines[2], []byte(`"turns":1`)) {
			t.Errorf("while the request is out the file holds\n%s\nwant the header, the prompt and the state", b)
		}
		if _, err := os.Stat(filepath.Join(dir, ".gitignore")); err != nil {
			t.Errorf("no .gitignore: %v", err)
		}
		if err := l.Append(providers.Message{Role: providers.RoleAssistant, Content: "hi there"}); err != nil {
			t.Fatal(err)
		}
		if end {
			if err := l.EndStep(); err != nil {
				t.Fatal(err)
			}
			l.StartStep() // the file exists: nothing to start
			if l.opening != nil {
				t.Error("a second StartStep started another file")
			}
		}
		l.close()
		b, err = os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Count(b, []byte(`"content":"hello"`)) != 1 || !bytes.Contains(b, []byte("hi there")) {
			t.Errorf("end of step %v: the file holds\n%s\nwant both messages", end, b)
		}
	}
}

// TestSessionLogClosesBehind: with a coordinator's closings, closing a
// session returns with its last sync still running, every line already
// in the file; their wait waits for that sync and then closes the
// file. The sync is held back here by standing in for it.
func TestSessionLogClosesBehind(t *testing.T) {
	var behind closings
	l := &sessionLog{w: &worker{}, dir: t.TempDir(), hdr: store.Header{ID: "s-behind", Role: "executor"}, behind: &behind}
	if err := l.Append(providers.Message{Role: providers.RoleUser, Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	if err := l.EndStep(); err != nil {
		t.Fatal(err)
	}
	if err := l.waitSync(); err != nil {
		t.Fatal(err)
	}
	syncing := make(chan struct{}) // the last sync, still running
	l.syncing = syncing
	tr, path := l.t, l.t.Path()
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		l.close()
	}()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		close(syncing)
		<-closed
		t.Fatal("closing waited for the last sync")
	}
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		behind.wait()
	}()
	select {
	case <-waited:
		t.Fatal("closings' wait did not wait for the last sync")
	case <-time.After(50 * time.Millisecond):
	}
	if err := tr.Record(store.Mark{Type: store.TypeUnrewind}); err != nil {
		t.Fatalf("the file was closed before its last sync: %v", err)
	}
	close(syncing)
	<-waited
	if err := tr.Record(store.Mark{Type: store.TypeUnrewind}); err == nil {
		t.Error("the file is still open once closings' wait is done")
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"type":"meta"`)) || !bytes.Contains(b, []byte("hello")) {
		t.Errorf("the file lacks the step's lines:\n%s", b)
	}
}

// TestClosingsWaitForLateOnes: a session closing while the coordinator's
// Wait runs (a subagent ending as the program exits) is waited for too.
func TestClosingsWaitForLateOnes(t *testing.T) {
	var q closings
	open := func() *store.Transcript {
		tr, err := (*store.Seals)(nil).Create(t.TempDir(), store.Header{ID: "s-late", Role: "executor"})
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	first, second := make(chan struct{}), make(chan struct{})
	q.add(first, open())
	waited := make(chan struct{})
	go func() {
		defer close(waited)
		q.wait()
	}()
	q.add(second, open())
	close(first)
	select {
	case <-waited:
		t.Fatal("wait returned before the file added while it ran was closed")
	case <-time.After(50 * time.Millisecond):
	}
	close(second)
	<-waited
}
