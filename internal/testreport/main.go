// Command testreport reads `go test -json` on stdin and prints what a
// person running `make test` needs: one line per package, every skipped
// test with its reason (a test that cannot run here must say why, not
// vanish), and the whole output of every failed test and failed package
// (race reports and panics included). It exits 1 when anything failed, so
// the Makefile's exit status is the tests'.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of `go test -json` (cmd/test2json).
type event struct {
	Action     string
	Package    string
	Test       string
	Output     string
	Elapsed    float64
	ImportPath string
}

type key struct{ pkg, test string }

func main() {
	failed, err := report(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testreport:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

// report copies the summary of the event stream in to out and says
// whether any test, package or build failed.
func report(in io.Reader, out io.Writer) (bool, error) {
	outputs := map[key]*strings.Builder{}
	var skipped []string
	failed := false
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var e event
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &e) != nil {
			// Not an event (go vet or the toolchain wrote it): keep it.
			fmt.Fprintf(out, "%s\n", line)
			continue
		}
		pkg := e.Package
		if pkg == "" {
			pkg = e.ImportPath
		}
		k := key{pkg, e.Test}
		switch e.Action {
		case "output", "build-output":
			b := outputs[k]
			if b == nil {
				b = &strings.Builder{}
				outputs[k] = b
			}
			b.WriteString(e.Output)
		case "skip":
			if e.Test != "" {
				skipped = append(skipped, fmt.Sprintf("SKIP %s %s: %s", pkg, e.Test, reason(outputs[k])))
			} else {
				fmt.Fprintf(out, "?   \t%s\t[no test files]\n", pkg)
			}
			delete(outputs, k)
		case "pass":
			if e.Test == "" {
				fmt.Fprintf(out, "ok  \t%s\t%.3fs\n", pkg, e.Elapsed)
			}
			delete(outputs, k)
		case "fail", "build-fail":
			failed = true
			b := outputs[k]
			if b != nil {
				fmt.Fprint(out, b.String())
			}
			// go test's own output usually ends with the package's
			// FAIL line; say it only where it did not.
			if e.Test == "" && e.Action == "fail" && (b == nil || !strings.Contains(b.String(), "FAIL\t"+pkg)) {
				fmt.Fprintf(out, "FAIL\t%s\t%.3fs\n", pkg, e.Elapsed)
			}
			delete(outputs, k)
		}
	}
	if err := sc.Err(); err != nil {
		return failed, fmt.Errorf("reading go test -json: %w", err)
	}
	sort.Strings(skipped)
	if len(skipped) > 0 {
		fmt.Fprintf(out, "\n%d tests skipped:\n", len(skipped))
		for _, s := range skipped {
			fmt.Fprintln(out, s)
		}
	}
	return failed, nil
}

// reason is the message a skipped test gave (t.Skip's text), from its
// output without the "=== RUN" and "--- SKIP" framing.
func reason(b *strings.Builder) string {
	if b == nil {
		return "(no reason given)"
	}
	var parts []string
	for _, l := range strings.Split(b.String(), "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		parts = append(parts, t)
	}
	if len(parts) == 0 {
		return "(no reason given)"
	}
	return strings.Join(parts, " ")
}
