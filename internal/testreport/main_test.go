package main

import (
	"strings"
	"testing"
)

// A stream as `go test -json` writes it: one package with a skipped and
// a passing test, one with a failing test, one that did not build.
const stream = `{"Action":"start","Package":"a"}
{"Action":"run","Package":"a","Test":"TestNode"}
{"Action":"output","Package":"a","Test":"TestNode","Output":"=== RUN   TestNode\n"}
{"Action":"output","Package":"a","Test":"TestNode","Output":"    node_test.go:40: skipped: node is not installed\n"}
{"Action":"output","Package":"a","Test":"TestNode","Output":"--- SKIP: TestNode (0.00s)\n"}
{"Action":"skip","Package":"a","Test":"TestNode","Elapsed":0}
{"Action":"output","Package":"a","Test":"TestOK","Output":"=== RUN   TestOK\n"}
{"Action":"pass","Package":"a","Test":"TestOK","Elapsed":0}
{"Action":"pass","Package":"a","Elapsed":0.5}
{"Action":"output","Package":"b","Test":"TestBad","Output":"=== RUN   TestBad\n"}
{"Action":"output","Package":"b","Test":"TestBad","Output":"    bad_test.go:9: want 2, got 3\n"}
{"Action":"output","Package":"b","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}
{"Action":"fail","Package":"b","Test":"TestBad","Elapsed":0}
{"Action":"output","Package":"b","Output":"FAIL\n"}
{"Action":"fail","Package":"b","Elapsed":0.2}
{"ImportPath":"c","Action":"build-output","Output":"c/c.go:3:1: syntax error\n"}
{"ImportPath":"c","Action":"build-fail"}
{"Action":"skip","Package":"d"}
`

func TestReport(t *testing.T) {
	var out strings.Builder
	failed, err := report(strings.NewReader("# vet line\n"+stream), &out)
	if err != nil {
		t.Fatal(err)
	}
	if !failed {
		t.Error("a failing test and a failed build were not reported as a failure")
	}
	got := out.String()
	for _, want := range []string{
		"# vet line",
		"ok  \ta\t0.500s",
		"bad_test.go:9: want 2, got 3",
		"FAIL\tb\t0.200s",
		"c/c.go:3:1: syntax error",
		"?   \td\t[no test files]",
		"1 tests skipped:\nSKIP a TestNode: node_test.go:40: skipped: node is not installed",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "TestOK") {
		t.Errorf("a passing test's output was printed:\n%s", got)
	}
}

func TestReportAllPassed(t *testing.T) {
	var out strings.Builder
	failed, err := report(strings.NewReader(`{"Action":"pass","Package":"a","Elapsed":1}`+"\n"), &out)
	if err != nil || failed {
		t.Fatalf("failed=%v err=%v", failed, err)
	}
	if strings.Contains(out.String(), "skipped") {
		t.Errorf("a skip summary with nothing skipped:\n%s", out.String())
	}
}
