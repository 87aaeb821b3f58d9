package tui

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"

	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/orchestrator"
)

// errClosed is returned to a caller waiting on an overlay when the UI
// has gone.
var errClosed = errors.New("tui: closed before the question was answered")

// showOverlay shows body centred above the UI with keys as its last line,
// focused on body. The returned function removes it; calling it again does
// nothing. UI goroutine only.
func (a *App) showOverlay(title string, body *tview.TextView, keys *tview.TextView, lines int) (closeFn func()) {
	a.overlayN++
	name := fmt.Sprintf("overlay-%d", a.overlayN)
	frame := tview.NewFlex().SetDirection(tview.FlexRow).
		AddItem(body, 0, 1, true).
		AddItem(keys, 1, 0, false)
	frame.SetBorder(true).SetTitle(" "+title+" ").SetBorderPadding(0, 0, 1, 1)
	h := a.screenH
	if h <= 0 {
		h = 24
	}
	height := min(lines+3, h-2)
	centred := tview.NewFlex().
		AddItem(nil, 0, 1, false).
		AddItem(tview.NewFlex().SetDirection(tview.FlexRow).
			AddItem(nil, 0, 1, false).
			AddItem(frame, height, 0, true).
			AddItem(nil, 0, 1, false), 0, 10, true).
		AddItem(nil, 0, 1, false)
	a.pages.AddPage(name, centred, true, true)
	a.overlays = append(a.overlays, name)
	a.app.SetFocus(body)
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
		a.app.SetFocus(a.focusTarget())
	}
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

// Approve implements permission.Approver: it shows the request in an
// overlay and blocks the calling goroutine until the person answers or
// ctx ends.
func (a *App) Approve(ctx context.Context, req permission.Request) (permission.Answer, error) {
	return ask(ctx, a, func(reply func(permission.Answer)) func() {
		return a.showApproval(req, reply)
	})
}

// approvalKeys maps keys to answers; always-allow is left out for a
// dangerous request because its answer only ever covers one call.
func approvalKey(ev *tcell.EventKey, dangerous bool) (permission.Answer, bool) {
	if ev.Key() == tcell.KeyEscape {
		return permission.DenyAnswer, true
	}
	if ev.Key() != tcell.KeyRune {
		return "", false
	}
	switch ev.Rune() {
	case 'y', 'Y', '1':
		return permission.AllowOnce, true
	case 's', 'S', '2':
		return permission.AllowSession, true
	case 'a', 'A', '3':
		if !dangerous {
			return permission.AllowAlways, true
		}
	case 'n', 'N', '4':
		return permission.DenyAnswer, true
	}
	return "", false
}

// showApproval renders a permission request. UI goroutine only.
func (a *App) showApproval(req permission.Request, reply func(permission.Answer)) func() {
	var b strings.Builder
	field := func(k, v string) {
		if strings.TrimSpace(v) != "" {
			fmt.Fprintf(&b, "[::b]%-8s[::-] %s\n", k, tview.Escape(v))
		}
	}
	if req.Dangerous {
		b.WriteString("[white:red:b] DANGEROUS [-:-:-] [red]this answer covers this one call only[-]\n")
	}
	field("tool", req.Tool)
	if req.Role != "" && req.Role != "executor" {
		field("asked by", req.Role+" "+req.Session)
	}
	if req.Command != "" {
		field("command", req.Command)
	} else {
		field("subject", req.Subject)
	}
	field("reason", oneLine(req.Reason, 400))
	field("impact", req.Impact)
	if !req.Dangerous && len(req.Rules) > 0 {
		field("always", "saves "+strings.Join(req.Rules, ", "))
	}
	for _, p := range req.Preview {
		fmt.Fprintf(&b, "\n[::b]%s %s[::-] [green]+%d[-] [red]-%d[-]\n", tview.Escape(p.Operation), tview.Escape(p.Path), p.Added, p.Removed)
		b.WriteString(diffMarkup(p.Diff))
	}
	text := strings.TrimRight(b.String(), "\n")
	keys := "[::b]y[::-]/1 allow once  [::b]s[::-]/2 this session  "
	if !req.Dangerous {
		keys += "[::b]a[::-]/3 always  "
	}
	keys += "[::b]n[::-]/4/Esc deny"
	body := newOverlayText(text)
	body.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		if ans, ok := approvalKey(ev, req.Dangerous); ok {
			reply(ans)
			return nil
		}
		return ev // arrows and page keys scroll the preview
	})
	return a.showOverlay("approve "+req.Tool+"?", body, newOverlayText(keys), strings.Count(text, "\n")+1)
}

// diffMarkup colours a unified diff.
func diffMarkup(diff string) string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimRight(diff, "\n"), "\n") {
		e := tview.Escape(l)
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

// PlanApprover returns the orchestrator.PlanApprover that asks about plans
// in an overlay.
func (a *App) PlanApprover() orchestrator.PlanApprover { return planApprover{a} }

type planApprover struct{ a *App }

type planAnswer struct {
	plan orchestrator.Plan
	d    orchestrator.PlanDecision
}

// Approve shows the plan with Approve / Edit / Reject and blocks until the
// person decides or ctx ends.
func (p planApprover) Approve(ctx context.Context, plan orchestrator.Plan) (orchestrator.Plan, orchestrator.PlanDecision, error) {
	ans, err := ask(ctx, p.a, func(reply func(planAnswer)) func() {
		return p.a.showPlan(ctx, plan, reply)
	})
	if err != nil {
		return plan, orchestrator.PlanReject, err
	}
	return ans.plan, ans.d, nil
}

// showPlan renders a plan for approval. UI goroutine only.
func (a *App) showPlan(ctx context.Context, plan orchestrator.Plan, reply func(planAnswer)) func() {
	text := strings.TrimRight(tview.Escape(plan.Markdown()), "\n")
	body := newOverlayText(text)
	const keyText = "[::b]a[::-] approve  [::b]e[::-] edit  [::b]r[::-]/Esc reject"
	keys := newOverlayText(keyText)
	var draft []byte // the last edit that did not validate, to fix in the editor
	body.SetInputCapture(func(ev *tcell.EventKey) *tcell.EventKey {
		if ev.Key() == tcell.KeyEscape {
			reply(planAnswer{plan, orchestrator.PlanReject})
			return nil
		}
		if ev.Key() != tcell.KeyRune {
			return ev
		}
		switch ev.Rune() {
		case 'a', 'A', 'y':
			reply(planAnswer{plan, orchestrator.PlanApprove})
		case 'r', 'R', 'n':
			reply(planAnswer{plan, orchestrator.PlanReject})
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
				keys.SetText("[red]" + tview.Escape(oneLine(err.Error(), 200)) + "[-]  " + keyText)
			case reflect.DeepEqual(edited, plan):
				draft = nil
				keys.SetText("[yellow]the plan was not changed[-]  " + keyText)
			default:
				reply(planAnswer{edited, orchestrator.PlanEdit})
			}
		default:
			return ev
		}
		return nil
	})
	return a.showOverlay("run this plan?", body, keys, strings.Count(text, "\n")+1)
}

// editPlan runs the editor with the UI suspended, so the editor owns the
// terminal until it exits.
func (a *App) editPlan(ctx context.Context, draft []byte) (orchestrator.Plan, []byte, error) {
	edit := a.opts.EditPlan
	if edit == nil {
		edit = func(ctx context.Context, draft []byte) (orchestrator.Plan, []byte, error) {
			return orchestrator.EditPlan(ctx, draft, orchestrator.PlanEditor{
				Command: orchestrator.EditorCommand(os.Getenv),
				Stdin:   os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr,
			})
		}
	}
	var (
		p     orchestrator.Plan
		saved = draft
		err   = errors.New("could not hand the terminal to the editor")
	)
	a.app.Suspend(func() { p, saved, err = edit(ctx, draft) })
	return p, saved, err
}
