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
	// Language picks the screen's language as [App.SetLanguage] does.
	Language string
}

// ErrSetupCancelled is returned by [RunSetup] when the person leaves
// without saving.
var ErrSetupCancelled = errors.New("setup cancelled")

// RunSetup shows the first-run screen: a list of provider presets, then a
// short form asking only for what is missing (the key when its variable
// is unset, the model, the base URL), which tests the endpoint before
// saving; a single KeyOnly preset opens on words saying its key is
// missing. It returns the saved choice and where it went, or
// ErrSetupCancelled.
func RunSetup(ctx context.Context, opts SetupOptions) (SetupChoice, string, error) {
	return newSetupScreen(opts).run(ctx)
}

func newSetupScreen(opts SetupOptions) *setupScreen {
	return &setupScreen{opts: opts, app: tview.NewApplication(), zh: isChinese(opts.Language)}
}

// tr is the label s (its English text) in the screen's language.
func (s *setupScreen) tr(label string) string { return translate(s.zh, label) }

// trf formats args with the format's label in the screen's language.
func (s *setupScreen) trf(format string, args ...any) string {
	return fmt.Sprintf(s.tr(format), args...)
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
	zh    bool // the labels are Chinese
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

// setupIntro opens the first-run screen; missingKeyIntro the screen that
// asks for one provider's missing key (its name and variable).
const (
	setupIntro      = "[::b]Welcome to Reasonix[::-]\n\nNo model provider is configured yet. Pick one; keys already in your environment are used as they are.\n[gray]Enter picks · Ctrl-C leaves · `reasonix demo` shows a scripted session first[-]"
	missingKeyIntro = "[::b]The key of %s is missing[::-]\n\n$%s is set nowhere: not in the environment, a .env file or the credential store. Paste the key to keep it in the credential store.\n[gray]Enter picks · Ctrl-C leaves[-]"
)

func (s *setupScreen) showList() {
	list := tview.NewList().ShowSecondaryText(true).SetHighlightFullLine(true).SetSelectedStyle(tcell.StyleDefault.Reverse(true))
	for _, p := range s.opts.Presets {
		// The key's state first: on a narrow terminal the line is cut
		// at the right, and the address is the part that can go.
		var second string
		switch {
		case p.KeyEnv == "":
			second = s.tr("no key needed")
		case p.KeyFound:
			second = "[green]" + s.trf("key found in $%s", p.KeyEnv) + "[-]"
		default:
			second = s.trf("$%s not set: paste a key next", p.KeyEnv)
		}
		second += " · " + escape(p.BaseURL)
		list.AddItem(escape(s.tr(p.Label)), second, 0, func() { s.showForm(p) })
	}
	// Start on the first preset whose key is already there.
	for i, p := range s.opts.Presets {
		if p.KeyFound {
			list.SetCurrentItem(i)
			break
		}
	}
	// The first-run welcome, or, for a single KeyOnly preset, words
	// saying its key is missing.
	text := s.tr(setupIntro)
	if ps := s.opts.Presets; len(ps) == 1 && ps[0].KeyOnly {
		text = s.trf(missingKeyIntro, escape(ps[0].Name), ps[0].KeyEnv)
	}
	intro := tview.NewTextView().SetDynamicColors(true).SetWrap(true).SetWordWrap(true).SetText(text)
	list.SetBorder(true).SetTitle(" " + s.tr("Provider") + " ")
	flex := tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(intro, 6, 0, false).
		AddItem(list, 0, 1, true)
	s.pages.AddAndSwitchToPage("list", flex, true)
}

func (s *setupScreen) showForm(p SetupPreset) {
	form := tview.NewForm()
	status := tview.NewTextView().SetDynamicColors(true).SetWrap(true).SetWordWrap(true)
	urlField, keyField, modelField := -1, -1, -1
	if !p.KeyOnly {
		form.AddInputField(s.tr("Base URL"), p.BaseURL, 0, nil, nil)
		urlField = form.GetFormItemCount() - 1
	}
	if p.KeyEnv != "" && !p.KeyFound {
		form.AddPasswordField(s.tr("API key"), "", 0, '*', nil)
		keyField = form.GetFormItemCount() - 1
	}
	if !p.KeyOnly {
		form.AddInputField(s.tr("Model"), p.Model, 0, nil, nil)
		modelField = form.GetFormItemCount() - 1
	}
	text := func(i int, or string) string {
		if i < 0 {
			return or
		}
		return strings.TrimSpace(form.GetFormItem(i).(*tview.InputField).GetText())
	}
	form.AddButton(s.tr("Test and save"), func() {
		if s.testing {
			return
		}
		c := SetupChoice{Preset: p.Name, BaseURL: text(urlField, p.BaseURL), Model: text(modelField, p.Model)}
		if keyField >= 0 {
			c.Key = text(keyField, "")
		}
		if c.BaseURL == "" {
			status.SetText("[red]" + s.tr("the base URL is empty") + "[-]")
			return
		}
		if p.KeyOnly && keyField >= 0 && c.Key == "" {
			status.SetText("[red]" + s.trf("paste the key, or quit and export %s", p.KeyEnv) + "[-]")
			return
		}
		s.testing = true
		status.SetText("[yellow]" + s.trf("testing %s …", escape(c.BaseURL)) + "[-]")
		s.bg.Go(func() { s.test(c, status) })
	})
	form.AddButton(s.tr("Back"), func() { s.pages.RemovePage("form"); s.pages.SwitchToPage("list") })
	form.SetCancelFunc(func() { s.pages.RemovePage("form"); s.pages.SwitchToPage("list") })
	form.SetBorder(true).SetTitle(" " + escape(s.tr(p.Label)) + " ")
	var help strings.Builder
	help.WriteString("[gray]" + s.tr("Tab moves between fields · Enter on a button presses it · Esc goes back") + "[-]\n")
	switch {
	case p.KeyEnv != "" && p.KeyFound:
		help.WriteString(s.trf("The key is read from $%s; the config keeps only the variable's name.", p.KeyEnv) + "\n")
	case p.KeyEnv != "":
		help.WriteString(s.trf("$%s is not set. Paste a key (kept in your credential store, or a file readable only by you)", p.KeyEnv))
		if p.SignUp != "" {
			help.WriteString(s.trf("; get one at %s", escape(p.SignUp)))
		}
		if p.KeyOnly {
			help.WriteString(s.tr(", or leave with Ctrl-C and export the variable.") + "\n")
		} else {
			help.WriteString(s.tr(", or leave it empty and export the variable before you start.") + "\n")
		}
	}
	if p.Model == "" && !p.KeyOnly {
		help.WriteString(s.tr("Leave the model empty to take the first one the server lists.") + "\n")
	}
	helpView := tview.NewTextView().SetDynamicColors(true).SetWrap(true).SetWordWrap(true).SetText(help.String())
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
			err = errors.New(s.tr("the server lists no models; type the model's name"))
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
			status.SetText("[red]" + escape(err.Error()) + "[-]\n[gray]" + s.tr("fix the fields and try again, or Esc to pick another provider") + "[-]")
			return
		}
		path, err := s.opts.Save(c)
		if err != nil {
			status.SetText("[red]" + escape(err.Error()) + "[-]")
			return
		}
		s.saved, s.path = c, path
		s.app.Stop()
	}
	s.mu.Unlock()
	s.app.QueueEvent(tcell.NewEventKey(keyPump, 0, tcell.ModNone))
}
