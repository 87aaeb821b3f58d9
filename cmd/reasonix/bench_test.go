package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/reasonix/reasonix/internal/llmtest"
	"github.com/reasonix/reasonix/providers/scripted"
)

// TestStartupBench prints the process-level figures: `reasonix version`
// time and memory, process start to first request, a three-request tool
// loop, and the size of the cache-stable prefix. It runs only under
// `make bench` (REASONIX_BENCH=1) because timings are not assertions.
func TestStartupBench(t *testing.T) {
	if os.Getenv("REASONIX_BENCH") == "" {
		t.Skip("figures only: set REASONIX_BENCH=1 (make bench)")
	}
	const runs = 20
	var wall []time.Duration
	var rss int64
	for i := 0; i < runs; i++ {
		cmd := exec.Command(binPath, "version")
		start := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		wall = append(wall, time.Since(start))
		rss = max(rss, maxRSS(cmd))
	}
	fmt.Printf("version: %v median, %.1f MB peak RSS (targets 10ms, 16MB)\n", median(wall), float64(rss)/1024)

	var first, loop, gap []time.Duration
	var loopRSS int64
	var prefix, ntools int
	for i := 0; i < 10; i++ {
		e := newE2E(t,
			scripted.Turn{ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": "a.txt"})}},
			scripted.Turn{ToolCalls: []scripted.Call{call("grep", map[string]any{"pattern": "alpha"})}},
			scripted.Turn{Text: "done"},
		)
		e.write("a.txt", "alpha\n")
		cmd := exec.Command(binPath, "run", "go")
		cmd.Dir, cmd.Env = e.repo, e.env
		start := time.Now()
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		loop = append(loop, time.Since(start))
		loopRSS = max(loopRSS, maxRSS(cmd))
		rec := e.srv.Received()
		first = append(first, rec[0].At.Sub(start))
		prefix, ntools = prefixSize(t, rec[0].Body)
	}
	// Tool step: six read_file calls in a row; the gap between requests
	// is stream + parse + gate + tool + append + next request.
	for i := 0; i < 5; i++ {
		var turns []scripted.Turn
		for k := 0; k < 6; k++ {
			turns = append(turns, scripted.Turn{ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": "a.txt"})}})
		}
		e := newE2E(t, append(turns, scripted.Turn{Text: "done"})...)
		e.write("a.txt", "alpha\n")
		cmd := exec.Command(binPath, "run", "go")
		cmd.Dir, cmd.Env = e.repo, e.env
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		rec := e.srv.Received()
		for k := 2; k < len(rec); k++ { // skip the first step's one-time warm-up
			gap = append(gap, rec[k].At.Sub(rec[k-1].At))
		}
	}
	fmt.Printf("first request: %v median after process start (target 20ms)\n", median(first))
	fmt.Printf("tool loop: %v median for three requests; %.1f MB peak RSS (target 25MB)\n", median(loop), float64(loopRSS)/1024)
	fmt.Printf("tool step: %v median from one request to the next around a read_file call, stream included (target 2ms + stream)\n", median(gap))
	fmt.Printf("prefix: %.1f KB system prompt + %d tool schemas (target < 16KB)\n", float64(prefix)/1024, ntools)
}

func prefixSize(t *testing.T, body []byte) (int, int) {
	var req struct {
		Messages []json.RawMessage `json:"messages"`
		Tools    []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatal(err)
	}
	n := len(req.Messages[0])
	for _, tl := range req.Tools {
		n += len(tl)
	}
	return n, len(req.Tools)
}

func maxRSS(cmd *exec.Cmd) int64 {
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		return int64(ru.Maxrss) // KB on Linux
	}
	return 0
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2].Round(10 * time.Microsecond)
}

var _ = llmtest.New
