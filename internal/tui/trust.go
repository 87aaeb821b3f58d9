package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// TrustSetting is a setting the project brings (in its reasonix.toml or
// its Claude Code settings files) that waits for the person's trust: where
// it is (file:line), its key and why a project may not make it on its own.
type TrustSetting struct {
	Place string
	Key   string
	Why   string
}

// TrustOptions configure [RunTrust].
type TrustOptions struct {
	// Screen is where it draws; nil opens the terminal.
	Screen tcell.Screen
	// Folder is the project's folder, as the person knows it.
	Folder   string
	Settings []TrustSetting
	// Language picks the screen's language as [App.SetLanguage] does.
	Language string
}

// ErrTrustCancelled is returned by [RunTrust] when the person leaves
// (Ctrl-C) without answering.
var ErrTrustCancelled = errors.New("trust question left unanswered")

// trustIntro opens the question (the folder); trustOutro follows the
// list of settings.
const (
	trustIntro = "[::b]Trust this project?[::-]\n\nThe project in %s makes settings a project may only make once you trust it; until then they are not applied:"
	trustOutro = "Read the files before you trust them: a repository you did not write can send your conversation and API key elsewhere, or run commands without asking you, this way. A change to these settings asks again; `reasonix trust --revoke` forgets the trust.\n[gray]↑/↓ and Enter, or 1 / 2 · Esc is Not now · Ctrl-C leaves[-]"
)

// RunTrust asks, before a session starts, whether the person trusts the
// project that makes settings (Settings) an untrusted project may not. It reports true for "Trust this project" and false for
// "Not now", where the choice starts, so that an Enter pressed out of habit
// trusts nothing; Ctrl-C gives ErrTrustCancelled.
func RunTrust(ctx context.Context, opts TrustOptions) (bool, error) {
	return newTrustScreen(opts).run(ctx)
}

type trustScreen struct {
	opts     TrustOptions
	zh       bool
	app      *tview.Application
	answered bool
	trust    bool
}

func newTrustScreen(opts TrustOptions) *trustScreen {
	return &trustScreen{opts: opts, app: tview.NewApplication(), zh: isChinese(opts.Language)}
}

func (s *trustScreen) tr(label string) string { return translate(s.zh, label) }

func (s *trustScreen) trf(format string, args ...any) string {
	return fmt.Sprintf(s.tr(format), args...)
}

// text is the question: the folder, each held setting with its place and
// why, then what trusting means.
func (s *trustScreen) text() string {
	var b strings.Builder
	b.WriteString(s.trf(trustIntro, escape(s.opts.Folder)))
	b.WriteString("\n\n")
	for _, h := range s.opts.Settings {
		// As config.HeldKey writes it, with the reason in the UI's words.
		fmt.Fprintf(&b, "  %s: [::b]%s[::-] %s\n", escape(h.Place), escape(h.Key), escape(s.trf("(%s)", s.tr(h.Why))))
	}
	b.WriteString("\n")
	b.WriteString(s.tr(trustOutro))
	return b.String()
}

func (s *trustScreen) run(ctx context.Context) (bool, error) {
	if s.opts.Screen != nil {
		s.app.SetScreen(s.opts.Screen)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	answer := func(trust bool) {
		s.answered, s.trust = true, trust
		s.app.Stop()
	}
	list := tview.NewList().ShowSecondaryText(true).SetHighlightFullLine(true).SetSelectedStyle(tcell.StyleDefault.Reverse(true))
	list.AddItem(s.tr("Trust this project"), s.tr("apply these settings, now and in later sessions"), '1', func() { answer(true) })
	list.AddItem(s.tr("Not now"), s.tr("start without them (you are asked again next time)"), '2', func() { answer(false) })
	list.SetCurrentItem(1)
	list.SetBorder(true)
	question := tview.NewTextView().SetDynamicColors(true).SetWrap(true).SetWordWrap(true).SetText(s.text())
	flex := tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(question, 0, 1, false).
		AddItem(list, 6, 0, true)
	s.app.SetRoot(flex, true)
	s.app.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		switch ev.Key() {
		case tcell.KeyCtrlC, tcell.KeyCtrlD:
			s.app.Stop()
			return nil
		case tcell.KeyEscape:
			answer(false)
			return nil
		}
		return ev
	})
	stopped := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		select {
		case <-ctx.Done():
			s.app.Stop()
		case <-stopped:
		}
	}()
	err := s.app.Run()
	close(stopped)
	<-done
	if err != nil {
		return false, fmt.Errorf("tui: %w", err)
	}
	if !s.answered {
		if err := ctx.Err(); err != nil && !errors.Is(err, context.Canceled) {
			return false, err
		}
		return false, ErrTrustCancelled
	}
	return s.trust, nil
}
