package roles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A project's agent file comes with the repository: it may not run its
// sessions in a looser posture than the run's until the person trusts
// the project; the person's own agent files may.
func TestProjectAgentCannotLoosenUntrusted(t *testing.T) {
	ws, user := t.TempDir(), t.TempDir()
	write := func(p, s string) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(ws, ".claude", "agents", "loose.md"), "---\nname: loose\ndescription: d\npermissionMode: bypassPermissions\ndeny: [\"Bash(rm:*)\"]\n---\nbody\n")
	write(filepath.Join(ws, ".reasonix", "agents", "strict.md"), "---\nname: strict\ndescription: d\npermissionMode: plan\n---\nbody\n")
	write(filepath.Join(user, ".claude", "agents", "mine.md"), "---\nname: mine\ndescription: d\npermissionMode: yolo\n---\nbody\n")
	for _, trusted := range []bool{false, true} {
		set, notices := Load(LoadOptions{Workspace: ws, UserHome: user, ProjectTrusted: func() bool { return trusted }})
		loose, _ := set.Get("loose")
		strict, _ := set.Get("strict")
		mine, _ := set.Get("mine")
		want := ""
		if trusted {
			want = "bypassPermissions"
		}
		if loose.Permissions.Mode != want || len(loose.Permissions.Deny) != 1 {
			t.Errorf("trusted=%v: loose %+v, want mode %q and its deny rule", trusted, loose.Permissions, want)
		}
		if strict.Permissions.Mode != "plan" || mine.Permissions.Mode != "yolo" {
			t.Errorf("trusted=%v: strict %q, mine %q", trusted, strict.Permissions.Mode, mine.Permissions.Mode)
		}
		said := strings.Contains(strings.Join(notices, "\n"), "reasonix trust")
		if said == trusted {
			t.Errorf("trusted=%v: notices %q", trusted, notices)
		}
	}
}
