package orchestrator

import (
	"bytes"
	"os"
	"testing"

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
