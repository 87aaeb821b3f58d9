package tui

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// simText is the simulation screen's content as lines, read on the UI
// goroutine, which draws into it.
func simText(app *tview.Application, sim tcell.SimulationScreen) string {
	var out string
	app.QueueUpdate(func() { out = cellText(sim) })
	return out
}

func cellText(sim tcell.SimulationScreen) string {
	cells, w, _ := sim.GetContents()
	var b strings.Builder
	for i, c := range cells {
		if len(c.Runes) > 0 {
			b.WriteRune(c.Runes[0])
		} else {
			b.WriteByte(' ')
		}
		if (i+1)%w == 0 {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

func waitSim(t *testing.T, app *tview.Application, sim tcell.SimulationScreen, want ...string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		s := simText(app, sim)
		ok := true
		for _, w := range want {
			ok = ok && strings.Contains(s, w)
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("screen never showed %q:\n%s", want, s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSetupScreenAsksOnlyForTheMissingKey: a preset whose key is in the
// environment asks no key; one whose key is missing takes a pasted key,
// masked on screen; a failed test keeps the form open with the reason.
func TestSetupScreenAsksOnlyForTheMissingKey(t *testing.T) {
	sim := tcell.NewSimulationScreen("UTF-8")
	if err := sim.Init(); err != nil {
		t.Fatal(err)
	}
	sim.SetSize(80, 24)
	tests := 0
	opts := SetupOptions{
		Screen: sim,
		Presets: []SetupPreset{
			{Name: "found", Label: "Found Cloud", BaseURL: "https://found.example/v1", KeyEnv: "FOUND_KEY", KeyFound: true, Model: "f1"},
			{Name: "missing", Label: "Missing Cloud", BaseURL: "https://missing.example/a/long/compatible-mode/path/of/the/endpoint/v1", KeyEnv: "MISSING_KEY", Model: "m1", SignUp: "https://missing.example/keys"},
		},
		Test: func(_ context.Context, c SetupChoice) ([]string, error) {
			tests++
			if c.Key != "sk-pasted" {
				return nil, errors.New("key refused (HTTP 401)")
			}
			return []string{"m1"}, nil
		},
		Save: func(c SetupChoice) (string, error) { return "/home/u/.reasonix/config.toml", nil },
	}
	type outcome struct {
		c    SetupChoice
		path string
		err  error
	}
	done := make(chan outcome, 1)
	s := newSetupScreen(opts)
	go func() {
		c, p, err := s.run(context.Background())
		done <- outcome{c, p, err}
	}()
	// At 80 columns the whole intro and each preset's key state show
	// (a long address is what gets cut).
	waitSim(t, s.app, sim, "Welcome to Reasonix", "key found in $FOUND_KEY", "Missing Cloud",
		"$MISSING_KEY not set: paste a key next", "shows a scripted session first")
	sim.InjectKey(tcell.KeyEnter, 0, tcell.ModNone)
	waitSim(t, s.app, sim, "Base URL", "Model", "The key is read from $FOUND_KEY")
	if strings.Contains(simText(s.app, sim), "API key") {
		t.Fatal("the form asks for a key the environment has")
	}
	sim.InjectKey(tcell.KeyEscape, 0, tcell.ModNone)
	waitSim(t, s.app, sim, "Missing Cloud")
	sim.InjectKey(tcell.KeyDown, 0, tcell.ModNone)
	sim.InjectKey(tcell.KeyEnter, 0, tcell.ModNone)
	waitSim(t, s.app, sim, "API key", "https://missing.example/keys")
	// Base URL → API key; type a wrong key, then the button.
	sim.InjectKey(tcell.KeyTab, 0, tcell.ModNone)
	for _, r := range "bad" {
		sim.InjectKey(tcell.KeyRune, r, tcell.ModNone)
	}
	sim.InjectKey(tcell.KeyTab, 0, tcell.ModNone)
	sim.InjectKey(tcell.KeyTab, 0, tcell.ModNone)
	sim.InjectKey(tcell.KeyEnter, 0, tcell.ModNone)
	waitSim(t, s.app, sim, "key refused (HTTP 401)")
	if strings.Contains(simText(s.app, sim), "bad") {
		t.Error("the typed key shows on screen")
	}
	sim.InjectKey(tcell.KeyBacktab, 0, tcell.ModNone)
	sim.InjectKey(tcell.KeyBacktab, 0, tcell.ModNone)
	sim.InjectKey(tcell.KeyCtrlU, 0, tcell.ModNone)
	for _, r := range "sk-pasted" {
		sim.InjectKey(tcell.KeyRune, r, tcell.ModNone)
	}
	sim.InjectKey(tcell.KeyTab, 0, tcell.ModNone)
	sim.InjectKey(tcell.KeyTab, 0, tcell.ModNone)
	sim.InjectKey(tcell.KeyEnter, 0, tcell.ModNone)
	select {
	case o := <-done:
		if o.err != nil || o.c.Key != "sk-pasted" || o.c.Model != "m1" || o.c.Preset != "missing" || o.path == "" {
			t.Fatalf("setup returned %+v %q %v", o.c, o.path, o.err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("setup did not finish")
	}
	if tests != 2 {
		t.Errorf("%d tests, want 2", tests)
	}
}

func TestSetupScreenCancel(t *testing.T) {
	sim := tcell.NewSimulationScreen("UTF-8")
	if err := sim.Init(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	s := newSetupScreen(SetupOptions{Screen: sim, Presets: []SetupPreset{{Name: "x", Label: "X"}}})
	go func() {
		_, _, err := s.run(context.Background())
		done <- err
	}()
	waitSim(t, s.app, sim, "Welcome to Reasonix")
	sim.InjectKey(tcell.KeyCtrlC, 0, tcell.ModNone)
	if err := <-done; !errors.Is(err, ErrSetupCancelled) {
		t.Errorf("Ctrl-C: %v", err)
	}
}
