package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reasonix/reasonix/internal/llmtest"
	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/providers/scripted"
)

// TestStartupBench prints the process-level figures as ratios to the floor,
// a minimal tool loop on the standard library alone (testdata/floor), built
// here with the same flags as reasonix and run against the same scripted
// server: `version`, process start to the first request, a read + bash +
// answer loop (in a fresh project and home, and as the second run in
// one), and what a bash call costs beyond the command itself. It
// runs only under `make bench` (REASONIX_BENCH=1) because timings are not
// assertions.
func TestStartupBench(t *testing.T) {
	if os.Getenv("REASONIX_BENCH") == "" {
		t.Skip("figures only: set REASONIX_BENCH=1 (make bench)")
	}
	dir := t.TempDir()
	rx, floor, deps := filepath.Join(dir, "reasonix"), filepath.Join(dir, "floor"), filepath.Join(dir, "floordeps")
	releaseBuild(t, rx, ".")
	releaseBuild(t, floor, "./testdata/floor")
	releaseBuild(t, deps, "./testdata/floor", "floordeps")
	mcpFloor := filepath.Join(dir, "floormcp")
	releaseBuild(t, mcpFloor, "./testdata/floor", "floormcp")

	// Start-up: `version`, alternating the binaries so drift in the
	// machine's load hits them alike. The floor with every dependency
	// linked (testdata/floor/deps.go) is measured beside them: what it
	// costs over the floor is the dependencies' package init, and what
	// Reasonix costs over it is its own.
	const runs = 30
	var ver, cpu [3][]time.Duration
	var flt [3][]int64
	var rss int64
	var verMCP []time.Duration
	bins := [3]string{rx, floor, deps}
	for i := 0; i < runs; i++ {
		for b, bin := range bins {
			d, cmd := timeRun(t, exec.Command(bin, "version"))
			ver[b], cpu[b], flt[b] = append(ver[b], d), append(cpu[b], cpuTime(cmd)), append(flt[b], minorFaults(cmd))
			if b == 0 {
				rss = max(rss, maxRSS(cmd))
			}
		}
		d, _ := timeRun(t, exec.Command(mcpFloor, "version"))
		verMCP = append(verMCP, d)
	}
	ratioLine("startup: version", ver[0], ver[1], "(target <= 1.3)")
	// CPU time (user + system) moves less than wall time when other work
	// shares the machine, and the count of page faults hardly at all.
	// Most of a start's time is page faults: package init and the first
	// allocations touching fresh memory.
	ratioLine("startup: version CPU time", cpu[0], cpu[1], "")
	countLine("startup: version page faults", flt[0], flt[1])
	depsLine("startup: version", ver, cpu, flt)
	// The design's MCP SDK (with jsonschema-go) alone: its package init
	// and the pages it maps are a floor under Reasonix's own start.
	fmt.Printf("startup: version floor with only the official MCP SDK linked %s ms, %.2f the floor's (what the 1.3 target leaves Reasonix: %.2f of it)\n",
		ms(median(verMCP)), float64(median(verMCP))/float64(median(ver[1])), 1.3*float64(median(ver[1]))/float64(median(verMCP)))
	fmt.Printf("startup: version peak RSS %.1f MB (target 16 MB)\n", float64(rss)/1024)

	// A read + bash + answer loop; its first request is the start-up figure
	// of a real run.
	loopScript := func() []scripted.Turn {
		return []scripted.Turn{
			{ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": "a.txt"})}},
			{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "true"})}},
			{Text: "done"},
		}
	}
	var first, loop, loopCPU [3][]time.Duration
	var loopFlt [3][]int64
	var loopRSS int64
	var prefix, ntools int
	for i := 0; i < runs; i++ {
		for b, bin := range bins {
			e := newE2E(t, loopScript()...)
			e.write("a.txt", "alpha\n")
			cmd := exec.Command(bin, "run", "go")
			cmd.Dir, cmd.Env = e.repo, e.env
			start := time.Now()
			out, err := cmd.CombinedOutput()
			wall := time.Since(start)
			if err != nil {
				t.Fatalf("%s run: %v\n%s", filepath.Base(bin), err, out)
			}
			rec := e.srv.Received()
			if len(rec) != 3 {
				t.Fatalf("%s made %d requests, want 3\n%s", filepath.Base(bin), len(rec), out)
			}
			loop[b], first[b] = append(loop[b], wall), append(first[b], rec[0].At.Sub(start))
			loopCPU[b], loopFlt[b] = append(loopCPU[b], cpuTime(cmd)), append(loopFlt[b], minorFaults(cmd))
			if b == 0 {
				loopRSS = max(loopRSS, maxRSS(cmd))
				prefix, ntools = prefixSize(t, rec[0].Body)
			}
		}
	}
	ratioLine("first request:", first[0], first[1], "(target <= 1.3)")
	depsLine("first request:", first, [3][]time.Duration{}, [3][]int64{})
	ratioLine("loop: read+bash+answer", loop[0], loop[1], "")
	ratioLine("loop: read+bash+answer CPU time", loopCPU[0], loopCPU[1], "")
	countLine("loop: read+bash+answer page faults", loopFlt[0], loopFlt[1])
	depsLine("loop: read+bash+answer", loop, loopCPU, loopFlt)
	fmt.Printf("loop: peak RSS %.1f MB (target 25 MB)\n", float64(loopRSS)/1024)

	// The same loop as the second run in one project and home. Every run
	// above has a fresh project and home, so it also makes what a
	// project's first run makes once (the sessions directory and its
	// .gitignore, the checkpoint store, the history and registry files,
	// the decision log): on the bench machine a file or directory made
	// costs about a millisecond. A person's runs are mostly this one.
	var warm, warmCPU [3][]time.Duration
	var warmFlt [3][]int64
	for i := 0; i < runs; i++ {
		for b, bin := range bins {
			e := newE2E(t, append(loopScript(), loopScript()...)...)
			e.write("a.txt", "alpha\n")
			for k := 0; k < 2; k++ {
				cmd := exec.Command(bin, "run", "go")
				cmd.Dir, cmd.Env = e.repo, e.env
				start := time.Now()
				out, err := cmd.CombinedOutput()
				wall := time.Since(start)
				if err != nil {
					t.Fatalf("%s run %d: %v\n%s", filepath.Base(bin), k+1, err, out)
				}
				if k == 1 {
					warm[b], warmCPU[b], warmFlt[b] = append(warm[b], wall), append(warmCPU[b], cpuTime(cmd)), append(warmFlt[b], minorFaults(cmd))
				}
			}
			if n := len(e.srv.Received()); n != 6 {
				t.Fatalf("%s made %d requests in two runs, want 6", filepath.Base(bin), n)
			}
		}
	}
	ratioLine("loop, second run in the project: read+bash+answer", warm[0], warm[1], "")
	ratioLine("loop, second run in the project: read+bash+answer CPU time", warmCPU[0], warmCPU[1], "")
	countLine("loop, second run in the project: read+bash+answer page faults", warmFlt[0], warmFlt[1])
	depsLine("loop, second run in the project: read+bash+answer", warm, warmCPU, warmFlt)

	benchBashStep(t, rx)
	benchReadStep(t, rx)
	fmt.Printf("prefix: %.1f KB system prompt + %d tool schemas (target < 16KB)\n", float64(prefix)/1024, ntools)
	e := newE2E(t, scripted.Turn{Text: "done"})
	installAgentsAndSkills(e, 400)
	cmd := exec.Command(rx, "run", "go")
	cmd.Dir, cmd.Env = e.repo, e.env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("run with agents and skills: %v\n%s", err, out)
	}
	prefix, ntools = prefixSize(t, e.srv.Requests()[0])
	fmt.Printf("prefix: %.1f KB with 400 agents and 400 skills installed, %d tool schemas (target < 16KB)\n", float64(prefix)/1024, ntools)
}

// benchBashStep measures what a bash call costs beyond the command itself.
// A run makes twelve `bash -c true` calls in a row; the bench stamps the
// tool_start event as it arrives on reasonix's stdout (stream-json, flushed
// per event) and the server stamps the next request. Their difference,
// minus the median time of `bash -c true` started unconfined by os/exec
// here (same directory and environment, output to a pipe as the bash tool
// collects it), is the overhead:
// the permission gate, the Landlock confinement, starting and reaping the
// process, the control-file guard, the session file's sync, and encoding
// and sending the next request. The command's own time started confined
// by the sandbox, as reasonix starts it, is printed beside it. Runs
// alternate with the command alone so both see the same load on the
// machine.
//
// Wall time moves with the load of a shared machine, so the CPU time a
// call costs is printed too: the CPU time (reasonix and the processes it
// waited for) of a run of twelve calls less that of a run of two, per
// call, less the CPU time of `bash -c true` alone.
func benchBashStep(t *testing.T, rx string) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	sandbox := permission.NewSandbox(permission.SandboxOptions{Workspace: t.TempDir()}).Start
	alone := func(e *e2e, confine bool) (time.Duration, time.Duration) {
		cmd := exec.Command(bash, "-c", "true")
		cmd.Dir, cmd.Env = e.repo, e.env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		begin := time.Now()
		start := cmd.Start
		if confine {
			start = func() error { return sandbox(cmd) }
		}
		if err := start(); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
		return time.Since(begin), cpuTime(cmd)
	}
	// run makes n bash calls; it returns the CPU time of the process and
	// the e2e it ran in, with the tool events' arrival times.
	run := func(n int, repo bool) (time.Duration, *e2e, *eventClock) {
		var turns []scripted.Turn
		for k := 0; k < n; k++ {
			// Each call differs (true ignores its argument): a run refuses
			// an exact repeat of a call, and a refusal runs no command.
			turns = append(turns, scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": fmt.Sprintf("true %d", k)})}})
		}
		e := newE2E(t, append(turns, scripted.Turn{Text: "done"})...)
		if repo {
			gitInit(t, e)
		}
		cmd := exec.Command(rx, "run", "--output-format", "stream-json", "go")
		cmd.Dir, cmd.Env = e.repo, e.env
		ev := &eventClock{}
		cmd.Stdout = ev
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("run: %v\n%s", err, stderr.String())
		}
		rec := e.srv.Received()
		starts, ends := ev.times("tool_start"), ev.times("tool_end")
		if len(starts) != n || len(ends) != n || len(rec) != n+1 {
			t.Fatalf("%d tool starts, %d ends, %d requests; want %d, %d, %d\n%s", len(starts), len(ends), len(rec), n, n, n+1, stderr.String())
		}
		refusedCheck(t, rec)
		return cpuTime(cmd), e, ev
	}
	const calls = 12
	var own, ownCPU, confined, gap, inTool, after, cpuPerCall, repoGap, repoOwn []time.Duration
	for i := 0; i < 8; i++ {
		cpu2, _, _ := run(2, false)
		cpuN, e, ev := run(calls, false)
		cpuPerCall = append(cpuPerCall, (cpuN-cpu2)/(calls-2))
		rec := e.srv.Received()
		starts, ends := ev.times("tool_start"), ev.times("tool_end")
		for k := 1; k < calls; k++ { // the first call pays one-time warm-up
			gap = append(gap, rec[k+1].At.Sub(starts[k]))
			inTool = append(inTool, ends[k].Sub(starts[k]))
			after = append(after, rec[k+1].At.Sub(ends[k]))
			d, c := alone(e, false)
			own, ownCPU = append(own, d), append(ownCPU, c)
			d, _ = alone(e, true)
			confined = append(confined, d)
		}
		if i%2 == 0 {
			// The same in a fresh git repository, where people work: the
			// control-file guard looks at its hooks and config around
			// every call.
			_, e, ev := run(calls, true)
			rec, starts := e.srv.Received(), ev.times("tool_start")
			for k := 1; k < calls; k++ {
				repoGap = append(repoGap, rec[k+1].At.Sub(starts[k]))
				d, _ := alone(e, false)
				repoOwn = append(repoOwn, d)
			}
		}
	}
	ownM := median(own)
	over := median(gap) - ownM
	verdict := func(d time.Duration) string {
		if d > 2*time.Millisecond {
			return "NOT met"
		}
		return "met"
	}
	fmt.Printf("tool: bash call overhead %s ms per call beyond the command's own time (target <= 2 ms: %s); "+
		"tool_start to next request %s ms median (fastest %s ms), `bash -c true` alone %s ms\n",
		ms(over), verdict(over), ms(median(gap)), ms(slices.Min(gap)), ms(ownM))
	repoOver := median(repoGap) - median(repoOwn)
	fmt.Printf("tool: bash call overhead in a fresh git repository %s ms per call beyond the command's own time (target <= 2 ms: %s)\n",
		ms(repoOver), verdict(repoOver))
	fmt.Printf("tool: bash call CPU %s ms per call beyond `bash -c true`'s own %s ms (median of 8 runs, fastest %s ms; steadier than wall time under load)\n",
		ms(median(cpuPerCall)-median(ownCPU)), ms(median(ownCPU)), ms(slices.Min(cpuPerCall)-median(ownCPU)))
	fmt.Printf("tool: bash call %s ms from tool_start to tool_end, %s ms from tool_end to the next request; "+
		"`bash -c true` alone started confined %s ms (+%s ms)\n",
		ms(median(inTool)), ms(median(after)), ms(median(confined)), ms(median(confined)-ownM))
}

// benchReadStep: six read_file calls in a row; the gap between requests
// is stream + parse + gate + tool + append + next request.
func benchReadStep(t *testing.T, rx string) {
	var gap []time.Duration
	for i := 0; i < 5; i++ {
		var turns []scripted.Turn
		for k := 0; k < 6; k++ {
			// Six files: a run refuses an exact repeat of a call.
			turns = append(turns, scripted.Turn{ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": fmt.Sprintf("a%d.txt", k)})}})
		}
		e := newE2E(t, append(turns, scripted.Turn{Text: "done"})...)
		for k := 0; k < 6; k++ {
			e.write(fmt.Sprintf("a%d.txt", k), "alpha\n")
		}
		cmd := exec.Command(rx, "run", "go")
		cmd.Dir, cmd.Env = e.repo, e.env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("run: %v\n%s", err, out)
		}
		rec := e.srv.Received()
		refusedCheck(t, rec)
		for k := 2; k < len(rec); k++ { // skip the first step's one-time warm-up
			gap = append(gap, rec[k].At.Sub(rec[k-1].At))
		}
	}
	fmt.Printf("tool step: %s ms median from one request to the next around a read_file call, stream included (target 2ms + stream)\n", ms(median(gap)))
}

// refusedCheck fails the bench when a call was refused rather than run
// (the result then says "not run"): the figures would time a refusal.
func refusedCheck(t *testing.T, rec []llmtest.Received) {
	t.Helper()
	for _, r := range rec {
		if bytes.Contains(r.Body, []byte("not run:")) {
			t.Fatalf("a call was refused, not run; the figures would not time it:\n%s", r.Body)
		}
	}
}

// releaseBuild builds pkg as `make build` does, with the build tags
// given.
func releaseBuild(t *testing.T, out, pkg string, tags ...string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-tags", strings.Join(tags, ","), "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build %s: %v\n%s", pkg, err, b)
	}
}

func timeRun(t *testing.T, cmd *exec.Cmd) (time.Duration, *exec.Cmd) {
	t.Helper()
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	return time.Since(start), cmd
}

func ratioLine(what string, rx, floor []time.Duration, target string) {
	r, f := median(rx), median(floor)
	line := fmt.Sprintf("%s reasonix %s ms floor %s ms ratio %.2f", what, ms(r), ms(f), float64(r)/float64(f))
	if target != "" {
		line += " " + target
	}
	fmt.Println(line)
}

// depsLine prints, for the figures of reasonix, the floor and the floor
// with every dependency linked (in that order), the last against the
// floor (what the dependencies' package init costs) and reasonix against
// it (what Reasonix's own code costs); CPU and fault figures are left out
// when not given.
func depsLine(what string, wall, cpu [3][]time.Duration, flt [3][]int64) {
	line := fmt.Sprintf("%s floor with every dependency linked %s ms, %.2f the floor's; reasonix %.2f of it",
		what, ms(median(wall[2])), float64(median(wall[2]))/float64(median(wall[1])), float64(median(wall[0]))/float64(median(wall[2])))
	if cpu[2] != nil {
		line += fmt.Sprintf("; CPU %.2f and %.2f", float64(median(cpu[2]))/float64(median(cpu[1])), float64(median(cpu[0]))/float64(median(cpu[2])))
	}
	if flt[2] != nil {
		line += fmt.Sprintf("; page faults %.2f and %.2f", ratio(flt[2], flt[1]), ratio(flt[0], flt[2]))
	}
	fmt.Println(line)
}

// countLine prints the medians of two counts and their ratio.
func countLine(what string, rx, floor []int64) {
	fmt.Printf("%s reasonix %d floor %d ratio %.2f\n", what, medianCount(rx), medianCount(floor), ratio(rx, floor))
}

func medianCount(c []int64) int64 {
	s := slices.Clone(c)
	slices.Sort(s)
	return s[len(s)/2]
}

// ratio is the ratio of the medians of two counts.
func ratio(a, b []int64) float64 { return float64(medianCount(a)) / float64(medianCount(b)) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

// eventClock stamps each stream-json event line with the time it arrived.
type eventClock struct {
	mu      sync.Mutex
	partial []byte
	events  []stampedEvent
}

type stampedEvent struct {
	typ string
	at  time.Time
}

func (c *eventClock) Write(p []byte) (int, error) {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.partial = append(c.partial, p...)
	for {
		i := bytes.IndexByte(c.partial, '\n')
		if i < 0 {
			break
		}
		var e struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(c.partial[:i], &e) == nil {
			c.events = append(c.events, stampedEvent{e.Type, now})
		}
		c.partial = c.partial[i+1:]
	}
	return len(p), nil
}

func (c *eventClock) times(typ string) []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []time.Time
	for _, e := range c.events {
		if e.typ == typ {
			out = append(out, e.at)
		}
	}
	return out
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

func cpuTime(cmd *exec.Cmd) time.Duration {
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2].Round(10 * time.Microsecond)
}

// TestHideBench prints what hiding files from a command costs (make
// bench): `bash -c true` started by the sandbox as reasonix starts it in a
// project without a Read deny rule inside the workspace, and in one with
// a .env such a rule hides (through the helper, in a user and mount
// namespace), and in one where an Edit deny rule makes it read-only (the
// same helper). Alternating, median of 40 each.
func TestHideBench(t *testing.T) {
	if os.Getenv("REASONIX_BENCH") == "" {
		t.Skip("figures only: set REASONIX_BENCH=1 (make bench)")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, ".env"), []byte("K=1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	opts := permission.SandboxOptions{Workspace: ws}
	if enforced, _, detail := permission.SandboxStatus(opts); !enforced {
		t.Skipf("Landlock not enforced here: %s", detail)
	}
	if ok, why := permission.HidingAvailable(); !ok {
		t.Skipf("hiding not available: %s", why)
	}
	plain := permission.NewSandbox(opts).Start
	opts.Hide = []*permission.Hidden{permission.HiddenReads([]string{"Read(./.env)"}, ws)}
	hidden := permission.NewSandbox(opts).Start
	opts.Hide = nil
	opts.Protect = []*permission.Hidden{permission.ProtectedWrites([]string{"Edit(./.env)"}, ws)}
	protected := permission.NewSandbox(opts).Start
	once := func(start func(*exec.Cmd) error) time.Duration {
		cmd := exec.Command(bash, "-c", "true")
		cmd.Dir = ws
		begin := time.Now()
		if err := start(cmd); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
		return time.Since(begin)
	}
	once(plain)
	once(hidden)
	once(protected)
	var p, h, r []time.Duration
	for i := 0; i < 40; i++ {
		p = append(p, once(plain))
		h = append(h, once(hidden))
		r = append(r, once(protected))
	}
	fmt.Printf("tool: bash -c true confined %s ms, with a .env hidden (helper, user and mount namespace) %s ms: +%s ms per command in projects with a Read deny rule inside the workspace\n",
		ms(median(p)), ms(median(h)), ms(median(h)-median(p)))
	fmt.Printf("tool: bash -c true with a file mounted read-only (helper, user and mount namespace) %s ms: +%s ms per command in projects with an Edit deny rule naming a file inside the workspace\n",
		ms(median(r)), ms(median(r)-median(p)))
}
