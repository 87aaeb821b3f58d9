package tui

import (
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/uniseg"

	"github.com/reasonix/reasonix/internal/text"
)

// The completion menu: a "/" at the start of the draft lists the
// commands (built-ins, custom commands, skills, MCP prompts) that start
// with what follows it; an "@" word lists the files of its folder, one
// level at a time. The menu floats above the composer and follows the
// draft as it is typed; while it is open it owns Up, Down, Tab, Enter and
// Esc (see menuKey). It is drawn after everything else (drawMenu), so it
// never takes the focus from the composer.

// menuRows is the most items the menu shows at once.
const menuRows = 8

// menuDirEntries bounds the entries read from one folder.
const menuDirEntries = 2000

// menuItem is one choice of a menu.
type menuItem struct {
	name string // what the draft gets: a command name, or a path
	desc string
	dir  bool // a folder: taking it lists its entries next
}

type menu struct {
	kind byte // '/' or '@'
	lead string
	// at is where the "@" of an @ menu is in lead, dir the folder after
	// it; quoted is set when the reference is an open @"…" (a path with
	// spaces), which the taken file closes.
	at       int
	dir      string
	quoted   bool
	items    []menuItem
	sel, top int
}

// menuFor is the menu for draft text, and whether text asks for one at
// all (a "/name" draft or an "@path" last word).
func (a *App) menuFor(text string) (*menu, bool) {
	if strings.HasPrefix(text, "/") && !strings.ContainsAny(text, " \n") {
		typed := text[1:]
		var items []menuItem
		seen := map[string]bool{}
		add := func(name, desc string) {
			if strings.HasPrefix(name, typed) && !seen[name] {
				seen[name] = true
				items = append(items, menuItem{name: name, desc: desc})
			}
		}
		for _, b := range builtins {
			add(b.name, a.tr(b.desc))
		}
		for _, c := range a.eng.Commands() {
			d := c.Description
			if c.Source != "" {
				d = strings.TrimSpace(d + "  · " + c.Source)
			}
			add(c.Name, d)
		}
		// Exact and shorter names first, then by name.
		sort.SliceStable(items, func(i, j int) bool {
			if (items[i].name == typed) != (items[j].name == typed) {
				return items[i].name == typed
			}
			return items[i].name < items[j].name
		})
		return &menu{kind: '/', lead: "/", items: items}, true
	}
	var m *menu
	var base string
	if j := strings.LastIndex(text, `@"`); j >= 0 && (j == 0 || strings.ContainsRune(" \t\n([{'`", rune(text[j-1]))) &&
		!strings.ContainsAny(text[j+2:], "\"\n") {
		// An open quoted reference: its path may hold spaces.
		var dir string
		dir, base = filepath.Split(text[j+2:])
		m = &menu{kind: '@', lead: text[:j+2] + dir, at: j, dir: dir, quoted: true}
	} else {
		i := strings.LastIndexAny(text, " \n")
		word := text[i+1:]
		if !strings.HasPrefix(word, "@") {
			return nil, false
		}
		var dir string
		dir, base = filepath.Split(word[1:])
		m = &menu{kind: '@', lead: text[:i+1] + "@" + dir, at: i + 1, dir: dir}
	}
	dir := m.dir
	f, err := os.Open(filepath.Join(".", dir))
	if err != nil {
		return m, true
	}
	entries, _ := f.ReadDir(menuDirEntries)
	_ = f.Close()
	for _, e := range entries {
		n := e.Name()
		if !strings.HasPrefix(n, base) || strings.HasPrefix(n, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		it := menuItem{name: n}
		if e.IsDir() {
			it.name, it.dir = n+"/", true
		}
		m.items = append(m.items, it)
	}
	// Folders first, then files, each by name.
	sort.Slice(m.items, func(i, j int) bool {
		if m.items[i].dir != m.items[j].dir {
			return m.items[i].dir
		}
		return m.items[i].name < m.items[j].name
	})
	return m, true
}

// updateMenu opens, filters or closes the menu after the draft changed.
// A menu closed with Esc stays closed until the draft changes.
func (a *App) updateMenu() {
	if a.eng == nil {
		return
	}
	text := a.composer.GetText()
	if a.menuOff != "" && text == a.menuOff {
		return
	}
	if r := &a.recall; r.pos < len(r.items) && text == r.items[r.pos] {
		// A recalled prompt: Up and Down go on through the history.
		a.menu = nil
		return
	}
	a.menuOff = ""
	m, _ := a.menuFor(text)
	if m == nil || len(m.items) == 0 {
		a.menu = nil
		return
	}
	if old := a.menu; old != nil && old.kind == m.kind && old.sel < len(old.items) {
		// Keep the selection on the same item while it still matches.
		want := old.items[old.sel].name
		for i, it := range m.items {
			if it.name == want {
				m.sel = i
			}
		}
	}
	a.menu = m
	a.scrollMenu()
}

// scrollMenu keeps the selection in the rows shown.
func (a *App) scrollMenu() {
	m := a.menu
	if m.sel < m.top {
		m.top = m.sel
	}
	if m.sel >= m.top+menuRows {
		m.top = m.sel - menuRows + 1
	}
}

// menuKey handles a key while the menu is open; it reports whether the
// key was the menu's.
func (a *App) menuKey(ev *tcell.EventKey) bool {
	m := a.menu
	switch ev.Key() {
	case tcell.KeyUp, tcell.KeyCtrlP:
		m.sel = (m.sel + len(m.items) - 1) % len(m.items)
	case tcell.KeyDown, tcell.KeyCtrlN:
		m.sel = (m.sel + 1) % len(m.items)
	case tcell.KeyTab:
		a.takeMenu(false)
	case tcell.KeyEnter:
		if ev.Modifiers()&tcell.ModAlt != 0 {
			return false // Alt-Enter is a newline
		}
		if m.kind == '/' && a.composer.GetText() == "/"+m.items[m.sel].name {
			// A command typed in full is sent as typed.
			a.menu = nil
			return false
		}
		a.takeMenu(true)
	case tcell.KeyEscape:
		a.closeMenu()
	default:
		return false
	}
	if a.menu != nil {
		a.scrollMenu()
	}
	return true
}

// closeMenu closes the menu until the draft changes.
func (a *App) closeMenu() {
	a.menu = nil
	a.menuOff = a.composer.GetText()
}

// takeMenu puts the selected item in the draft. A folder lists its own
// entries next; Enter on a built-in command that takes no arguments runs
// it.
func (a *App) takeMenu(enter bool) {
	m := a.menu
	it := m.items[m.sel]
	a.menu = nil
	switch {
	case m.kind == '/' && enter && noArgs(it.name):
		a.composer.SetText("/"+it.name, true)
		a.menu, a.menuOff = nil, a.composer.GetText()
		a.composerKey(tcell.NewEventKey(tcell.KeyEnter, 0, tcell.ModNone))
	case m.kind == '/':
		a.composer.SetText("/"+it.name+" ", true)
	case m.kind == '@' && !m.quoted && strings.ContainsAny(it.name, " \t"):
		// A name with spaces is quoted (@"my docs/a b.md"), or the
		// reference would end at its first space and attach nothing.
		open := m.lead[:m.at] + `@"` + m.dir + it.name
		if it.dir {
			a.composer.SetText(open, true) // lists the folder, still quoted
		} else {
			a.composer.SetText(open+`" `, true)
		}
	case it.dir:
		a.composer.SetText(m.lead+it.name, true) // lists the folder
	case m.quoted:
		a.composer.SetText(m.lead+it.name+`" `, true)
	default:
		a.composer.SetText(m.lead+it.name+" ", true)
	}
}

// complete is Tab with no menu open: it opens the menu again after Esc,
// takes the only match at once, and says when nothing matches. It
// reports whether it handled the key.
func (a *App) complete() bool {
	text := a.composer.GetText()
	m, ok := a.menuFor(text)
	if !ok {
		return false
	}
	switch len(m.items) {
	case 0:
		if m.kind == '/' {
			a.notef("no command starts with %s", text)
		} else {
			a.notef("nothing matches %s", text[m.at:])
		}
	case 1:
		a.menu = m
		a.takeMenu(false)
	default:
		a.menuOff = ""
		a.menu = m
	}
	return true
}

// drawMenu draws the open menu just above the composer, over the
// transcript's last rows.
func (a *App) drawMenu(screen tcell.Screen) {
	m := a.menu
	if m == nil || len(a.overlays) > 0 {
		return
	}
	x, y, w, _ := a.composer.GetRect()
	rows := min(len(m.items)-m.top, menuRows)
	top := y - rows - 1
	if top < 0 || w < 10 {
		return
	}
	base := tcell.StyleDefault
	dim := base.Dim(true)
	title := " " + a.tr("commands") + " "
	if m.kind == '@' {
		title = " " + m.dir
		if title == " " {
			title = " ./"
		}
		title += " "
	}
	hint := " " + a.tr("↑↓ move · Tab/Enter take · Esc close") + " "
	if len(m.items) > menuRows {
		hint = " " + strconv.Itoa(m.sel+1) + "/" + strconv.Itoa(len(m.items)) + hint
	}
	fill(screen, x, top, w, base, '─')
	put(screen, x+1, top, w-2, title, base.Bold(true))
	if hw := uniseg.StringWidth(hint); hw+uniseg.StringWidth(title)+4 < w {
		put(screen, x+w-hw-1, top, hw, hint, dim)
	}
	nameW := 0
	for _, it := range m.items[m.top : m.top+rows] {
		nameW = max(nameW, uniseg.StringWidth(it.name))
	}
	nameW = min(nameW+1, w/2)
	for i := 0; i < rows; i++ {
		it := m.items[m.top+i]
		st, dst := base, dim
		if m.top+i == m.sel {
			st, dst = base.Reverse(true), base.Reverse(true)
		}
		row := top + 1 + i
		fill(screen, x, row, w, st, ' ')
		label := it.name
		if m.kind == '/' {
			label = "/" + label
		}
		put(screen, x+1, row, nameW+1, label, st)
		if it.desc != "" && nameW+3 < w {
			put(screen, x+nameW+3, row, w-nameW-4, it.desc, dst)
		}
	}
}

// fill paints one row of w cells with r.
func fill(screen tcell.Screen, x, y, w int, st tcell.Style, r rune) {
	for i := 0; i < w; i++ {
		screen.SetContent(x+i, y, r, nil, st)
	}
}

// put writes s from x on row y, cut to w cells (wide characters count
// two).
func put(screen tcell.Screen, x, y, w int, s string, st tcell.Style) {
	used := 0
	for _, r := range text.Visible(s) { // a file's or a skill's name, shown as text: see escape
		if r == '\n' || r == '\t' {
			r = ' '
		}
		rw := uniseg.StringWidth(string(r))
		if used+rw > w {
			return
		}
		screen.SetContent(x+used, y, r, nil, st)
		used += rw
	}
}
