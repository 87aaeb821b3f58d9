package search

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/internal/benchtest"
	"github.com/reasonix/reasonix/providers"
)

func writeSession(t testing.TB, dir, id string, msgs ...providers.Message) string {
	t.Helper()
	var b strings.Builder
	hdr, _ := json.Marshal(map[string]any{"type": "session", "id": id, "role": "executor"})
	b.Write(hdr)
	b.WriteByte('\n')
	for _, m := range msgs {
		raw, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(raw)
		b.WriteByte('\n')
	}
	b.WriteString(`{"type":"meta","turns":1}` + "\n")
	p := filepath.Join(dir, id+".jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func msg(role, content string) providers.Message {
	return providers.Message{Role: role, Content: content}
}

func TestTokens(t *testing.T) {
	got := strings.Join(Tokens("Fix parse_config() in main.go: HTTP 404, x 上下文"), "|")
	if got != "fix|parse_config|in|main|go|http|404|上|下|文" {
		t.Errorf("tokens = %s", got)
	}
}

func TestHistorySearchAndAround(t *testing.T) {
	dir := t.TempDir()
	other := t.TempDir()
	writeSession(t, dir, "e-1", msg("system", "you are an agent; flaky everywhere"), msg("user", "the login test is flaky on CI"),
		msg("assistant", "I will look at the retry loop"), msg("user", "unrelated question about colours"))
	writeSession(t, dir, "e-2", msg("user", "rename the package"), msg("assistant", "renamed"))
	// A folded original lives in the archive.
	arch := `{"type":"compaction","before_tokens":10}` + "\n" + mustJSON(t, msg("tool", "panic: flaky network in dial.go line 88")) + "\n"
	if err := os.WriteFile(filepath.Join(dir, "e-2"+archiveExt), []byte(arch), 0o644); err != nil {
		t.Fatal(err)
	}
	writeSession(t, other, "e-9", msg("user", "flaky flaky flaky in another project"))

	h := NewHistory()
	project := []Dir{{Project: "/p", Path: dir}}
	hits, err := h.Search(project, "flaky test", 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].Ref != "e-1:3" || hits[0].Role != "user" || !strings.Contains(hits[0].Snippet, "flaky on CI") {
		t.Fatalf("hits = %+v", hits)
	}
	if hits[1].Ref != "e-2.archive:2" || !hits[1].Archived || hits[1].Role != "tool" {
		t.Errorf("archive hit = %+v", hits[1])
	}
	// The system prompt is not conversation.
	for _, hit := range hits {
		if strings.Contains(hit.Snippet, "you are an agent") {
			t.Errorf("system prompt indexed: %+v", hit)
		}
	}
	// Global scope sees the other project.
	all, err := h.Search(append(project, Dir{Project: "/q", Path: other}), "flaky", 10)
	if err != nil || len(all) != 3 || all[0].Project != "/q" {
		t.Errorf("global hits = %+v, %v", all, err)
	}
	// A file that changed is read again; an unchanged one is not.
	before := h.files[filepath.Join(dir, "e-2.jsonl")]
	time.Sleep(10 * time.Millisecond)
	writeSession(t, dir, "e-1", msg("user", "now about zebras"))
	hits, _ = h.Search(project, "zebras", 10)
	if len(hits) != 1 || hits[0].Ref != "e-1:2" {
		t.Errorf("after a change: %+v", hits)
	}
	if h.files[filepath.Join(dir, "e-2.jsonl")] != before {
		t.Error("an unchanged file was read again")
	}

	msgs, path, err := Around(project, "e-2.archive:2", 3, 1000)
	if err != nil || len(msgs) != 1 || !strings.Contains(msgs[0].Content, "dial.go") || !strings.HasSuffix(path, archiveExt) {
		t.Errorf("around = %+v %s %v", msgs, path, err)
	}
	for _, bad := range []string{"../e-1:2", "e-1", "e-1:x", "nope:1", "e-1:99"} {
		if _, _, err := Around(project, bad, 3, 1000); err == nil {
			t.Errorf("Around(%q) did not fail", bad)
		}
	}
}

func mustJSON(t *testing.T, v any) string {
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestHistoryBench prints the figure `make bench` reports: one search over
// 1,000 sessions of 40 messages, first (cold: every file read and
// indexed) and then warm (the files unchanged, or one of them grown).
func TestHistoryBench(t *testing.T) {
	if os.Getenv("REASONIX_BENCH") == "" {
		t.Skip("figures only: set REASONIX_BENCH=1 (make bench)")
	}
	dir := t.TempDir()
	words := strings.Fields("parser config retry timeout socket handler cache index token window session archive digest " +
		"compile linker module import export struct method field query result error panic stack trace goroutine channel")
	for s := range 1000 {
		var msgs []providers.Message
		for m := range 40 {
			var b strings.Builder
			for w := range 60 {
				b.WriteString(words[(s*7+m*13+w*3)%len(words)] + " ")
			}
			fmt.Fprintf(&b, "id%d-%d", s, m)
			role := "user"
			if m%2 == 1 {
				role = "assistant"
			}
			msgs = append(msgs, msg(role, b.String()))
		}
		writeSession(t, dir, fmt.Sprintf("e-%04d", s), msgs...)
	}
	dirs := []Dir{{Project: "p", Path: dir}}
	h := NewHistory()
	start := time.Now()
	if _, err := h.Search(dirs, "retry timeout", 10); err != nil {
		t.Fatal(err)
	}
	cold := time.Since(start)
	warm := benchtest.Median(9, func() {
		if hits, err := h.Search(dirs, "socket panic goroutine", 10); err != nil || len(hits) != 10 {
			t.Fatalf("hits %d, %v", len(hits), err)
		}
	})
	one := benchtest.Median(5, func() {
		writeSession(t, dir, "e-0001", msg("user", "grown "+time.Now().String()))
		if _, err := h.Search(dirs, "grown", 10); err != nil {
			t.Fatal(err)
		}
	})
	fmt.Printf("history search over 1,000 sessions (40,000 messages): %v warm, %v with one session changed, %v cold (first search reads every file)\n",
		warm.Round(10*time.Microsecond), one.Round(10*time.Microsecond), cold.Round(time.Millisecond))
	if warm > 100*time.Millisecond {
		t.Errorf("warm search took %v, target under 100 ms", warm)
	}
}
