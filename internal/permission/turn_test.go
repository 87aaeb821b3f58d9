package permission

import (
	"context"
	"strings"
	"testing"
)

// A command's allowed-tools allow its commands for the turn only, and
// never past a deny rule or the dangerous class.
func TestPreApproveForOneTurn(t *testing.T) {
	ap := &ScriptedApprover{Func: func(Request) Answer { return DenyAnswer }}
	g := NewGate(GateOptions{Policy: mustPolicy(t, "", nil, nil, []string{"Bash(git push:*)"}), Approver: ap, Workspace: t.TempDir()})
	view := g.ForRole("executor", false)
	ctx := context.Background()
	if v := view.Authorize(ctx, bashInv("git add x")); v.Allow {
		t.Fatal("git add allowed before the turn")
	}
	release, err := g.PreApprove([]string{"Bash(git add:*)", "Bash(git push:*)", "Bash(rm:*)"})
	if err != nil {
		t.Fatal(err)
	}
	if v := view.Authorize(ctx, bashInv("git add x")); !v.Allow {
		t.Errorf("git add refused during the turn: %s", v.Message)
	}
	asked := len(ap.Requests())
	if v := view.Authorize(ctx, bashInv("git push origin main")); v.Allow {
		t.Error("a deny rule was overridden by allowed-tools")
	}
	if v := view.Authorize(ctx, bashInv("rm -rf /")); v.Allow || len(ap.Requests()) != asked+1 {
		t.Errorf("a dangerous command was not asked about: %+v, %d requests", v, len(ap.Requests()))
	}
	release()
	if v := view.Authorize(ctx, bashInv("git add x")); v.Allow {
		t.Error("git add still allowed after the turn")
	}
	release, err = g.PreApprove([]string{"Bash(unclosed", "WebSearch", "Bash(git add:*)"})
	if err == nil || !strings.Contains(err.Error(), "Bash(unclosed") {
		t.Errorf("malformed rules not named: %v", err)
	}
	if v := view.Authorize(ctx, bashInv("git add x")); !v.Allow {
		t.Errorf("a good rule beside a bad one was dropped: %s", v.Message)
	}
	release()
}
