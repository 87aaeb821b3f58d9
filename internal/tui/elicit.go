package tui

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/reasonix/reasonix/events"
)

// elicitationAnswerer is the engine command that answers an MCP server's
// request for input; an engine without it never publishes one.
type elicitationAnswerer interface {
	AnswerElicitation(id string, a events.ElicitAnswer) error
}

// openElicitation shows an MCP server's request for input, or queues it
// behind the question on screen: a form, or an address to open. UI
// goroutine only.
func (a *App) openElicitation(e events.Event) {
	ea, ok := a.eng.(elicitationAnswerer)
	if !ok {
		return
	}
	a.enqueueAsk(queuedAsk{id: e.Elicitation.ID, show: func() (func(), func(int)) {
		if e.Elicitation.Mode == events.ElicitURL {
			return a.showOpenURL(e.Elicitation, ea)
		}
		return a.showForm(e.Elicitation, ea)
	}})
}

// formInput is one field of the form on screen: the items that show it
// and how its value is read back.
type formInput struct {
	field events.ElicitField
	// first is the index of its first form item, items their number.
	first, items int
	// value reads the value: ok is false when the field is left empty,
	// problem is set when what was typed is not of the field's type.
	value func() (v any, ok bool, problem string)
}

// elicitHeader is the text above a request for input: who asks, what
// for, and (for a form) that secrets do not belong in it.
func (a *App) elicitHeader(el *events.Elicitation, width int) string {
	var b strings.Builder
	who := fmt.Sprintf(a.tr("MCP server %s asks:"), "[::b]"+escape(el.Server)+"[::-]")
	b.WriteString(who + " " + hangWrap(escape(strings.TrimSpace(el.Message)), width, tview.TaggedStringWidth(who)+1) + "\n")
	if el.Mode == events.ElicitForm {
		b.WriteString("[yellow]" + hangWrap(a.tr("Do not enter passwords, API keys or other secrets: servers may not ask for them in a form."), width, 0) + "[-]\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// showForm puts a form on screen: Tab moves between fields, Enter
// submits, Esc cancels; Submit, Decline and Cancel are buttons too. The
// values are checked before they are sent; a problem is shown under the
// form and its field takes the focus. UI goroutine only.
func (a *App) showForm(el *events.Elicitation, ea elicitationAnswerer) (closeFn func(), setWaiting func(n int)) {
	form := tview.NewForm().SetItemPadding(0)
	form.SetBorderPadding(0, 0, 0, 0)
	var inputs []formInput
	for _, f := range el.Fields {
		inputs = append(inputs, a.addField(form, f))
	}
	hint := newOverlayText("")
	problem := ""
	keys := "[gray]" + a.tr("Tab next field · ↓ opens a list · Space ticks · Enter submits · Esc cancels") + "[-]"
	short := "[gray]" + a.tr("Tab next field · Enter submits · Esc cancels") + "[-]"
	keyLine := newFitLine(keys, short)
	showHint := func(f events.ElicitField) {
		if problem != "" {
			return
		}
		parts := []string{}
		if d := strings.TrimSpace(f.Description); d != "" {
			parts = append(parts, escape(oneLine(d, 300)))
		}
		if h := f.Hint(); h != "" {
			parts = append(parts, escape(h))
		}
		hint.SetText("[gray]" + strings.Join(parts, " · ") + "[-]")
	}
	setProblem := func(text string) {
		problem = text
		hint.SetText("[red]" + escape(text) + "[-]")
	}
	for _, in := range inputs {
		f := in.field
		for i := in.first; i < in.first+in.items; i++ {
			if box, ok := form.GetFormItem(i).(interface {
				SetFocusFunc(func()) *tview.Box
			}); ok {
				box.SetFocusFunc(func() { showHint(f) })
			}
		}
	}
	if el.Error != "" {
		setProblem(fmt.Sprintf(a.tr("the last answer was refused: %s"), el.Error))
	}
	answer := func(ans events.ElicitAnswer) {
		if err := ea.AnswerElicitation(el.ID, ans); err != nil {
			setProblem(err.Error())
			return
		}
		a.closeApproval(el.ID)
	}
	submit := func() {
		content := map[string]any{}
		var bad []string
		firstBad := -1
		for _, in := range inputs {
			v, ok, p := in.value()
			if p != "" {
				bad = append(bad, in.field.Label()+": "+p)
				if firstBad < 0 {
					firstBad = in.first
				}
				continue
			}
			if ok {
				content[in.field.Name] = v
			}
		}
		if len(bad) == 0 {
			checked, err := el.Check(content)
			var ee *events.ElicitError
			if errors.As(err, &ee) {
				for _, p := range ee.Problems {
					label := p.Field
					for _, in := range inputs {
						if in.field.Name == p.Field {
							label = in.field.Label()
							if firstBad < 0 {
								firstBad = in.first
							}
						}
					}
					bad = append(bad, label+": "+p.Problem)
				}
			}
			content = checked
		}
		if len(bad) > 0 {
			setProblem(strings.Join(bad, "; "))
			if firstBad >= 0 {
				form.SetFocus(firstBad)
				a.app.SetFocus(form)
			}
			return
		}
		answer(events.ElicitAnswer{Action: events.ElicitAccept, Content: content})
	}
	form.AddButton(a.tr("Submit"), submit)
	form.AddButton(a.tr("Decline"), func() { answer(events.ElicitAnswer{Action: events.ElicitDecline}) })
	form.AddButton(a.tr("Cancel"), func() { answer(events.ElicitAnswer{Action: events.ElicitCancel}) })
	form.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		item, button := form.GetFocusedItemIndex()
		if item >= 0 {
			if d, ok := form.GetFormItem(item).(*tview.DropDown); ok && d.IsOpen() {
				return ev // the open list takes Enter and Esc
			}
		}
		switch ev.Key() {
		case tcell.KeyEnter:
			if button >= 0 {
				return ev
			}
			submit()
			return nil
		case tcell.KeyEscape:
			answer(events.ElicitAnswer{Action: events.ElicitCancel})
			return nil
		}
		return ev
	})
	head := &widthText{TextView: newOverlayText(a.elicitHeader(el, a.overlayWidth())), build: func(w int) string { return a.elicitHeader(el, w) }}
	rows := form.GetFormItemCount() + 2 // the items, a gap and the buttons
	frame := tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(head, 1, 0, false).
		AddItem(form, 0, 1, true).
		AddItem(hint, 2, 0, false).
		AddItem(keyLine, 1, 0, false)
	// The header takes the rows its text wraps to at the width the form
	// is drawn at (up to 8, leaving the form room), again after a resize:
	// wrapped to more lines on a narrower terminal, it grows.
	fit := func(width, _ int) int {
		n := min(newRowCounter(width).rows(a.elicitHeader(el, width)), 8)
		frame.ResizeItem(head, n, 0)
		return n + rows + 3
	}
	if len(inputs) > 0 {
		showHint(inputs[0].field)
	}
	return a.showFrame(fmt.Sprintf(a.tr("input for MCP server %s"), el.Server), frame, form, fit),
		func(n int) { keyLine.set(keys+a.waitingNote(n), short+a.waitingNote(n)) }
}

// addField adds the items of one field to form: a drop-down for a pick,
// a checkbox per choice for a multi-select, a checkbox for a boolean, a
// line to type on for the rest, each starting with the server's default.
func (a *App) addField(form *tview.Form, f events.ElicitField) formInput {
	label := escape(f.Label())
	if f.Required {
		label += "*"
	}
	label += " "
	in := formInput{field: f, first: form.GetFormItemCount()}
	switch {
	case f.Multiple():
		var boxes []*tview.Checkbox
		picked := map[string]bool{}
		if list, ok := f.Default.([]any); ok {
			for _, v := range list {
				if s, ok := v.(string); ok {
					picked[s] = true
				}
			}
		}
		for i, o := range f.Options {
			l := ""
			if i == 0 {
				l = label
			}
			box := tview.NewCheckbox().SetLabel(l).SetChecked(picked[o.Value]).
				SetCheckedString(escape("[x] " + o.Label())).SetUncheckedString(escape("[ ] " + o.Label()))
			boxes = append(boxes, box)
			form.AddFormItem(box)
		}
		in.value = func() (any, bool, string) {
			var vs []string
			for i, b := range boxes {
				if b.IsChecked() {
					vs = append(vs, f.Options[i].Value)
				}
			}
			return vs, len(vs) > 0, ""
		}
	case len(f.Options) > 0:
		var labels []string
		offset := 0
		if !f.Required {
			labels = append(labels, a.tr("(none)"))
			offset = 1
		}
		sel := 0
		for i, o := range f.Options {
			labels = append(labels, escape(o.Label()))
			if d, ok := f.Default.(string); ok && d == o.Value {
				sel = i + offset
			}
		}
		dd := tview.NewDropDown().SetLabel(label).SetOptions(labels, nil).SetCurrentOption(sel)
		form.AddFormItem(dd)
		in.value = func() (any, bool, string) {
			i, _ := dd.GetCurrentOption()
			if i < offset {
				return nil, false, ""
			}
			return f.Options[i-offset].Value, true, ""
		}
	case f.Type == "boolean":
		def, _ := f.Default.(bool)
		box := tview.NewCheckbox().SetLabel(label).SetChecked(def).SetCheckedString(escape("[x]")).SetUncheckedString(escape("[ ]"))
		form.AddFormItem(box)
		in.value = func() (any, bool, string) { return box.IsChecked(), true, "" }
	default:
		field := tview.NewInputField().SetLabel(label).SetText(defaultText(f.Default))
		switch {
		case f.Format == "date":
			field.SetPlaceholder("YYYY-MM-DD")
		case f.Format == "date-time":
			field.SetPlaceholder("YYYY-MM-DDThh:mm:ssZ")
		case f.Format == "email":
			field.SetPlaceholder("name@example.com")
		case f.Format == "uri":
			field.SetPlaceholder("https://")
		}
		form.AddFormItem(field)
		number := f.Type == "number" || f.Type == "integer"
		in.value = func() (any, bool, string) {
			s := strings.TrimSpace(field.GetText())
			if s == "" {
				return nil, false, ""
			}
			if !number {
				return s, true, ""
			}
			n, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, false, a.tr("must be a number")
			}
			return n, true, ""
		}
	}
	in.items = form.GetFormItemCount() - in.first
	return in
}

// defaultText is a default as a form's line shows it.
func defaultText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// showOpenURL asks whether to open a server's address in the browser:
// the whole address is shown with its host picked out, and a warning
// when the host is spelled to look like another; nothing is opened
// unless the person presses o. UI goroutine only.
func (a *App) showOpenURL(el *events.Elicitation, ea elicitationAnswerer) (closeFn func(), setWaiting func(n int)) {
	build := func(width int) string {
		var b strings.Builder
		b.WriteString(a.elicitHeader(el, width) + "\n\n")
		b.WriteString(a.tr("It asks you to open this address in your browser:") + "\n")
		b.WriteString("  [::u]" + escape(el.URL) + "[::-]\n")
		host := ""
		if u, err := url.Parse(el.URL); err == nil {
			host = u.Hostname()
		}
		label := a.tr("site") + " "
		b.WriteString("  " + label + "[::b]" + escape(host) + "[::-]\n")
		if w := a.hostWarning(el.URL, host); w != "" {
			b.WriteString("[red]" + escape(w) + "[-]\n")
		}
		b.WriteString("[gray]" + a.tr("What you enter there goes to that site, not through Reasonix.") + "[-]")
		return b.String()
	}
	text := build(a.overlayWidth())
	body := &widthText{TextView: newOverlayText(text), build: build}
	answer := func(action string) {
		if err := ea.AnswerElicitation(el.ID, events.ElicitAnswer{Action: action}); err != nil {
			a.notef("request for input: %s", err.Error())
		}
		a.closeApproval(el.ID)
		if action != events.ElicitAccept {
			return
		}
		if a.opts.OpenURL == nil {
			a.notef("open %s in your browser", el.URL)
			return
		}
		a.notef("opening %s in the browser (if it does not open, visit it yourself)", el.URL)
		a.opts.OpenURL(el.URL)
	}
	body.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		switch {
		case ev.Key() == tcell.KeyEscape:
			answer(events.ElicitCancel)
		case ev.Key() == tcell.KeyRune && (ev.Rune() == 'o' || ev.Rune() == 'O'):
			answer(events.ElicitAccept)
		case ev.Key() == tcell.KeyRune && (ev.Rune() == 'd' || ev.Rune() == 'D' || ev.Rune() == 'n' || ev.Rune() == 'N'):
			answer(events.ElicitDecline)
		default:
			return ev
		}
		return nil
	})
	keys := a.tr("[::b]o[::-] open in the browser  [::b]d[::-] decline  [::b]Esc[::-] cancel")
	keyLine := newOverlayText(keys)
	// As high as the text wraps to at the width it is drawn at, again
	// after a resize.
	return a.showOverlay(fmt.Sprintf(a.tr("input for MCP server %s"), el.Server), body, keyLine, textRows(build)),
		func(n int) { keyLine.SetText(keys + a.waitingNote(n)) }
}

// hostWarning warns about an address whose host may not be what it
// looks like (punycode or letters outside ASCII, a bare IP address) or
// whose connection is not encrypted.
func (a *App) hostWarning(raw, host string) string {
	var w []string
	lower := strings.ToLower(host)
	if strings.HasPrefix(lower, "xn--") || strings.Contains(lower, ".xn--") || strings.IndexFunc(host, func(r rune) bool { return r > unicode.MaxASCII }) >= 0 {
		w = append(w, a.tr("the site's name uses letters that can imitate another site's"))
	}
	if strings.HasPrefix(strings.ToLower(raw), "http:") {
		w = append(w, a.tr("the address is not encrypted (http)"))
	}
	if len(w) == 0 {
		return ""
	}
	return a.tr("Careful: ") + strings.Join(w, "; ")
}
