package permission

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"
)

const benchLine = "go test ./... && git status | head -20"

func benchPolicy(tb testing.TB) Policy {
	p, err := ParsePolicy("", []string{"Bash(go test:*)", "Bash(git status:*)", "Bash(head:*)", "Edit(docs/**)"},
		[]string{"Bash(git push:*)"}, []string{"Bash(curl:*)", "Read(secrets/**)"}, nil)
	if err != nil {
		tb.Fatal(err)
	}
	p.Workspace = tb.TempDir()
	return p
}

// BenchmarkDecide measures the policy on a typical command line.
func BenchmarkDecide(b *testing.B) {
	p := benchPolicy(b)
	args := bashArgs(benchLine)
	b.ReportAllocs()
	for b.Loop() {
		if decideArgs(p, "bash", false, args) != Allow {
			b.Fatal("not allowed")
		}
	}
}

// BenchmarkGateAuthorize adds the gate (grants, no log) around Decide.
func BenchmarkGateAuthorize(b *testing.B) {
	g := NewGate(GateOptions{Policy: benchPolicy(b), Workspace: b.TempDir()})
	inv := bashInv(benchLine)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if !g.Authorize(ctx, inv).Allow {
			b.Fatal("not allowed")
		}
	}
}

// TestGateBench prints the decision time per call for `make bench`.
func TestGateBench(t *testing.T) {
	if os.Getenv("REASONIX_BENCH") != "1" {
		t.Skip("set REASONIX_BENCH=1 to measure the gate")
	}
	p := benchPolicy(t)
	args := bashArgs(benchLine)
	const n = 20000
	start := time.Now()
	for i := 0; i < n; i++ {
		if decideArgs(p, "bash", false, args) != Allow {
			t.Fatal("not allowed")
		}
	}
	per := time.Since(start) / n
	fmt.Printf("gate decision: %.1fµs/call (%q)\n", float64(per.Nanoseconds())/1000, benchLine)
}
