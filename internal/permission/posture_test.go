package permission

import (
	"context"
	"testing"
)

// TestSetPostureSwitchesEveryViewButAnAgentsOwn: a person switching to
// auto lets writes through without a question in every role's view, an
// agent file that chose its own posture keeps it, and dangerous commands
// still ask whatever the posture.
func TestSetPostureSwitchesEveryViewButAnAgentsOwn(t *testing.T) {
	ap := &ScriptedApprover{Func: func(Request) Answer { return DenyAnswer }}
	g := NewGate(GateOptions{Approver: ap, Workspace: t.TempDir()})
	executor := g.ForRole("executor", false)
	own, err := g.RoleView("reviewer", false, "ask", nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if v := executor.Authorize(ctx, bashInv("touch a.txt")); v.Allow {
		t.Fatal("ask posture allowed a write without a person")
	}
	asked := len(ap.Requests())
	if err := g.SetPosture(ModeAuto); err != nil {
		t.Fatal(err)
	}
	if executor.Posture() != ModeAuto {
		t.Errorf("executor view posture = %q, want auto", executor.Posture())
	}
	if v := executor.Authorize(ctx, bashInv("touch a.txt")); !v.Allow {
		t.Errorf("auto posture refused a workspace write: %s", v.Message)
	}
	if len(ap.Requests()) != asked {
		t.Error("auto posture asked about a workspace write")
	}
	if v := own.Authorize(ctx, bashInv("touch a.txt")); v.Allow {
		t.Error("an agent file's own ask posture was overridden")
	}
	if v := executor.Authorize(ctx, bashInv("rm -rf /")); v.Allow {
		t.Error("a dangerous command ran in auto posture")
	}
	if err := g.SetPosture("plan"); err == nil {
		t.Error(`SetPosture("plan") accepted`)
	}
}
