package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/internal/benchtest"
	"github.com/reasonix/reasonix/tools"
)

// benchQueries are the searches compared against ripgrep: a literal, a
// regex with a required literal, and a case-insensitive literal.
var benchQueries = []struct{ name, pattern string }{
	{"literal", "func main"},
	{"regex", `func \w+\(ctx context\.Context`},
	{"case-insensitive", "mutex"},
}

func benchArgs(pattern string, fold bool) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"pattern": pattern, "case_insensitive": fold})
	return b
}

// TestGrepVsRipgrep times the native grep against ripgrep on GOROOT/src.
// `make bench` runs it with REASONIX_BENCH=1.
func TestGrepVsRipgrep(t *testing.T) {
	if os.Getenv("REASONIX_BENCH") != "1" {
		t.Skip("set REASONIX_BENCH=1 to compare grep with ripgrep")
	}
	rg, err := exec.LookPath("rg")
	if err != nil {
		fmt.Println("TestGrepVsRipgrep: ripgrep (rg) not on PATH; skipping")
		t.Skip("ripgrep (rg) not on PATH")
	}
	src := filepath.Join(goroot(t), "src")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("no GOROOT source at %s", src)
	}
	env := tools.NewEnv(src)
	env.OutputLimit = 1 << 30
	native := &grepTool{native: true}
	const runs = 5
	for _, q := range benchQueries {
		fold := q.name == "case-insensitive"
		var ours string
		oursT := timeRuns(runs, func() {
			res, err := native.Execute(context.Background(), env, benchArgs(q.pattern, fold))
			if err != nil {
				t.Fatal(err)
			}
			ours = res.Content
		})
		args := []string{"--no-config", "-l", "--hidden", "-g", "!.git", "-g", "!node_modules", "--no-require-git", "-e", q.pattern}
		if fold {
			args = append(args, "-i")
		}
		var theirs []byte
		rgT := timeRuns(runs, func() {
			cmd := exec.Command(rg, args...)
			cmd.Dir = src
			theirs, _ = cmd.Output()
		})
		a := strings.Fields(ours)
		b := strings.Fields(string(bytes.ReplaceAll(theirs, []byte("./"), nil)))
		sort.Strings(b)
		if a[0] == "No" {
			a = nil
		}
		if strings.Join(a, "\n") != strings.Join(b, "\n") {
			t.Errorf("%s: file sets differ: reasonix %d files, rg %d files", q.name, len(a), len(b))
		}
		fmt.Printf("grep %s: reasonix %.1fms rg %.1fms ratio %.2fx (%d files)\n",
			q.name, benchtest.Ms(oursT), benchtest.Ms(rgT), float64(oursT)/float64(rgT), len(a))
		// The tool as shipped delegates to ripgrep when it can; show that cost too.
		viaRg := timeRuns(runs, func() {
			if _, err := (&grepTool{}).Execute(context.Background(), env, benchArgs(q.pattern, fold)); err != nil {
				t.Fatal(err)
			}
		})
		fmt.Printf("grep %s: tool with rg fast path %.1fms\n", q.name, benchtest.Ms(viaRg))
	}
}

// timeRuns returns the median duration of f over n runs, after one warm-up.
func timeRuns(n int, f func()) time.Duration {
	f()
	return benchtest.Median(n, f)
}

func benchmarkGrep(b *testing.B, pattern string, fold bool, mode string) {
	src := filepath.Join(goroot(b), "src", "net")
	if _, err := os.Stat(src); err != nil {
		b.Skipf("no GOROOT source at %s", src)
	}
	env := tools.NewEnv(src)
	g := &grepTool{native: true}
	raw, _ := json.Marshal(map[string]any{"pattern": pattern, "case_insensitive": fold, "output_mode": mode})
	b.ResetTimer()
	for b.Loop() {
		if _, err := g.Execute(context.Background(), env, raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkGrepLiteral(b *testing.B) { benchmarkGrep(b, "func main", false, modeFiles) }
func BenchmarkGrepRegex(b *testing.B) {
	benchmarkGrep(b, `func \w+\(ctx context\.Context`, false, modeFiles)
}
func BenchmarkGrepFold(b *testing.B)    { benchmarkGrep(b, "mutex", true, modeFiles) }
func BenchmarkGrepContent(b *testing.B) { benchmarkGrep(b, `err != nil`, false, modeContent) }

// goroot asks the go command where the standard library sources are.
func goroot(tb testing.TB) string {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		tb.Skipf("go env GOROOT: %v", err)
	}
	return strings.TrimSpace(string(out))
}
