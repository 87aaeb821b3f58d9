package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
)

// askTrust runs the trust question on a simulated 80x24 screen, waits for
// want, presses keys and returns the answer.
func askTrust(t *testing.T, lang string, want []string, keys ...*tcell.EventKey) (bool, string, error) {
	t.Helper()
	sim := tcell.NewSimulationScreen("UTF-8")
	if err := sim.Init(); err != nil {
		t.Fatal(err)
	}
	sim.SetSize(80, 24)
	s := newTrustScreen(TrustOptions{Screen: sim, Language: lang, Folder: "/home/u/src/[red]repo",
		Settings: []TrustSetting{
			{Place: "reasonix.toml:3", Key: "providers", Why: "model endpoints: the conversation and your API key would go there"},
			{Place: "reasonix.toml:9", Key: "sandbox.bash", Why: "turns the sandbox off"},
		}})
	type outcome struct {
		trust bool
		err   error
	}
	done := make(chan outcome, 1)
	go func() {
		trust, err := s.run(context.Background())
		done <- outcome{trust, err}
	}()
	// Compared without spaces: a wide rune's second cell reads as one.
	var screen string
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		screen = simText(s.app, sim)
		compact, missing := strings.ReplaceAll(screen, " ", ""), false
		for _, w := range want {
			missing = missing || !strings.Contains(compact, strings.ReplaceAll(w, " ", ""))
		}
		if !missing {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("screen never showed %q:\n%s", want, screen)
		}
	}
	for _, k := range keys {
		sim.InjectKey(k.Key(), k.Rune(), k.Modifiers())
	}
	select {
	case o := <-done:
		return o.trust, screen, o.err
	case <-time.After(5 * time.Second):
		t.Fatalf("the question did not end; the screen:\n%s", simText(s.app, sim))
	}
	return false, "", nil
}

func key(k tcell.Key) *tcell.EventKey { return tcell.NewEventKey(k, 0, tcell.ModNone) }
func runeKey(r rune) *tcell.EventKey  { return tcell.NewEventKey(tcell.KeyRune, r, tcell.ModNone) }

// The question names the folder (its brackets shown, not read as a tag)
// and each setting with its place and reason; the choice starts on Not
// now, so Enter alone trusts nothing; ↑ Enter or 1 trusts; Esc is Not
// now; Ctrl-C leaves unanswered.
func TestTrustQuestion(t *testing.T) {
	want := []string{"Trust this project?", "/home/u/src/[red]repo",
		"reasonix.toml:3: providers (model endpoints: the conversation", "key would go there)",
		"reasonix.toml:9: sandbox.bash (turns the sandbox off)", "reasonix trust --revoke", "Trust this project", "Not now"}
	trust, screen, err := askTrust(t, "", want, key(tcell.KeyEnter))
	if err != nil || trust {
		t.Errorf("Enter: trust %v, %v", trust, err)
	}
	if strings.Contains(screen, "信任") {
		t.Errorf("an English question shows Chinese:\n%s", screen)
	}
	if trust, _, err := askTrust(t, "", want, key(tcell.KeyUp), key(tcell.KeyEnter)); err != nil || !trust {
		t.Errorf("Up Enter: trust %v, %v", trust, err)
	}
	if trust, _, err := askTrust(t, "", want, runeKey('1')); err != nil || !trust {
		t.Errorf("1: trust %v, %v", trust, err)
	}
	if trust, _, err := askTrust(t, "", want, key(tcell.KeyUp), key(tcell.KeyEscape)); err != nil || trust {
		t.Errorf("Esc: trust %v, %v", trust, err)
	}
	if _, _, err := askTrust(t, "", want, key(tcell.KeyCtrlC)); !errors.Is(err, ErrTrustCancelled) {
		t.Errorf("Ctrl-C: %v", err)
	}
}

// In Chinese the question, the choices and config's reasons are Chinese;
// the keys and places stay as the file has them.
func TestTrustQuestionInChinese(t *testing.T) {
	trust, _, err := askTrust(t, "zh_CN.UTF-8", []string{"信任此项目？", "reasonix.toml:3: providers", "模型端点", "关闭沙箱", "暂不"},
		runeKey('2'))
	if err != nil || trust {
		t.Errorf("2: trust %v, %v", trust, err)
	}
}
