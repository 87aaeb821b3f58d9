package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/reasonix/reasonix/tools"
)

// TestToolsAcceptQuotedScalars checks that every tool takes numbers and
// booleans sent as strings, as models often send them.
func TestToolsAcceptQuotedScalars(t *testing.T) {
	root := writeTree(t, map[string]string{
		"a.txt":       "one\ntwo\nthree\n",
		"b.txt":       "x x\n",
		"d/e/f/g.txt": "deep\n",
		"m.txt":       "Needle\nneedle\nhay\nneedle\n",
	})
	env := tools.NewEnv(root)
	env.Reads.Add(filepath.Join(root, "b.txt"))
	cases := []struct {
		tool, args string
		want       string // in the content
	}{
		{"read_file", `{"path":"a.txt","offset":"2","limit":"1"}`, "     2\ttwo\n"},
		{"edit_file", `{"path":"b.txt","old_string":"x","new_string":"y","replace_all":"true"}`, ""},
		{"ls", `{"depth":"1"}`, "  d/ (1 entries)\n"},
		{"grep", `{"pattern":"needle","output_mode":"count","case_insensitive":"true","path":"m.txt"}`, "m.txt:3\n"},
		{"grep", `{"pattern":"needle","output_mode":"content","head_limit":"1","path":"m.txt"}`, "showing 1 of 2 lines"},
		{"grep", `{"pattern":"hay","output_mode":"content","-C":"1","path":"m.txt"}`, "m.txt-2-needle\nm.txt:3:hay\nm.txt-4-needle\n"},
		{"grep", `{"pattern":"hay","output_mode":"content","before":"1","after":"0","path":"m.txt"}`, "m.txt-2-needle\nm.txt:3:hay\n"},
		{"grep", `{"pattern":"NEEDLE","-i":"true","-A":"0","-B":"0","context":"0","-n":true,"path":"m.txt"}`, "m.txt\n"},
		{"grep", `{"pattern":"needle\\nhay","multiline":"true","path":"m.txt"}`, "m.txt\n"},
		{"bash", `{"command":"echo hi","timeout":"30"}`, "hi\nexit code: 0"},
		{"bash", `{"command":"echo hi","timeout":"2.5","description":"say hi"}`, "hi\n"},
	}
	for _, c := range cases {
		t.Run(c.tool+" "+c.args, func(t *testing.T) {
			tool, _ := tools.Builtin(c.tool)
			res, err := tool.Execute(context.Background(), env, json.RawMessage(c.args))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(res.Content, c.want) {
				t.Fatalf("content %q does not contain %q", res.Content, c.want)
			}
		})
	}
}

// TestToolsRejectUnknownArguments checks that no tool silently drops a
// misspelled argument and that the error lists the accepted names.
func TestToolsRejectUnknownArguments(t *testing.T) {
	root := writeTree(t, map[string]string{"a.txt": "one\n"})
	cases := []struct{ tool, args, expected string }{
		{"read_file", `{"path":"a.txt","max_lines":5}`, "path, file_path, offset, limit"},
		{"write_file", `{"path":"n.txt","content":"x","mode":"0644"}`, "path, file_path, content"},
		{"edit_file", `{"path":"a.txt","old_string":"one","new_string":"two","replaceAll":true}`, "replace_all"},
		{"multi_edit", `{"path":"a.txt","edits":[{"old_string":"one","new_string":"two"}],"dry_run":true}`, "edits"},
		{"move_file", `{"source":"a.txt","destination":"b.txt","force":true}`, "source, destination"},
		{"patch", `{"patch":"","strip":1}`, "patch"},
		{"ls", `{"path":".","max_depth":2}`, "path, depth"},
		{"glob", `{"pattern":"*.txt","cwd":"."}`, "pattern, path"},
		{"grep", `{"pattern":"one","ignore_case":true}`, "case_insensitive"},
		{"grep", `{"pattern":"one","head":3}`, "head_limit"},
		{"bash", `{"command":"echo hi","timeout_ms":1000}`, "command, timeout, description"},
		{"todo_write", `{"todos":[],"merge":true}`, "todos"},
		{"todo_read", `{"all":true}`, "no arguments"},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			tool, ok := tools.Builtin(c.tool)
			if !ok {
				t.Fatalf("%s not registered", c.tool)
			}
			env := tools.NewEnv(root)
			_, err := tool.Execute(context.Background(), env, json.RawMessage(c.args))
			if err == nil {
				t.Fatalf("%s: unknown argument accepted", c.args)
			}
			if !strings.Contains(err.Error(), "unknown argument") || !strings.Contains(err.Error(), c.expected) {
				t.Fatalf("error %q should name the unknown argument and list %q", err, c.expected)
			}
		})
	}
	// Nothing was written or moved by the rejected calls.
	if got := strings.TrimSpace(grepOut(t, &grepTool{native: true}, root, `{"pattern":"."}`)); got != "a.txt" {
		t.Fatalf("files after rejected calls: %q", got)
	}
}

// TestGrepAcceptsEveryAlias keeps the names models trained on other agents
// send working now that unknown names are rejected.
func TestGrepAcceptsEveryAlias(t *testing.T) {
	root := searchFixture(t)
	for _, args := range []string{
		`{"pattern":"x","-i":true}`, `{"pattern":"x","-A":1}`, `{"pattern":"x","-B":1}`,
		`{"pattern":"x","-C":1}`, `{"pattern":"x","-n":true}`, `{"pattern":"x","-n":"yes"}`,
		`{"pattern":"x","before":1}`, `{"pattern":"x","after":1}`, `{"pattern":"x","context":1}`,
		`{"pattern":"x","output_mode":"files"}`, `{"pattern":"x","glob":"*.go","type":"go","path":".","multiline":false,"head_limit":0}`,
	} {
		if _, err := runTool(t, &grepTool{native: true}, tools.NewEnv(root), args); err != nil {
			t.Errorf("%s: %v", args, err)
		}
	}
}

// bigMatchTree writes n files that all match "needle", two lines each.
func bigMatchTree(t *testing.T, n int) string {
	t.Helper()
	files := map[string]string{}
	for i := 0; i < n; i++ {
		files[fmt.Sprintf("d%02d/f%04d.txt", i%17, i)] = "needle one\nhay\nneedle two\n"
	}
	return writeTree(t, files)
}

// readBound is the most files a native search that needs k files may read:
// those k plus the window of jobs searched ahead of the one consumed.
func readBound(k int) int64 {
	workers := 2 * runtime.GOMAXPROCS(0) // as nativeSearch
	return int64(k + (2*workers+1)*grepChunk)
}

// bigTreeSize is large enough that reading everything is far over readBound.
func bigTreeSize() int { return max(3000, 4*int(readBound(0))) }

// nativeCounted runs a native grep and counts the files it read.
func nativeCounted(t *testing.T, env *tools.Env, args string) (string, string, int64) {
	t.Helper()
	var a grepArgs
	if err := tools.DecodeStrict(json.RawMessage(args), &a); err != nil {
		t.Fatal(err)
	}
	req, err := newGrepRequest(env, a)
	if err != nil {
		t.Fatal(err)
	}
	var reads atomic.Int64
	req.onRead = func(string) { reads.Add(1) }
	res, err := nativeSearch(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	out, summary := req.render(res)
	return out, summary, reads.Load()
}

func TestGrepHeadLimitStopsEarly(t *testing.T) {
	n := bigTreeSize()
	root := bigMatchTree(t, n)
	env := tools.NewEnv(root)
	// Files sort as d00/f0000, d00/f0017, ... so the first hits are known.
	cases := []struct {
		args, want string
	}{
		{`{"pattern":"needle","head_limit":3}`,
			"d00/f0000.txt\nd00/f0017.txt\nd00/f0034.txt\n[head_limit: showing 3 of at least 4 lines]\n"},
		{`{"pattern":"needle","head_limit":"2","output_mode":"count"}`,
			"d00/f0000.txt:2\nd00/f0017.txt:2\n[head_limit: showing 2 of at least 3 lines]\ntotal: 6+ matching lines in 3+ files\n"},
		{`{"pattern":"needle","head_limit":3,"output_mode":"content"}`,
			"d00/f0000.txt:1:needle one\nd00/f0000.txt:3:needle two\nd00/f0017.txt:1:needle one\n[head_limit: showing 3 of at least 4 lines]\n"},
	}
	for _, c := range cases {
		var first string
		for run := 0; run < 3; run++ {
			out, _, reads := nativeCounted(t, env, c.args)
			if out != c.want {
				t.Fatalf("%s:\n got %q\nwant %q", c.args, out, c.want)
			}
			if run == 0 {
				first = out
			} else if out != first {
				t.Fatalf("%s: output changed between runs", c.args)
			}
			// Only a window of files beyond the last one needed may be read.
			if reads > readBound(4) {
				t.Fatalf("%s: read %d of %d files for a head_limit of 3", c.args, reads, n)
			}
		}
	}
	// Without head_limit everything is read and the totals are exact.
	out, summary, reads := nativeCounted(t, env, `{"pattern":"needle","output_mode":"count"}`)
	if reads != int64(n) || summary != fmt.Sprintf("%d matching lines in %d files", 2*n, n) || strings.Contains(out, "stopped") {
		t.Fatalf("full search: read %d files, summary %q", reads, summary)
	}
}

func TestGrepStopsAtOutputCap(t *testing.T) {
	n := bigTreeSize()
	root := bigMatchTree(t, n)
	env := tools.NewEnv(root)
	env.OutputLimit = 2000 // collects up to about 8000 bytes, some 150 files
	out, summary, reads := nativeCounted(t, env, `{"pattern":"needle","output_mode":"content"}`)
	if reads > readBound(200) {
		t.Fatalf("read %d of %d files with an output cap of %d bytes", reads, n, grepOutputFactor*env.OutputLimit)
	}
	if !strings.Contains(out, "[search stopped after ") || !strings.HasPrefix(out, "d00/f0000.txt:1:needle one\n") {
		t.Fatalf("output does not say the search stopped:\n%s", out)
	}
	if !strings.Contains(summary, "+ matching lines in ") {
		t.Fatalf("summary %q should be a lower bound", summary)
	}
	again, _, _ := nativeCounted(t, env, `{"pattern":"needle","output_mode":"content"}`)
	if again != out {
		t.Fatal("capped output changed between runs")
	}
	// The tool's result still fits the budget and keeps the note.
	res, err := runTool(t, &grepTool{native: true}, env, `{"pattern":"needle","output_mode":"content"}`)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) > env.OutputLimit || !strings.Contains(res.Content, "[search stopped after ") {
		t.Fatalf("result of %d bytes:\n%s", len(res.Content), res.Content)
	}
}

func TestGrepRipgrepGivesWayPastCap(t *testing.T) {
	rgAvailable(t)
	const n = 3000
	root := bigMatchTree(t, n)
	env := tools.NewEnv(root)
	env.OutputLimit = 2000
	var a grepArgs
	json.Unmarshal([]byte(`{"pattern":"needle","output_mode":"content"}`), &a)
	req, err := newGrepRequest(env, a)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rgSearch(context.Background(), req); ok {
		t.Fatal("ripgrep answered although its output passed the cap")
	}
	native := grepOut(t, &grepTool{native: true}, root, `{"pattern":"needle","head_limit":5}`)
	if got := grepOut(t, &grepTool{}, root, `{"pattern":"needle","head_limit":5}`); got != native {
		t.Fatalf("ripgrep path:\n%s\nnative:\n%s", got, native)
	}
	// Under the cap ripgrep answers, and stops where the native search does.
	small := bigMatchTree(t, 20)
	want := "d00/f0000.txt\nd00/f0017.txt\n[head_limit: showing 2 of at least 3 lines]\n"
	if got := grepOut(t, &grepTool{}, small, `{"pattern":"needle","head_limit":2}`); got != want {
		t.Fatalf("small search: %q", got)
	}
}
