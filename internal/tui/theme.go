package tui

import (
	"strconv"
	"strings"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

// theme holds the colours the transcript uses, as tview colour names.
// Both palettes use the terminal's own 16 ANSI colours, so they follow
// the user's terminal scheme; the light one avoids the bright yellows and
// cyans that vanish on a white background. The background is never set:
// the terminal's own shows through.
type theme struct {
	name                                       string
	heading, quote, code, link, accent, dim    string
	keyword, str, comment, number, typ, fn     string
	added, removed, warn, errc, ok, user, tool string
}

var (
	darkTheme = theme{name: "dark",
		heading: "aqua", quote: "silver", code: "yellow", link: "aqua", accent: "fuchsia", dim: "gray",
		keyword: "fuchsia", str: "lime", comment: "gray", number: "yellow", typ: "aqua", fn: "blue",
		added: "lime", removed: "red", warn: "yellow", errc: "red", ok: "lime", user: "aqua", tool: "blue"}
	lightTheme = theme{name: "light",
		heading: "navy", quote: "gray", code: "maroon", link: "navy", accent: "purple", dim: "gray",
		keyword: "purple", str: "green", comment: "gray", number: "maroon", typ: "teal", fn: "navy",
		added: "green", removed: "maroon", warn: "olive", errc: "maroon", ok: "green", user: "teal", tool: "navy"}
)

// tag wraps text in a foreground colour.
func (t *theme) tag(color, text string) string {
	if color == "" {
		return text
	}
	return "[" + color + "]" + text + "[-]"
}

// pickTheme resolves the configured theme: "dark", "light", or "auto"
// (also ""), which reads the terminal's background from COLORFGBG when
// the terminal sets it ("15;0" is light text on black) and else assumes a
// dark one.
func pickTheme(name string, getenv func(string) string) *theme {
	switch name {
	case "light":
		return &lightTheme
	case "dark":
		return &darkTheme
	}
	if v := getenv("COLORFGBG"); v != "" {
		parts := strings.Split(v, ";")
		if bg, err := strconv.Atoi(parts[len(parts)-1]); err == nil && (bg == 7 || bg == 15) {
			return &lightTheme
		}
	}
	return &darkTheme
}

// useTerminalColours makes tview draw on the terminal's own background
// and foreground instead of forcing white on black. tview keeps these
// defaults in one package variable; the TUI sets them before it builds a
// widget.
func useTerminalColours() {
	tview.Styles.PrimitiveBackgroundColor = tcell.ColorDefault
	tview.Styles.PrimaryTextColor = tcell.ColorDefault
	tview.Styles.BorderColor = tcell.ColorGray
	tview.Styles.TitleColor = tcell.ColorDefault
	tview.Styles.GraphicsColor = tcell.ColorGray
	tview.Styles.SecondaryTextColor = tcell.ColorTeal
	tview.Styles.TertiaryTextColor = tcell.ColorGreen
	tview.Styles.InverseTextColor = tcell.ColorNavy
	tview.Styles.ContrastSecondaryTextColor = tcell.ColorTeal
}
