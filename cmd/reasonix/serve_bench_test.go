package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestServeBench prints what `reasonix serve` adds to start-up: from
// process start to the URL on stdout (the server listening), beside
// `reasonix version` measured in the same run. `make bench` only.
func TestServeBench(t *testing.T) {
	if os.Getenv("REASONIX_BENCH") == "" {
		t.Skip("figures only: set REASONIX_BENCH=1 (make bench)")
	}
	dir := t.TempDir()
	rx := filepath.Join(dir, "reasonix")
	releaseBuild(t, rx, ".")
	e := newE2E(t)
	e.env = append(e.env, "REASONIX_BASE_URL=http://127.0.0.1:9/v1")
	const runs = 15
	var serve, ver []time.Duration
	for i := 0; i < runs; i++ {
		d, _ := timeRun(t, exec.Command(rx, "version"))
		ver = append(ver, d)
		cmd := exec.Command(rx, "serve", "--no-open")
		cmd.Dir, cmd.Env = e.repo, e.env
		out, _ := cmd.StdoutPipe()
		start := time.Now()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, err := bufio.NewReader(out).ReadString('\n')
		serve = append(serve, time.Since(start))
		cmd.Process.Kill()
		cmd.Wait()
		if err != nil || !strings.Contains(line, "token=") {
			t.Fatalf("serve printed %q: %v", line, err)
		}
	}
	s, v := median(serve), median(ver)
	fmt.Printf("serve: start-up to listening %s ms, version %s ms, added %s ms (target: nothing before the first request)\n",
		ms(s), ms(v), ms(s-v))
}
