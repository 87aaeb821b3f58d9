package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/providers/scripted"
)

// TestE2EInterruptLeavesTranscriptWellFormed interrupts a run inside a
// tool call and inside a streamed answer, and checks that the transcript
// reads back whole with every tool call answered, so a resumed session
// sends the provider a valid history.
func TestE2EInterruptLeavesTranscriptWellFormed(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SIGINT delivery is unix-only")
	}
	cases := map[string]scripted.Turn{
		"in a tool call":  {Text: "running it", ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "sleep 30"})}},
		"in a stream":     {Text: "a slow answer that never ends", ChunkSize: 2, ChunkDelayMS: 100},
		"in the thinking": {Reasoning: "thinking for a long while", ChunkSize: 2, ChunkDelayMS: 100},
	}
	for name, turn := range cases {
		t.Run(name, func(t *testing.T) {
			e := newE2E(t, turn, scripted.Turn{Text: "never"})
			cmd := exec.Command(binPath, "run", "--yolo", "wait")
			cmd.Dir, cmd.Env = e.repo, e.env
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for len(e.srv.Requests()) < 1 && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			time.Sleep(400 * time.Millisecond)
			cmd.Process.Signal(os.Interrupt)
			if err := cmd.Wait(); err == nil {
				t.Fatal("interrupted run exited 0")
			}

			files, _ := filepath.Glob(filepath.Join(e.repo, ".reasonix", "sessions", "*.jsonl"))
			if len(files) != 1 {
				t.Fatalf("transcripts = %v", files)
			}
			// The file as written, not as Load repairs it: an interrupted
			// step must record its results itself.
			raw, err := os.ReadFile(files[0])
			if err != nil {
				t.Fatal(err)
			}
			var msgs []providers.Message
			for _, line := range strings.Split(strings.TrimSpace(string(raw)), "\n")[1:] {
				var m providers.Message
				if json.Unmarshal([]byte(line), &m) == nil && m.Role != "" {
					msgs = append(msgs, m)
				}
			}
			if _, err := store.Load(files[0]); err != nil {
				t.Fatal(err)
			}
			open := map[string]bool{}
			for _, m := range msgs {
				for _, c := range m.ToolCalls {
					open[c.ID] = true
				}
				if m.Role == providers.RoleTool {
					delete(open, m.ToolCallID)
				}
			}
			if len(open) > 0 {
				t.Fatalf("tool calls without results: %v in %+v", open, msgs)
			}
			if last := msgs[len(msgs)-1]; last.Role == providers.RoleUser {
				t.Fatalf("nothing of the interrupted step was kept: %+v", msgs)
			}
		})
	}
}
