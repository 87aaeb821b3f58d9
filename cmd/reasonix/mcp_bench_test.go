package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/reasonix/reasonix/providers/scripted"
)

// TestMCPBench prints what MCP servers add (make bench): the time from
// process start to the first request of a headless run with three
// configured stdio servers against none (a headless run waits for their
// handshakes so their tools are in that request; the interactive mode
// does not wait), and the request-to-request time around one MCP tool
// call over stdio against one around read_file.
func TestMCPBench(t *testing.T) {
	if os.Getenv("REASONIX_BENCH") == "" {
		t.Skip("figures only: set REASONIX_BENCH=1 (make bench)")
	}
	dir := t.TempDir()
	rx := filepath.Join(dir, "reasonix")
	releaseBuild(t, rx, ".")
	plugin := filepath.Join(dir, "reasonix-plugin-example")
	releaseBuild(t, plugin, "../reasonix-plugin-example")
	three := ""
	for _, n := range []string{"a", "b", "c"} {
		three += fmt.Sprintf("[[plugins]]\nname = %q\ncommand = %q\n\n", n, plugin)
	}

	const runs = 15
	var none, with []time.Duration
	for i := 0; i < runs; i++ {
		for _, cfg := range []string{"", three} {
			e := newE2E(t, scripted.Turn{Text: "done"})
			if cfg != "" {
				e.writeUserConfig(cfg)
			}
			cmd := exec.Command(rx, "run", "go")
			cmd.Dir, cmd.Env = e.repo, e.env
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("run: %v\n%s", err, out)
			}
			first := e.srv.Received()[0].At.Sub(start)
			if cfg == "" {
				none = append(none, first)
			} else {
				with = append(with, first)
			}
		}
	}
	fmt.Printf("startup: mcp first request of a headless run with 3 stdio servers %s ms, without %s ms: +%s ms (their handshakes and listings; the interactive mode waits for none)\n",
		ms(median(with)), ms(median(none)), ms(median(with)-median(none)))

	var mcpGap, readGap []time.Duration
	for i := 0; i < 5; i++ {
		for _, tool := range []string{"mcp__a__wordcount", "read_file"} {
			var turns []scripted.Turn
			for k := 0; k < 6; k++ {
				args := map[string]any{"text": "one two three"}
				if tool == "read_file" {
					args = map[string]any{"path": "a.txt"}
				}
				turns = append(turns, scripted.Turn{ToolCalls: []scripted.Call{call(tool, args)}})
			}
			e := newE2E(t, append(turns, scripted.Turn{Text: "done"})...)
			e.write("a.txt", "alpha\n")
			e.writeUserConfig(three)
			cmd := exec.Command(rx, "run", "go")
			cmd.Dir, cmd.Env = e.repo, e.env
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("run: %v\n%s", err, out)
			}
			rec := e.srv.Received()
			for k := 2; k < len(rec); k++ {
				if tool == "read_file" {
					readGap = append(readGap, rec[k].At.Sub(rec[k-1].At))
				} else {
					mcpGap = append(mcpGap, rec[k].At.Sub(rec[k-1].At))
				}
			}
		}
	}
	fmt.Printf("tool: mcp call over stdio %s ms median from one request to the next (read_file: %s ms; the difference, %s ms, is the call's round trip to the server)\n",
		ms(median(mcpGap)), ms(median(readGap)), ms(median(mcpGap)-median(readGap)))
}
