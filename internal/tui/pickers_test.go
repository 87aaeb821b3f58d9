package tui

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
	"github.com/rivo/uniseg"

	"github.com/reasonix/reasonix/commands"
	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/orchestrator"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/providers/scripted"
	"github.com/reasonix/reasonix/roles"
)

// twoModels resolves "" and "scripted/sim-model" to sim-model and
// "scripted/NAME" to NAME, all on the harness's scripted provider.
func twoModels(rt *orchestrator.Runtime, hub *events.Hub) {
	orig := rt.Resolve
	rt.Resolve = func(ref string) (providers.Provider, string, error) {
		p, _, err := orig("")
		name := strings.TrimPrefix(ref, "scripted/")
		if name == "" {
			name = "sim-model"
		}
		return p, name, err
	}
}

var modelChoices = []ModelChoice{
	{Ref: "scripted/sim-model", Provider: "scripted", Default: true, Note: "128k context"},
	{Ref: "scripted/other-model", Provider: "scripted"},
}

// TestModelPicker: /model lists the configured models with the current one
// marked; choosing another says the cache breaks, shows it in the status
// line, and the next request goes to it with the history intact. /model
// REF switches at once.
func TestModelPicker(t *testing.T) {
	h := startWith(t, Options{Models: func() []ModelChoice { return modelChoices }}, twoModels,
		scripted.Turn{Text: "first answer"}, scripted.Turn{Text: "second answer"}, scripted.Turn{Text: "third answer"})
	h.typeText("hello")
	h.key(tcell.KeyEnter)
	h.waitFor("first answer", "ready")
	h.typeText("/model")
	h.key(tcell.KeyEnter)
	h.waitFor("model for the next request", "● scripted/sim-model", "scripted/other-model", "(default)", "128k context")
	h.key(tcell.KeyDown)
	h.key(tcell.KeyEnter)
	s := h.waitFor("model scripted/other-model for the next request", "prompt cache is per model")
	if !strings.Contains(lastLine(s), "scripted/other-model") {
		t.Errorf("the status line does not show the new model:\n%s", lastLine(s))
	}
	h.typeText("again")
	h.key(tcell.KeyEnter)
	h.waitFor("second answer")
	reqs := h.model.Requests()
	if got := reqs[1].Model; got != "other-model" {
		t.Errorf("the request after /model went to %q", got)
	}
	if n := len(reqs[1].Messages); n < 4 || reqs[1].Messages[1].Content != "hello" {
		t.Errorf("the history did not follow the switch: %+v", reqs[1].Messages)
	}
	h.typeText("/model scripted/sim-model")
	h.key(tcell.KeyEnter)
	h.waitFor("model scripted/sim-model for the next request")
	h.typeText("once more")
	h.key(tcell.KeyEnter)
	h.waitFor("third answer")
	if got := h.model.Requests()[2].Model; got != "sim-model" {
		t.Errorf("/model REF: the request went to %q", got)
	}
	// Esc closes the picker without switching.
	h.typeText("/model")
	h.key(tcell.KeyEnter)
	h.waitFor("model for the next request")
	h.key(tcell.KeyEscape)
	h.waitFor("Ask Reasonix")
	if s := h.text(); strings.Contains(s, "model for the next request (now") {
		t.Errorf("Esc left the picker open:\n%s", s)
	}
}

// TestPickerTitleIsPlainText: a model name with brackets shows whole in
// the picker's title (tview read "[x]" there as a style tag and dropped it).
func TestPickerTitleIsPlainText(t *testing.T) {
	odd := "scripted/q[gold]" // "gold" is a tview colour name
	h := startWith(t, Options{Models: func() []ModelChoice {
		return append(modelChoices, ModelChoice{Ref: odd, Provider: "scripted"})
	}}, twoModels)
	h.typeText("/model " + odd)
	h.key(tcell.KeyEnter)
	h.waitFor("for the next request")
	h.typeText("/model")
	h.key(tcell.KeyEnter)
	h.waitFor("model for the next request (now " + odd + ")")
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestModelsListsConfiguredAndOffered: /models lists the configured
// models at once and what the provider's endpoint offers when it
// answers; the UI stays live while it is asked, and a failure is said.
func TestModelsListsConfiguredAndOffered(t *testing.T) {
	release := make(chan struct{})
	h := start(t, Options{
		Models: func() []ModelChoice {
			return append(modelChoices, ModelChoice{Ref: "broken/m", Provider: "broken"})
		},
		ProviderModels: func(ctx context.Context, p string) ([]string, error) {
			if p == "broken" {
				return nil, errors.New("connection refused")
			}
			select {
			case <-release:
				return []string{"zeta-model", "alpha-model"}, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}})
	h.typeText("/models")
	h.key(tcell.KeyEnter)
	h.waitFor("configured models", "● scripted/sim-model", "scripted/other-model", "broken/m", "broken: no model list (connection refused)")
	h.typeText("/cost") // the UI answers while the provider is asked
	h.key(tcell.KeyEnter)
	h.waitFor("no requests yet")
	close(release)
	h.waitFor("scripted offers", "alpha-model  zeta-model")
}

// TestEffortPicker: /effort picks a level, starting on the current one;
// it reaches the next request and the status line, and "default" goes
// back to the config's.
func TestEffortPicker(t *testing.T) {
	h := start(t, Options{}, scripted.Turn{Text: "effortful"}, scripted.Turn{Text: "PLAIN-ANSWER"})
	h.typeText("/effort")
	h.key(tcell.KeyEnter)
	h.waitFor("reasoning effort", "low", "medium", "high", "default")
	h.key(tcell.KeyUp) // the current one (default, the last) is selected first
	h.key(tcell.KeyEnter)
	s := h.waitFor("reasoning effort high for the next request")
	if !strings.Contains(lastLine(s), "effort high") {
		t.Errorf("status line: %s", lastLine(s))
	}
	h.typeText("think hard")
	h.key(tcell.KeyEnter)
	h.waitFor("effortful")
	if got := h.model.Requests()[0].Effort; got != "high" {
		t.Errorf("request effort = %q", got)
	}
	h.typeText("/effort default")
	h.key(tcell.KeyEnter)
	h.waitFor("reasoning effort default")
	h.typeText("/effort huge")
	h.key(tcell.KeyEnter)
	h.waitFor(`reasoning effort "huge": want low, medium, high`)
	h.typeText("plainly")
	h.key(tcell.KeyEnter)
	h.waitFor("PLAIN-ANSWER")
	if got := h.model.Requests()[1].Effort; got != "" {
		t.Errorf("after /effort default the request effort = %q", got)
	}
}

// TestCostPerModel: /cost sums the requests' usage per model, with cache
// hits and cost, and a total row.
func TestCostPerModel(t *testing.T) {
	h := start(t, Options{})
	h.typeText("/cost")
	h.key(tcell.KeyEnter)
	h.waitFor("no requests yet")
	for _, u := range []struct {
		model string
		u     providers.Usage
	}{
		{"deepseek/deepseek-chat", providers.Usage{PromptTokens: 1000, CacheHitTokens: 800, CompletionTokens: 50, Cost: 0.002, Currency: "USD"}},
		{"deepseek/deepseek-chat", providers.Usage{PromptTokens: 1200, CacheHitTokens: 1000, CompletionTokens: 70, Cost: 0.003, Currency: "USD"}},
		{"local/qwen3", providers.Usage{PromptTokens: 500, CompletionTokens: 20}},
	} {
		usage := u.u
		h.app.Publish(events.Event{Type: events.UsageUpdate, Usage: &usage, Model: u.model})
	}
	h.waitFor("tokens 2.7k in") // the events have been rendered
	h.typeText("/cost")
	h.key(tcell.KeyEnter)
	s := h.waitFor("cost so far", "deepseek/deepseek-chat", "local/qwen3", "total")
	var ds, local string
	for _, l := range strings.Split(s, "\n") {
		switch {
		case strings.Contains(l, "deepseek/deepseek-chat"):
			ds = l
		case strings.Contains(l, "local/qwen3"):
			local = l
		}
	}
	for _, want := range []string{"2 req", "2.2k in (1.8k cached, 81%)", "120 out", "$0.0050"} {
		if !strings.Contains(ds, want) {
			t.Errorf("deepseek row lacks %q: %q", want, ds)
		}
	}
	if !strings.Contains(local, "1 req") || !strings.Contains(local, "no price") {
		t.Errorf("local row: %q", local)
	}
}

// TestAgentsAndSkillsPickers: /agents lists the subagents with where each
// came from and puts a task for the chosen one in the composer; /skills
// does the same for commands, putting "/name " there.
func TestAgentsAndSkillsPickers(t *testing.T) {
	var ws string
	h := startWith(t, Options{}, func(rt *orchestrator.Runtime, hub *events.Hub) {
		ws = rt.Workspace
		write := func(rel, body string) {
			p := filepath.Join(ws, rel)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write(".claude/agents/reviewer.md", "---\nname: reviewer\ndescription: Reviews diffs for bugs.\n---\nYou review.\n")
		write(".claude/commands/deploy.md", "---\ndescription: Ship it to staging.\n---\nDeploy $ARGUMENTS\n")
		rt.Roles, _ = roles.Load(roles.LoadOptions{Workspace: ws})
		rt.Commands, _ = commands.Discover(commands.Options{Workspace: ws})
	})
	h.typeText("/agents")
	h.key(tcell.KeyEnter)
	h.waitFor("subagents", "reviewer", "Reviews diffs for bugs.", "agent (project)", "explore", "builtin")
	// The list is sorted by name; find reviewer's row by moving down.
	h.pickRow("reviewer")
	h.key(tcell.KeyEnter)
	h.waitComposer("Use the reviewer agent to ")
	h.key(tcell.KeyCtrlC)
	h.typeText("/skills")
	h.key(tcell.KeyEnter)
	h.waitFor("skills and commands", "deploy", "command (project) · Ship it to staging.")
	h.key(tcell.KeyEnter)
	h.waitComposer("/deploy ")
	// The row ends with the defining file, under ~ when it is in the home.
	home, _ := os.UserHomeDir()
	items := describe([]events.Command{{Name: "deploy", Source: "command (user)", Path: filepath.Join(home, ".claude", "commands", "deploy.md")}})
	if want := "~" + string(filepath.Separator) + filepath.Join(".claude", "commands", "deploy.md"); !strings.HasSuffix(items[0].label, want) {
		t.Errorf("describe = %q, want it to end with %q", items[0].label, want)
	}
}

// pickRow moves a picker's selection down to the row containing want.
func (h *harness) pickRow(want string) {
	h.t.Helper()
	for i := 0; i < 20; i++ {
		var sel string
		h.app.app.QueueUpdate(func() {
			if l, ok := h.app.app.GetFocus().(interface {
				GetCurrentItem() int
				GetItemText(int) (string, string)
			}); ok {
				sel, _ = l.GetItemText(l.GetCurrentItem())
			}
		})
		if strings.Contains(sel, want) {
			return
		}
		h.key(tcell.KeyDown)
		time.Sleep(10 * time.Millisecond)
	}
	h.t.Fatalf("no picker row holds %q:\n%s", want, h.text())
}

// TestPostureToggle: Shift-Tab goes ask → auto → yolo → ask, yolo only
// after a yes, and the status line shows the posture.
func TestPostureToggle(t *testing.T) {
	var mu sync.Mutex
	posture := "ask"
	var set []string
	h := start(t, Options{
		Posture: func() string { mu.Lock(); defer mu.Unlock(); return posture },
		SetPosture: func(p string) error {
			mu.Lock()
			defer mu.Unlock()
			posture = p
			set = append(set, p)
			return nil
		},
	})
	status := func(want string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(lastLine(h.text()), want) {
			if time.Now().After(deadline) {
				t.Fatalf("status line never showed %q: %s", want, lastLine(h.text()))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	status("ask (Shift-Tab)")
	h.key(tcell.KeyBacktab)
	h.waitFor("posture auto")
	status("auto (Shift-Tab)")
	h.key(tcell.KeyBacktab)
	h.waitFor("Switch to yolo?", "goes back to ask.") // the whole question, not cut
	h.rune('n')
	h.waitFor("Ask Reasonix")
	status("auto")
	h.key(tcell.KeyBacktab)
	h.waitFor("Switch to yolo?")
	h.rune('y')
	h.waitFor("posture yolo")
	status("yolo")
	h.key(tcell.KeyBacktab)
	h.waitFor("posture ask")
	status("ask (Shift-Tab)")
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(set, ","); got != "auto,yolo,ask" {
		t.Errorf("postures set: %s", got)
	}
}

// menuRowsShown is the menu's rows on screen: the rows between its title
// line and the composer's top border.
func (h *harness) menuShown() string {
	s := h.text()
	i := strings.Index(s, "↑↓ move")
	if i < 0 {
		return ""
	}
	return s[i:]
}

// TestCommandMenu: "/" opens the command menu, typing filters it, arrows
// move, Tab takes an item, Esc closes it and leaves the draft, Tab opens
// it again, and Enter on a command that takes no arguments runs it.
func TestCommandMenu(t *testing.T) {
	h := start(t, Options{})
	h.rune('/')
	h.waitFor("commands", "↑↓ move", "/agents", "/clear", "/goal")
	h.typeText("mo")
	h.waitFor("/model", "/models")
	if m := h.menuShown(); strings.Contains(m, "/goal") {
		t.Errorf("the menu was not filtered:\n%s", m)
	}
	h.key(tcell.KeyDown)
	h.key(tcell.KeyTab)
	h.waitComposer("/models ")
	if h.menuShown() != "" {
		h.waitGone("↑↓ move")
	}
	h.key(tcell.KeyCtrlC)
	h.typeText("/re")
	h.waitFor("/resume", "/rewind")
	h.key(tcell.KeyEscape)
	h.waitGone("↑↓ move")
	h.waitComposer("/re")
	h.key(tcell.KeyTab)
	h.waitFor("↑↓ move", "/resume")
	h.key(tcell.KeyUp) // wraps to the last item
	h.key(tcell.KeyTab)
	h.waitComposer("/rewind ")
	h.key(tcell.KeyCtrlC)
	h.typeText("/cos")
	h.waitFor("/cost")
	h.key(tcell.KeyEnter)
	h.waitFor("no requests yet")
	h.waitComposer("")
}

// waitGone waits until the screen no longer shows s.
func (h *harness) waitGone(s string) {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for strings.Contains(h.text(), s) {
		if time.Now().After(deadline) {
			h.t.Fatalf("the screen still shows %q:\n%s", s, h.text())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestPathMenu: "@" opens the file menu of its folder; taking a folder
// lists its entries next, one level at a time, and taking a file ends the
// word. Up and Down move in the menu, not through the history.
func TestPathMenu(t *testing.T) {
	h := start(t, Options{})
	h.typeText("see @../con")
	h.waitFor("../", "config/")
	h.key(tcell.KeyEnter)
	h.waitComposer("see @../config/")
	h.waitFor("config.go")
	h.typeText("config.g")
	h.waitFor("config.go")
	h.key(tcell.KeyDown)
	h.key(tcell.KeyUp)
	h.waitComposer("see @../config/config.g")
	h.key(tcell.KeyTab)
	h.waitComposer("see @../config/config.go ")
	h.waitGone("↑↓ move")
	h.key(tcell.KeyCtrlC)
	h.typeText("@zzz-nothing")
	h.key(tcell.KeyTab)
	h.waitFor("nothing matches @zzz-nothing")
}

// TestHelpListsOnlyWorkingCommands: /help names every built-in command,
// and every /name it shows is one submit handles.
func TestHelpListsOnlyWorkingCommands(t *testing.T) {
	shown := map[string]bool{}
	for _, f := range strings.FieldsFunc(helpText, func(r rune) bool { return r == ' ' || r == '\n' || r == '·' || r == '(' || r == ',' }) {
		if strings.HasPrefix(f, "/") && len(f) > 1 {
			shown[strings.TrimRight(f[1:], ")")] = true
		}
	}
	known := map[string]bool{"NAME": true} // the placeholder for custom commands and skills
	for _, b := range builtins {
		known[b.name] = true
		if !shown[b.name] {
			t.Errorf("/help does not list /%s", b.name)
		}
	}
	for name := range shown {
		if !known[name] {
			t.Errorf("/help lists /%s, which is no command", name)
		}
	}
	// Each line fits an 80-column transcript, so none wraps to the left
	// edge.
	for _, l := range strings.Split(helpText, "\n") {
		if w := tview.TaggedStringWidth(l); w > 78 {
			t.Errorf("/help line of %d columns: %q", w, l)
		}
	}
	for _, key := range []string{"Shift-Tab", "Ctrl-O", "Ctrl-R", "Esc", "Tab", "PgUp", "Ctrl-J", "Ctrl-D"} {
		if !strings.Contains(helpText, key) {
			t.Errorf("/help does not mention %s", key)
		}
	}
	// Every built-in is handled by submit: none is reported unknown.
	h := start(t, Options{})
	for _, b := range builtins {
		if b.name == "quit" || b.name == "exit" || b.name == "clear" || b.name == "plan" || b.name == "goal" {
			continue // they leave, ask, or start work
		}
		h.app.post(func() { h.app.submit("/" + b.name) })
	}
	got := make(chan string, 1)
	h.app.post(func() { got <- h.app.transcript.GetText(true) })
	if s := <-got; strings.Contains(s, "unknown command") || !strings.Contains(s, "› /mcp") {
		t.Errorf("a built-in was reported unknown, or not run:\n%s", s)
	}
}

// TestWrapHanging: a picker row wraps at the width, its continuation
// rows indented by the hang; words stay whole, CJK text breaks between
// characters (never before a closing mark), a word wider than a row is
// cut, and too narrow a row drops the indent.
func TestWrapHanging(t *testing.T) {
	for _, c := range []struct {
		s           string
		width, hang int
		want        []string
	}{
		{"short", 20, 2, []string{"short"}},
		{"● default  (the provider's reasoning_effort from the config)", 30, 2,
			[]string{"● default  (the provider's", "  reasoning_effort from the", "  config)"}},
		{"reviewer  agent · reviews code carefully", 24, 10,
			[]string{"reviewer  agent ·", "          reviews code", "          carefully"}},
		{"● 默认（配置中该提供方的推理强度，未配置则不发送）", 24, 2,
			[]string{"● 默认（配置中该提供方的", "  推理强度，未配置则不发", "  送）"}},
		{"x " + strings.Repeat("y", 30), 16, 2, []string{"x", "  yyyyyyyyyyyyyy", "  yyyyyyyyyyyyyy", "  yy"}},
		{"● one two three four five six", 12, 4, []string{"● one two", "three four", "five six"}},
	} {
		got := wrapHanging(c.s, c.width, c.hang)
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("wrapHanging(%q, %d, %d) = %q, want %q", c.s, c.width, c.hang, got, c.want)
		}
		for _, r := range got {
			if w := uniseg.StringWidth(r); w > c.width {
				t.Errorf("%q: row %q is %d wide", c.s, r, w)
			}
		}
	}
}

// TestPickerSelectionShows: the selected row of a picker and of the
// prompt search is drawn in reverse video (tview's own selected style is
// invisible on the terminal's colours), and moves with ↓.
func TestPickerSelectionShows(t *testing.T) {
	isReversed := func(h *harness, want string) bool {
		st, ok := h.styleOf(want)
		if !ok {
			t.Fatalf("no %q on the screen:\n%s", want, h.text())
		}
		_, _, attr := st.Decompose()
		return attr&tcell.AttrReverse != 0
	}
	// reversed waits a while for want to be drawn reversed (a key just
	// sent may not be drawn yet) and says whether it is.
	reversed := func(h *harness, want string) bool {
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			if isReversed(h, want) {
				return true
			}
		}
		return false
	}
	h := start(t, Options{History: &memHistory{saved: []string{"fix the parser", "write docs"}}})
	h.typeText("/effort")
	h.key(tcell.KeyEnter)
	h.waitFor("reasoning effort (sent as", "medium", "Enter choose")
	if !reversed(h, "default") || isReversed(h, "medium") {
		t.Errorf("/effort: the current level is not the one selected")
	}
	h.key(tcell.KeyUp)
	if !reversed(h, "high") || isReversed(h, "default") {
		t.Errorf("/effort: ↑ did not move the selection")
	}
	h.key(tcell.KeyEscape)
	h.waitFor("Ask Reasonix")
	h.key(tcell.KeyCtrlR)
	h.waitFor("search prompts", "write docs")
	// The newest prompt, the /effort just typed, is selected first; ↓
	// selects the next.
	if isReversed(h, "write docs") {
		t.Errorf("Ctrl-R: an older prompt is shown selected:\n%s", h.text())
	}
	h.key(tcell.KeyDown)
	if !reversed(h, "write docs") || isReversed(h, "fix the parser") {
		t.Errorf("Ctrl-R: the selected prompt does not show:\n%s", h.text())
	}
	h.key(tcell.KeyEscape)
}
