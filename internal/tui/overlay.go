package tui

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/reasonix/reasonix/events"
)

// errClosed is returned to a caller waiting on an overlay when the UI
// has gone.
var errClosed = errors.New("tui: closed before the question was answered")

// showOverlay shows body centred above the UI with keys as its last line,
// focused on body, as high as fit says body wants (see showFrame). The
// returned function removes it; calling it again does nothing. UI
// goroutine only.
func (a *App) showOverlay(title string, body, keys tview.Primitive, fit fitFunc) (closeFn func()) {
	frame := tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(body, 0, 1, true).
		AddItem(keys, 1, 0, false)
	return a.showFrame(title, frame, body, fit)
}

// fitFunc is the number of rows an overlay's content wants inside its
// border when that is width columns wide; the screen has room for most,
// so counting may stop there.
type fitFunc func(width, most int) int

// showFrame shows frame centred above the UI with focus on focus. Its
// height is asked of fit at every draw at a new size: text wrapped for a
// terminal made narrower takes more rows, wider it takes fewer, and fit
// may lay frame's own items out again for it (a header that grows). UI
// goroutine only.
func (a *App) showFrame(title string, frame *tview.Flex, focus tview.Primitive, fit fitFunc) (closeFn func()) {
	a.overlayN++
	name := fmt.Sprintf("overlay-%d", a.overlayN)
	// A title is plain text: it can hold a model's or a tool's name, whose
	// brackets tview would otherwise read as style tags and drop.
	frame.SetBorder(true).SetTitle(" "+escape(title)+" ").SetBorderPadding(0, 0, 1, 1)
	// The rows the overlay stands on are cleared from edge to edge (blank
	// boxes beside it, not transparent gaps): a wide character of the
	// transcript straddling the overlay's edge would otherwise leave half
	// of itself in its border.
	row := tview.NewFlex().
		AddItem(tview.NewBox(), 0, 1, false).
		AddItem(opaque{frame}, 0, 10, true).
		AddItem(tview.NewBox(), 0, 1, false)
	centred := &fitted{Flex: tview.NewFlex().SetDirection(tview.FlexRow), row: row, fit: fit}
	centred.AddItem(nil, 0, 1, false).
		AddItem(row, centred.height(a.screenW, a.screenH), 0, true).
		AddItem(nil, 0, 1, false)
	a.pages.AddPage(name, centred, true, true)
	a.overlays = append(a.overlays, name)
	a.hideComposer(true)
	a.app.SetFocus(focus)
	closed := false
	return func() {
		if closed {
			return
		}
		closed = true
		a.pages.RemovePage(name)
		for i, n := range a.overlays {
			if n == name {
				a.overlays = append(a.overlays[:i], a.overlays[i+1:]...)
				break
			}
		}
		a.hideComposer(len(a.overlays) > 0)
		a.app.SetFocus(a.focusTarget())
	}
}

// fitted centres an overlay's row vertically, as high as its content
// wants at the size it is drawn at, measured again when that changes:
// after a resize the overlay grows or shrinks with its wrapped text
// instead of cutting it off or leaving empty rows.
type fitted struct {
	*tview.Flex
	row *tview.Flex
	fit fitFunc
	// The size fit was last asked about and its answer: a draw at the
	// same size (every key, every streamed token) does not measure the
	// text again.
	sized      bool
	w, h, rows int
}

// height is the overlay's height on a screen of w by h (0: not drawn
// yet, 80 by 24 assumed): what fit wants, its border included, leaving a
// row above and below.
func (f *fitted) height(w, h int) int {
	if w <= 0 {
		w = 80
	}
	if h <= 0 {
		h = 24
	}
	if !f.sized || w != f.w || h != f.h {
		f.sized, f.w, f.h = true, w, h
		f.rows = f.fit(frameWidth(w)-4, max(h-5, 1))
	}
	return max(min(f.rows+3, h-2), 0)
}

// Draw sizes the overlay for the screen it is drawn on, then draws it.
func (f *fitted) Draw(screen tcell.Screen) {
	_, _, w, h := f.GetRect()
	f.ResizeItem(f.row, f.height(w, h), 0)
	f.Flex.Draw(screen)
}

// fixedRows is a fitFunc for content whose rows do not depend on the
// width (a list of one-row items).
func fixedRows(n int) fitFunc { return func(int, int) int { return n } }

// textRows is a fitFunc for markup in a word-wrapping text view, built
// for the width (see widthText): the rows tview wraps it to.
func textRows(build func(width int) string) fitFunc {
	return func(width, most int) int { return newRowCounter(width).rowsUpTo(build(width), most) }
}

// frameWidth is the width of an overlay's frame on a screen w wide: ten
// twelfths, as tview's Flex shares w out among the row's 1, 10 and 1.
func frameWidth(w int) int { return (w - w/12) * 10 / 11 }

// overlayWidth is the width inside an overlay's border and padding on
// the screen as it is now (see showFrame).
func (a *App) overlayWidth() int {
	w := a.screenW
	if w <= 0 {
		w = 80
	}
	return frameWidth(w) - 4
}

// opaque draws a Flex over whatever was below it: tview's Flex is
// transparent (its border padding and border rows are never cleared), so
// transcript characters would show through an overlay's padding.
type opaque struct{ *tview.Flex }

func (o opaque) Draw(screen tcell.Screen) {
	x, y, w, h := o.GetRect()
	// tview centres a title and cuts a long one at both ends; one wider
	// than the border starts at the left instead, so its first words
	// stay and the end gives way.
	if tview.TaggedStringWidth(o.GetTitle()) > w-2 {
		o.SetTitleAlign(tview.AlignLeft)
	} else {
		o.SetTitleAlign(tview.AlignCenter)
	}
	for j := y; j < y+h; j++ {
		for i := x; i < x+w; i++ {
			screen.SetContent(i, j, ' ', nil, tcell.StyleDefault)
		}
	}
	o.Flex.Draw(screen)
}

// hideComposer takes the composer off the screen while an overlay asks
// something (keys go to the overlay, and a draft showing below it only
// suggests otherwise), and brings it back.
func (a *App) hideComposer(hide bool) {
	if hide {
		a.body.ResizeItem(a.composerItem, 0, 0)
		return
	}
	a.resizeComposer()
}

// focusTarget is what should have focus: the top overlay, else the
// composer.
func (a *App) focusTarget() tview.Primitive {
	if len(a.overlays) == 0 {
		return a.composer
	}
	_, p := a.pages.GetFrontPage()
	return p
}

func newOverlayText(text string) *tview.TextView {
	return tview.NewTextView().SetDynamicColors(true).SetWrap(true).SetWordWrap(true).
		SetScrollable(true).SetText(text)
}

// ask shows an overlay built by show on the UI goroutine and waits for the
// answer it delivers, for ctx, or for the UI to close. It is how worker
// goroutines block on a question while the UI stays live.
func ask[T any](ctx context.Context, a *App, show func(reply func(T)) (closeFn func())) (T, error) {
	ch := make(chan T, 1)
	var closeFn func() // set and used on the UI goroutine only
	a.post(func() {
		closeFn = show(func(v T) {
			select {
			case ch <- v:
			default:
			}
			closeFn()
		})
	})
	var zero T
	select {
	case v := <-ch:
		return v, nil
	case <-ctx.Done():
		a.post(func() {
			if closeFn != nil {
				closeFn()
			}
		})
		return zero, ctx.Err()
	case <-a.done:
		return zero, errClosed
	}
}

// approvalKeys map keys to the choices of an approval request; a key
// whose choice the request does not offer does nothing (a dangerous call
// offers no standing answer).
// short is the label on an overlay too narrow for every label.
var approvalKeys = []struct {
	runes  string
	choice string
	label  string
	short  string
}{
	{"yY1", events.ChoiceAllow, "[::b]y[::-]/1 allow once", "[::b]y[::-] once"},
	{"sS2", events.ChoiceAllowSession, "[::b]s[::-]/2 this session", "[::b]s[::-] session"},
	{"aA3", events.ChoiceAllowAlways, "[::b]a[::-]/3 always", "[::b]a[::-] always"},
	{"nN4", events.ChoiceDeny, "[::b]n[::-]/4/Esc deny", "[::b]n[::-]/Esc deny"},
}

// fitLine is a one-line text view that shows its long text when it fits
// the width it is drawn at, else its short one: an overlay's keys on a
// narrow terminal lose their spelled-out digits, not their last choice.
type fitLine struct {
	*tview.TextView
	long, short string
}

func newFitLine(long, short string) *fitLine {
	return &fitLine{TextView: newOverlayText(long), long: long, short: short}
}

// set changes both texts.
func (f *fitLine) set(long, short string) {
	f.long, f.short = long, short
	f.TextView.SetText(long)
}

// Draw picks the text for the width, then draws it.
func (f *fitLine) Draw(screen tcell.Screen) {
	_, _, w, _ := f.GetInnerRect()
	text := f.long
	if tview.TaggedStringWidth(text) > w {
		text = f.short
	}
	if f.GetText(false) != text {
		f.TextView.SetText(text)
	}
	f.TextView.Draw(screen)
}

// approvalChoice is the choice a key gives for req, if any.
func approvalChoice(ev *tcell.EventKey, req *events.Approval) (string, bool) {
	if ev.Key() == tcell.KeyEscape {
		return events.ChoiceDeny, req.Offers(events.ChoiceDeny)
	}
	if ev.Key() != tcell.KeyRune {
		return "", false
	}
	for _, k := range approvalKeys {
		if strings.ContainsRune(k.runes, ev.Rune()) && req.Offers(k.choice) {
			return k.choice, true
		}
	}
	return "", false
}

// askQueue holds the approval requests and ask-tool questions waiting
// behind the one on screen. They are shown one at a time, oldest first,
// in the same place: a question that arrives while another is open (a
// project MCP server's trust question and a tool's approval, or two
// subagents' approvals) is neither stacked over the first nor lost, and
// the open one says how many wait. UI goroutine only.
type askQueue struct {
	// shown is the id on screen ("" when none); setWaiting updates its
	// count of waiting questions.
	shown      string
	setWaiting func(n int)
	waiting    []queuedAsk
}

// queuedAsk builds a question's overlay when its turn comes; it returns
// the overlay's close function and the setter of its waiting count.
type queuedAsk struct {
	id   string
	show func() (closeFn func(), setWaiting func(n int))
}

// enqueueAsk shows a question now when none is on screen, else after the
// ones before it. A repeated id is ignored.
func (a *App) enqueueAsk(q queuedAsk) {
	if _, open := a.approvals[q.id]; open {
		return
	}
	for _, w := range a.asks.waiting {
		if w.id == q.id {
			return
		}
	}
	if a.asks.shown != "" {
		a.asks.waiting = append(a.asks.waiting, q)
		a.asks.setWaiting(len(a.asks.waiting))
		return
	}
	a.showAsk(q)
}

func (a *App) showAsk(q queuedAsk) {
	closeFn, setWaiting := q.show()
	a.asks.shown, a.asks.setWaiting = q.id, setWaiting
	a.approvals[q.id] = closeFn
	setWaiting(len(a.asks.waiting))
}

// waitingNote is the line an open question adds when n more wait.
func (a *App) waitingNote(n int) string {
	if n == 0 {
		return ""
	}
	return "  [yellow]· " + fmt.Sprintf(a.tr("%d more waiting"), n) + "[-]"
}

// openApproval shows an approval request from the event stream, or
// queues it behind the question on screen; a key answers it through the
// engine. UI goroutine only.
func (a *App) openApproval(e events.Event) {
	a.enqueueAsk(queuedAsk{id: e.Approval.ID, show: func() (func(), func(int)) { return a.showApproval(e) }})
}

// showApproval puts an approval request on screen.
func (a *App) showApproval(e events.Event) (closeFn func(), setWaiting func(n int)) {
	req := e.Approval
	// The text is built for the width it is drawn at: a field's value
	// that wraps continues under the value, not under its label.
	build := func(width int) string {
		var b strings.Builder
		field := func(k, v string) {
			if strings.TrimSpace(v) != "" {
				label := fmt.Sprintf("[::b]%-8s[::-] ", a.tr(k))
				b.WriteString(label + hangWrap(escape(v), width, tview.TaggedStringWidth(label)) + "\n")
			}
		}
		if req.Dangerous {
			b.WriteString("[white:red:b] " + a.tr("DANGEROUS") + " [-:-:-] [red]" + a.tr("this answer covers this one call only") + "[-]\n")
		}
		field("tool", req.Tool)
		if req.Step != "" {
			step := req.Step
			if title := a.rs.steps[req.Step]; title != "" {
				step += ": " + title
			}
			field("step", step+" "+a.tr("(plan workers ask one at a time)"))
		}
		if e.Role != "" && e.Role != "executor" {
			field("asked by", e.Role+" "+e.Session)
		}
		if req.Command != "" {
			field("command", req.Command)
		} else {
			field("subject", req.Subject)
		}
		field("reason", oneLine(req.Reason, 400))
		field("impact", req.Impact)
		if req.Offers(events.ChoiceAllowAlways) && len(req.Rules) > 0 {
			field("always", fmt.Sprintf(a.tr("saves %s to this project's reasonix.toml"), strings.Join(req.Rules, ", ")))
		}
		for _, p := range req.Preview {
			fmt.Fprintf(&b, "\n[::b]%s %s[::-] [green]+%d[-] [red]-%d[-]\n", escape(p.Operation), escape(p.Path), p.Added, p.Removed)
			b.WriteString(diffMarkup(p.Diff))
		}
		return strings.TrimRight(b.String(), "\n")
	}
	// The overlay is 10/12 of the screen, less its border and padding.
	text := build(a.overlayWidth())
	var keys, short []string
	for _, k := range approvalKeys {
		if req.Offers(k.choice) {
			keys = append(keys, a.tr(k.label))
			if k.choice == events.ChoiceDeny {
				// First where the line may be cut: the way to say no
				// stays in view on the narrowest terminal.
				short = append([]string{a.tr(k.short)}, short...)
			} else {
				short = append(short, a.tr(k.short))
			}
		}
	}
	body := &widthText{TextView: newOverlayText(text), build: build}
	body.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		choice, ok := approvalChoice(ev, req)
		if !ok {
			return ev // arrows and page keys scroll the preview
		}
		if err := a.eng.Answer(req.ID, choice, ""); err != nil {
			a.notef("approval: %s", err.Error())
		} else if choice == events.ChoiceAllowAlways && len(req.Rules) > 0 {
			a.notef("saved %s to this project's reasonix.toml ([permissions] allow)", strings.Join(req.Rules, ", "))
		}
		a.closeApproval(req.ID)
		return nil
	})
	keyLine := newFitLine(strings.Join(keys, "  "), strings.Join(short, " "))
	// As high as the text wraps to at the width it is drawn at, again
	// after a resize: the whole command and its choices stay in view.
	return a.showOverlay(fmt.Sprintf(a.tr("approve %s?"), req.Tool), body, keyLine, textRows(build)),
		func(n int) {
			keyLine.set(strings.Join(keys, "  ")+a.waitingNote(n), strings.Join(short, " ")+a.waitingNote(n))
		}
}

// closeApproval removes the overlay of request id, answered here or
// elsewhere, or withdrawn (then it may still be waiting), and shows the
// next waiting question. UI goroutine only.
func (a *App) closeApproval(id string) {
	if closeFn, ok := a.approvals[id]; ok {
		delete(a.approvals, id)
		closeFn()
	}
	for i, w := range a.asks.waiting {
		if w.id == id {
			a.asks.waiting = append(a.asks.waiting[:i], a.asks.waiting[i+1:]...)
			break
		}
	}
	if a.asks.shown != id {
		if a.asks.shown != "" {
			a.asks.setWaiting(len(a.asks.waiting))
		}
		return
	}
	a.asks.shown, a.asks.setWaiting = "", nil
	if len(a.asks.waiting) > 0 {
		next := a.asks.waiting[0]
		a.asks.waiting = a.asks.waiting[1:]
		a.showAsk(next)
	}
}

// diffMarkup colours a unified diff.
func diffMarkup(diff string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(diff, "\n"), "\n") {
		e := escape(l)
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			b.WriteString("[::b]" + e + "[::-]\n")
		case strings.HasPrefix(l, "+"):
			b.WriteString("[green]" + e + "[-]\n")
		case strings.HasPrefix(l, "-"):
			b.WriteString("[red]" + e + "[-]\n")
		case strings.HasPrefix(l, "@@"):
			b.WriteString("[teal]" + e + "[-]\n")
		default:
			b.WriteString(e + "\n")
		}
	}
	return b.String()
}

// PlanApprover asks a person about a plan before it runs; it has the
// method set of events.PlanApprover.
type PlanApprover interface {
	Approve(ctx context.Context, p events.Plan) (events.Plan, events.PlanDecision, error)
}

// PlanApprover returns the PlanApprover that asks about plans in an
// overlay.
func (a *App) PlanApprover() PlanApprover { return planApprover{a} }

type planApprover struct{ a *App }

type planAnswer struct {
	plan events.Plan
	d    events.PlanDecision
}

// Approve shows the plan with Approve / Edit / Reject and blocks until the
// person decides or ctx ends.
func (p planApprover) Approve(ctx context.Context, plan events.Plan) (events.Plan, events.PlanDecision, error) {
	ans, err := ask(ctx, p.a, func(reply func(planAnswer)) func() {
		return p.a.showPlan(ctx, plan, reply)
	})
	if err != nil {
		return plan, events.PlanReject, err
	}
	return ans.plan, ans.d, nil
}

// showPlan renders a plan for approval. UI goroutine only.
func (a *App) showPlan(ctx context.Context, plan events.Plan, reply func(planAnswer)) func() {
	text := strings.TrimRight(escape(plan.Markdown()), "\n")
	body := newOverlayText(text)
	keyText := a.tr("[::b]a[::-] approve  [::b]e[::-] edit  [::b]r[::-]/Esc reject")
	keys := newOverlayText(keyText)
	var draft []byte // the last edit that did not validate, to fix in the editor
	body.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		if ev.Key() == tcell.KeyEscape {
			reply(planAnswer{plan, events.PlanReject})
			return nil
		}
		if ev.Key() != tcell.KeyRune {
			return ev
		}
		switch ev.Rune() {
		case 'a', 'A', 'y':
			reply(planAnswer{plan, events.PlanApprove})
		case 'r', 'R', 'n':
			reply(planAnswer{plan, events.PlanReject})
		case 'e', 'E':
			if draft == nil {
				draft = plan.JSON()
			}
			edited, saved, err := a.editPlan(ctx, draft)
			switch {
			case ctx.Err() != nil:
				return nil // the waiting caller has gone; ask closes the overlay
			case err != nil:
				draft = saved
				keys.SetText("[red]" + escape(oneLine(err.Error(), 200)) + "[-]  " + keyText)
			case reflect.DeepEqual(edited, plan):
				draft = nil
				keys.SetText("[yellow]" + a.tr("the plan was not changed") + "[-]  " + keyText)
			default:
				reply(planAnswer{edited, events.PlanEdit})
			}
		default:
			return ev
		}
		return nil
	})
	return a.showOverlay(a.tr("run this plan?"), body, keys, textRows(func(int) string { return text }))
}

// editPlan runs the editor with the UI suspended, so the editor owns the
// terminal until it exits.
func (a *App) editPlan(ctx context.Context, draft []byte) (events.Plan, []byte, error) {
	edit := a.opts.EditPlan
	if edit == nil {
		return events.Plan{}, draft, errors.New(a.tr("no plan editor is configured"))
	}
	var (
		p     events.Plan
		saved = draft
		err   = errors.New(a.tr("could not hand the terminal to the editor"))
	)
	a.app.Suspend(func() { p, saved, err = edit(ctx, draft) })
	return p, saved, err
}

// pickItem is one item of a picker and the value it stands for.
type pickItem struct {
	label string
	value string
	// hang is the column a long label's continuation rows start at
	// (0: after the mark or spaces it starts with).
	hang int
}

// pick shows items in a list overlay: arrows move, Enter chooses, Esc
// closes. UI goroutine only.
func (a *App) pick(title string, items []pickItem, chosen func(value string)) {
	a.pickAt(title, items, 0, chosen)
}

// pickAt is pick with item sel selected first (the current choice).
func (a *App) pickAt(title string, items []pickItem, sel int, chosen func(value string)) {
	list := newPickList(items, sel)
	var closeFn func()
	list.chosen = func(i int) {
		closeFn()
		chosen(items[i].value)
	}
	list.done = func() { closeFn() }
	frame := tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(list, 0, 1, true).
		AddItem(newOverlayText(a.tr("[::b]↑/↓[::-] move  [::b]Enter[::-] choose  [::b]Esc[::-] close")), 1, 0, false)
	// As many rows as the items take wrapped at the overlay's width, up
	// to 15 (then the list scrolls), again after a resize.
	closeFn = a.showFrame(title, frame, list, func(width, _ int) int { return pickRows(items, width, 15) + 1 })
}

// confirm asks a yes/no question in an overlay and runs yes on y.
func (a *App) confirm(question string, yes func()) {
	body := newOverlayText(escape(question))
	var closeFn func()
	body.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		switch {
		case ev.Key() == tcell.KeyRune && (ev.Rune() == 'y' || ev.Rune() == 'Y'):
			closeFn()
			yes()
		case ev.Key() == tcell.KeyEscape, ev.Key() == tcell.KeyRune && (ev.Rune() == 'n' || ev.Rune() == 'N'):
			closeFn()
		}
		return nil
	})
	closeFn = a.showOverlay(a.tr("confirm"), body, newOverlayText(a.tr("[::b]y[::-] yes  [::b]n[::-]/Esc no")),
		textRows(func(int) string { return escape(question) }))
}

// questionAnswerer is the engine command that answers the ask tool; an
// engine without it never publishes questions.
type questionAnswerer interface {
	AnswerQuestion(id, answer string) error
}

// openQuestion shows the ask tool's question with its choices and a line
// to answer on: a choice's number picks it, anything else is the answer;
// Esc tells the model to proceed on a stated assumption.
func (a *App) openQuestion(e events.Event) {
	qa, ok := a.eng.(questionAnswerer)
	if !ok {
		return
	}
	a.enqueueAsk(queuedAsk{id: e.Question.ID, show: func() (func(), func(int)) { return a.showQuestion(e, qa) }})
}

// showQuestion puts the ask tool's question on screen, under who asks
// when it is not the conversation: a plan step's worker, the planner.
func (a *App) showQuestion(e events.Event, qa questionAnswerer) (closeFn func(), setWaiting func(n int)) {
	q := e.Question
	// Built for the width it is drawn at: a long choice continues under
	// its text, not under its number.
	build := func(width int) string {
		var b strings.Builder
		switch {
		case e.Step != "":
			fmt.Fprintf(&b, "[::d]"+a.tr("step %s asks:")+"[::-]\n", escape(e.Step))
		case e.Role != "" && e.Role != "executor":
			fmt.Fprintf(&b, "[::d]"+a.tr("the %s asks:")+"[::-]\n", escape(e.Role))
		}
		b.WriteString(escape(q.Text) + "\n")
		for i, c := range q.Choices {
			num := fmt.Sprintf("  [::b]%d[::-] ", i+1)
			b.WriteString(num + hangWrap(escape(c), width, tview.TaggedStringWidth(num)) + "\n")
		}
		return strings.TrimRight(b.String(), "\n")
	}
	text := build(a.overlayWidth())
	body := &widthText{TextView: newOverlayText(text), build: build}
	input := tview.NewInputField().SetLabel(a.tr("answer: "))
	answer := func(s string) {
		if err := qa.AnswerQuestion(q.ID, s); err != nil {
			a.notef("question: %s", err.Error())
		}
		a.closeApproval(q.ID)
	}
	input.SetDoneFunc(func(k tcell.Key) {
		switch k {
		case tcell.KeyEnter:
			s := strings.TrimSpace(input.GetText())
			for i, c := range q.Choices {
				if s == fmt.Sprint(i+1) {
					s = c
				}
			}
			if s != "" {
				answer(s)
			}
		case tcell.KeyEscape:
			answer(events.QuestionSkipped)
		}
	})
	hint := "[gray]" + a.tr("Enter answers (a number picks a choice) · Esc skips") + "[-]"
	hintLine := newOverlayText(hint)
	frame := tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(body, 0, 1, false).
		AddItem(input, 1, 0, true).
		AddItem(hintLine, 1, 0, false)
	// The question and its choices as they wrap at the width they are
	// drawn at, the answer line and the hint.
	fit := textRows(build)
	return a.showFrame(a.tr("question"), frame, input, func(width, most int) int { return fit(width, most) + 2 }),
		func(n int) { hintLine.SetText(hint + a.waitingNote(n)) }
}

// hangWrap wraps markup s to width columns, the first line starting
// after a label of hang columns and the others indented by hang; width
// 0 (unknown) or too narrow leaves s to the view's own wrapping.
func hangWrap(s string, width, hang int) string {
	if width-hang < 10 || tview.TaggedStringWidth(s) <= width-hang {
		return s
	}
	lines := tview.WordWrap(s, width-hang)
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	return strings.Join(lines, "\n"+strings.Repeat(" ", hang))
}

// widthText is a text view whose text is built for the width it is drawn
// at, again when that width changes (a resize).
type widthText struct {
	*tview.TextView
	build func(width int) string
	drawn int
}

// Draw rebuilds the text for a new width, then draws it.
func (w *widthText) Draw(screen tcell.Screen) {
	if _, _, width, _ := w.GetInnerRect(); width != w.drawn {
		w.drawn = width
		row, col := w.GetScrollOffset()
		w.SetText(w.build(width))
		w.ScrollTo(row, col)
	}
	w.TextView.Draw(screen)
}

// rowCounter measures how many rows markup takes in a word-wrapping
// TextView at a width, with tview's own line breaking (a scratch view
// that is never drawn), so a layout computed here matches the screen.
type rowCounter struct {
	tv    *tview.TextView
	width int
}

func newRowCounter(width int) rowCounter {
	return rowCounter{width: width, tv: tview.NewTextView().SetDynamicColors(true).SetRegions(true).
		SetWrap(true).SetWordWrap(true).SetSize(1, width)}
}

// rows is the number of rows markup takes; an empty line takes one.
func (c rowCounter) rows(markup string) int { return c.rowsUpTo(markup, math.MaxInt) }

// rowsUpTo is rows, but stops counting once there are at least most
// (then it may return more): a long text is not measured to its end
// for a screen that shows its start.
func (c rowCounter) rowsUpTo(markup string, most int) int {
	n := 0
	for n < most {
		line, rest, more := strings.Cut(markup, "\n")
		// No character is wider than its UTF-8 bytes but a tab, so a
		// line of no more bytes than the width fits without being parsed.
		if len(line) <= c.width && !strings.Contains(line, "\t") {
			n++
		} else {
			c.tv.SetText(line)
			n += max(c.tv.GetWrappedLineCount(), 1)
		}
		if !more {
			return n
		}
		markup = rest
	}
	return n
}
