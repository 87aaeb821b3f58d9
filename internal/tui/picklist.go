package tui

import (
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
	"github.com/rivo/uniseg"

	"github.com/reasonix/reasonix/internal/text"
)

// pickList is a picker's list. Unlike tview's List, which cuts a long
// item at the edge, it wraps an item over as many rows as it needs, each
// continuation row starting under the item's text (after its mark or
// number, or in its description column: pickItem.hang), and it wraps
// again for the width it is drawn at, so a resize reflows it. The
// selected item is drawn in reverse video, every row of it.
type pickList struct {
	*tview.Box
	items []pickItem
	cur   int
	// top is the first item shown.
	top int
	// chosen runs on Enter, Space or a click; done on Esc.
	chosen func(i int)
	done   func()
	// rows caches each item's rows for width.
	rows  [][]string
	width int
}

func newPickList(items []pickItem, sel int) *pickList {
	l := &pickList{Box: tview.NewBox(), items: items}
	if sel > 0 && sel < len(items) {
		l.cur = sel
	}
	return l
}

// GetCurrentItem is the selected item's index.
func (l *pickList) GetCurrentItem() int { return l.cur }

// GetItemText is item i's label (tview.List's accessor, for tests).
func (l *pickList) GetItemText(i int) (string, string) {
	if i < 0 || i >= len(l.items) {
		return "", ""
	}
	return l.items[i].label, ""
}

// hangOf is the column item it's continuation rows start at: its own, or
// the width of the mark it starts with ("● ", "  ").
func hangOf(it pickItem) int {
	if it.hang > 0 {
		return it.hang
	}
	return uniseg.StringWidth(it.label) - uniseg.StringWidth(strings.TrimLeft(it.label, " ●"))
}

// layout wraps every item for width.
func (l *pickList) layout(width int) {
	if width == l.width && len(l.rows) == len(l.items) {
		return
	}
	l.width = width
	l.rows = make([][]string, len(l.items))
	for i, it := range l.items {
		l.rows[i] = wrapHanging(it.label, width, hangOf(it))
	}
}

// pickRows is how many rows items take at width, at most limit.
func pickRows(items []pickItem, width, limit int) int {
	n := 0
	for _, it := range items {
		n += len(wrapHanging(it.label, width, hangOf(it)))
		if n >= limit {
			return limit
		}
	}
	return n
}

// Draw draws the items from top, moving top so the selected item is
// shown whole (as much of it as fits).
func (l *pickList) Draw(screen tcell.Screen) {
	l.DrawForSubclass(screen, l)
	x, y, w, h := l.GetInnerRect()
	if w <= 0 || h <= 0 || len(l.items) == 0 {
		return
	}
	l.layout(w)
	l.top = min(l.top, l.cur)
	for l.top < l.cur {
		n := 0
		for i := l.top; i <= l.cur; i++ {
			n += len(l.rows[i])
		}
		if n <= h {
			break
		}
		l.top++
	}
	row := 0
	for i := l.top; i < len(l.items) && row < h; i++ {
		st := tcell.StyleDefault
		if i == l.cur {
			st = st.Reverse(true)
		}
		for _, r := range l.rows[i] {
			if row >= h {
				break
			}
			fill(screen, x, y+row, w, st, ' ')
			put(screen, x, y+row, w, r, st)
			row++
		}
	}
}

// InputHandler moves the selection (↑/↓, Tab, Home/End, PgUp/PgDn),
// chooses (Enter, Space) and closes (Esc).
func (l *pickList) InputHandler() func(event *tcell.EventKey, setFocus func(p tview.Primitive)) {
	return l.WrapInputHandler(func(ev *tcell.EventKey, _ func(p tview.Primitive)) {
		n := len(l.items)
		if ev.Key() == tcell.KeyEscape {
			if l.done != nil {
				l.done()
			}
			return
		}
		if n == 0 {
			return
		}
		_, _, _, h := l.GetInnerRect()
		switch ev.Key() {
		case tcell.KeyDown, tcell.KeyTab:
			l.cur = (l.cur + 1) % n
		case tcell.KeyUp, tcell.KeyBacktab:
			l.cur = (l.cur - 1 + n) % n
		case tcell.KeyHome:
			l.cur = 0
		case tcell.KeyEnd:
			l.cur = n - 1
		case tcell.KeyPgDn:
			l.cur = min(l.cur+max(h, 1), n-1)
		case tcell.KeyPgUp:
			l.cur = max(l.cur-max(h, 1), 0)
		case tcell.KeyEnter:
			l.choose()
		case tcell.KeyRune:
			if ev.Rune() == ' ' {
				l.choose()
			}
		}
	})
}

func (l *pickList) choose() {
	if l.chosen != nil && l.cur < len(l.items) {
		l.chosen(l.cur)
	}
}

// MouseHandler chooses the item clicked and scrolls with the wheel.
func (l *pickList) MouseHandler() func(action tview.MouseAction, event *tcell.EventMouse, setFocus func(p tview.Primitive)) (bool, tview.Primitive) {
	return l.WrapMouseHandler(func(action tview.MouseAction, ev *tcell.EventMouse, setFocus func(p tview.Primitive)) (bool, tview.Primitive) {
		if !l.InRect(ev.Position()) {
			return false, nil
		}
		switch action {
		case tview.MouseLeftClick:
			setFocus(l)
			if i := l.itemAt(ev.Position()); i >= 0 {
				l.cur = i
				l.choose()
			}
		case tview.MouseScrollUp:
			l.cur = max(l.cur-1, 0)
		case tview.MouseScrollDown:
			l.cur = min(l.cur+1, len(l.items)-1)
		default:
			return false, nil
		}
		return true, nil
	})
}

// itemAt is the item drawn on the row of y, or -1.
func (l *pickList) itemAt(_, y int) int {
	_, top, _, h := l.GetInnerRect()
	row := y - top
	if row < 0 || row >= h || len(l.rows) != len(l.items) {
		return -1
	}
	for i := l.top; i < len(l.items); i++ {
		if row < len(l.rows[i]) {
			return i
		}
		row -= len(l.rows[i])
	}
	return -1
}

// wrapHanging wraps plain text s to width cells: the first row from the
// left edge, the others indented by hang cells (none when that leaves
// fewer than 10). Rows break where Unicode allows a line break (between
// words, between CJK characters), and a piece wider than a row is cut
// between characters. A label shows as text what a file or a model wrote
// (a skill's description, a turn's prompt): see escape.
func wrapHanging(s string, width, hang int) []string {
	s = text.Visible(strings.ReplaceAll(s, "\n", " "))
	if width <= 0 {
		return []string{s}
	}
	if width-hang < 10 {
		hang = 0
	}
	var rows []string
	var cur strings.Builder
	start, used := 0, 0 // where the row's text starts, cells used
	next := func() {
		rows = append(rows, strings.TrimRight(cur.String(), " "))
		cur.Reset()
		cur.WriteString(strings.Repeat(" ", hang))
		start, used = hang, hang
	}
	state := -1
	for rest := s; rest != ""; {
		var seg string
		seg, rest, _, state = uniseg.FirstLineSegmentInString(rest, state)
		if used > start && used+uniseg.StringWidth(strings.TrimRight(seg, " ")) > width {
			next()
		}
		if used == start && len(rows) > 0 {
			seg = strings.TrimLeft(seg, " ")
		}
		// A piece wider than a whole row is cut between characters.
		for used+uniseg.StringWidth(strings.TrimRight(seg, " ")) > width {
			g := uniseg.NewGraphemes(seg)
			taken := 0
			for g.Next() && (used+g.Width() <= width || used == start && taken == 0) {
				cur.WriteString(g.Str())
				used += g.Width()
				taken += len(g.Str())
			}
			seg = strings.TrimLeft(seg[taken:], " ")
			next()
		}
		cur.WriteString(seg)
		used += uniseg.StringWidth(seg)
	}
	return append(rows, strings.TrimRight(cur.String(), " "))
}
