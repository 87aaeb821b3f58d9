package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// SetupPreset is a provider the first-run screen offers.
type SetupPreset struct {
	Name, Label string
	BaseURL     string
	// KeyEnv is the variable that holds the key ("" when none is
	// needed); KeyFound says it is set, so the screen does not ask.
	KeyEnv   string
	KeyFound bool
	// Model is the preset's default model; "" takes the server's first.
	Model string
	// SignUp is where a key is obtained.
	SignUp string
	// KeyOnly asks for the key alone: the provider is configured, only
	// its key is missing, so its address and model are not asked.
	KeyOnly bool
}

// SetupChoice is what the person settled on.
type SetupChoice struct {
	Preset  string
	BaseURL string
	// Key is a key typed on the screen; "" when the environment has it
	// or none is needed.
	Key   string
	Model string
}

// SetupOptions configure [RunSetup].
type SetupOptions struct {
	// Screen is where it draws; nil opens the terminal.
	Screen  tcell.Screen
	Presets []SetupPreset
	// Test checks that the endpoint answers, returning the models it
	// lists (nil when it does not list them).
	Test func(ctx context.Context, c SetupChoice) ([]string, error)
	// Save writes the choice and returns where.
	Save func(c SetupChoice) (string, error)
	// Intro replaces the screen's opening words (tview markup); "" is the
	// first-run welcome.
	Intro string
}

// ErrSetupCancelled is returned by [RunSetup] when the person leaves
// without saving.
var ErrSetupCancelled = errors.New("setup cancelled")

// RunSetup shows the first-run screen: a list of provider presets, then a
// short form asking only for what is missing (the key when its variable
// is unset, the model, the base URL), which tests the endpoint before
// saving. It returns the saved choice and where it went, or
// ErrSetupCancelled.
func RunSetup(ctx context.Context, opts SetupOptions) (SetupChoice, string, error) {
	return newSetupScreen(opts).run(ctx)
}

func newSetupScreen(opts SetupOptions) *setupScreen {
	return &setupScreen{opts: opts, app: tview.NewApplication()}
}

func (s *setupScreen) run(ctx context.Context) (SetupChoice, string, error) {
	opts := s.opts
	if opts.Screen != nil {
		s.app.SetScreen(opts.Screen)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.ctx = ctx
	s.pages = tview.NewPages()
	s.showList()
	s.app.SetRoot(s.pages, true)
	s.app.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		switch ev.Key() {
		case tcell.KeyCtrlC, tcell.KeyCtrlD:
			s.app.Stop()
			return nil
		case keyPump:
			s.mu.Lock()
			f := s.result
			s.result = nil
			s.mu.Unlock()
			if f != nil {
				f()
			}
			return nil
		}
		return ev
	})
	var bg sync.WaitGroup
	s.bg = &bg
	bg.Go(func() {
		select {
		case <-ctx.Done():
			s.app.Stop()
		case <-s.stopped():
		}
	})
	err := s.app.Run()
	s.closeStopped()
	cancel()
	bg.Wait()
	if err != nil {
		return SetupChoice{}, "", fmt.Errorf("tui: %w", err)
	}
	if s.path == "" {
		if ctx.Err() != nil && ctx.Err() != context.Canceled {
			return SetupChoice{}, "", ctx.Err()
		}
		return SetupChoice{}, "", ErrSetupCancelled
	}
	return s.saved, s.path, nil
}

type setupScreen struct {
	opts  SetupOptions
	app   *tview.Application
	pages *tview.Pages
	ctx   context.Context
	bg    *sync.WaitGroup

	once sync.Once
	done chan struct{}

	mu     sync.Mutex
	result func() // a finished test's outcome, run on the UI goroutine

	// UI goroutine only.
	testing bool
	saved   SetupChoice
	path    string
}

func (s *setupScreen) stopped() chan struct{} {
	s.once.Do(func() { s.done = make(chan struct{}) })
	return s.done
}

func (s *setupScreen) closeStopped() { close(s.stopped()) }

const setupIntro = "[::b]Welcome to Reasonix[::-]\n\nNo model provider is configured yet. Pick one; keys already in your environment are used as they are.\n" +
	"[gray]Enter picks · Ctrl-C leaves · `reasonix demo` shows a scripted session first[-]"

func (s *setupScreen) showList() {
	list := tview.NewList().ShowSecondaryText(true).SetHighlightFullLine(true)
	for _, p := range s.opts.Presets {
		// The key's state first: on a narrow terminal the line is cut
		// at the right, and the address is the part that can go.
		var second string
		switch {
		case p.KeyEnv == "":
			second = "no key needed"
		case p.KeyFound:
			second = "[green]key found in $" + p.KeyEnv + "[-]"
		default:
			second = "$" + p.KeyEnv + " not set: paste a key next"
		}
		second += " · " + tview.Escape(p.BaseURL)
		list.AddItem(p.Label, second, 0, func() { s.showForm(p) })
	}
	// Start on the first preset whose key is already there.
	for i, p := range s.opts.Presets {
		if p.KeyFound {
			list.SetCurrentItem(i)
			break
		}
	}
	text := setupIntro
	if s.opts.Intro != "" {
		text = s.opts.Intro
	}
	intro := tview.NewTextView().SetDynamicColors(true).SetWrap(true).SetWordWrap(true).SetText(text)
	list.SetBorder(true).SetTitle(" Provider ")
	flex := tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(intro, 5, 0, false).
		AddItem(list, 0, 1, true)
	s.pages.AddAndSwitchToPage("list", flex, true)
}

func (s *setupScreen) showForm(p SetupPreset) {
	form := tview.NewForm()
	status := tview.NewTextView().SetDynamicColors(true).SetWrap(true)
	urlField, keyField, modelField := -1, -1, -1
	if !p.KeyOnly {
		form.AddInputField("Base URL", p.BaseURL, 0, nil, nil)
		urlField = form.GetFormItemCount() - 1
	}
	if p.KeyEnv != "" && !p.KeyFound {
		form.AddPasswordField("API key", "", 0, '*', nil)
		keyField = form.GetFormItemCount() - 1
	}
	if !p.KeyOnly {
		form.AddInputField("Model", p.Model, 0, nil, nil)
		modelField = form.GetFormItemCount() - 1
	}
	text := func(i int, or string) string {
		if i < 0 {
			return or
		}
		return strings.TrimSpace(form.GetFormItem(i).(*tview.InputField).GetText())
	}
	form.AddButton("Test and save", func() {
		if s.testing {
			return
		}
		c := SetupChoice{Preset: p.Name, BaseURL: text(urlField, p.BaseURL), Model: text(modelField, p.Model)}
		if keyField >= 0 {
			c.Key = text(keyField, "")
		}
		if c.BaseURL == "" {
			status.SetText("[red]the base URL is empty[-]")
			return
		}
		s.testing = true
		status.SetText("[yellow]testing " + tview.Escape(c.BaseURL) + " …[-]")
		s.bg.Go(func() { s.test(c, status) })
	})
	form.AddButton("Back", func() { s.pages.RemovePage("form"); s.pages.SwitchToPage("list") })
	form.SetCancelFunc(func() { s.pages.RemovePage("form"); s.pages.SwitchToPage("list") })
	form.SetBorder(true).SetTitle(" " + p.Label + " ")
	var help strings.Builder
	help.WriteString("[gray]Tab moves between fields · Enter on a button presses it · Esc goes back[-]\n")
	switch {
	case p.KeyEnv != "" && p.KeyFound:
		fmt.Fprintf(&help, "The key is read from $%s; the config keeps only the variable's name.\n", p.KeyEnv)
	case p.KeyEnv != "":
		fmt.Fprintf(&help, "$%s is not set. Paste a key (kept in your credential store, or a file readable only by you)", p.KeyEnv)
		if p.SignUp != "" {
			fmt.Fprintf(&help, "; get one at %s", tview.Escape(p.SignUp))
		}
		if p.KeyOnly {
			help.WriteString(", or leave with Ctrl-C and export the variable.\n")
		} else {
			help.WriteString(", or leave it empty and export the variable before you start.\n")
		}
	}
	if p.Model == "" && !p.KeyOnly {
		help.WriteString("Leave the model empty to take the first one the server lists.\n")
	}
	helpView := tview.NewTextView().SetDynamicColors(true).SetWrap(true).SetText(help.String())
	flex := tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(helpView, 4, 0, false).
		AddItem(form, 0, 1, true).
		AddItem(status, 3, 0, false)
	s.pages.AddAndSwitchToPage("form", flex, true)
}

// test runs off the UI goroutine; it hands its outcome back.
func (s *setupScreen) test(c SetupChoice, status *tview.TextView) {
	var models []string
	var err error
	if s.opts.Test != nil {
		models, err = s.opts.Test(s.ctx, c)
	}
	if err == nil && c.Model == "" {
		if len(models) == 0 {
			err = errors.New("the server lists no models; type the model's name")
		} else {
			c.Model = models[0]
		}
	}
	// Handed over as a key event, which never blocks once the loop has
	// ended (QueueUpdateDraw would; see handOver).
	s.mu.Lock()
	s.result = func() {
		s.testing = false
		if err != nil {
			status.SetText("[red]" + tview.Escape(err.Error()) + "[-]\n[gray]fix the fields and try again, or Esc to pick another provider[-]")
			return
		}
		path, err := s.opts.Save(c)
		if err != nil {
			status.SetText("[red]" + tview.Escape(err.Error()) + "[-]")
			return
		}
		s.saved, s.path = c, path
		s.app.Stop()
	}
	s.mu.Unlock()
	s.app.QueueEvent(tcell.NewEventKey(keyPump, 0, tcell.ModNone))
}
