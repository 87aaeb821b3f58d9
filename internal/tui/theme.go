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
// the terminal sets it ("15;0" is light text on black), else asks the
// terminal through probe (nil: do not ask), else assumes a dark one.
func pickTheme(name string, getenv func(string) string, probe func() (light, ok bool)) *theme {
	switch name {
	case "light":
		return &lightTheme
	case "dark":
		return &darkTheme
	}
	if v := getenv("COLORFGBG"); v != "" {
		parts := strings.Split(v, ";")
		if bg, err := strconv.Atoi(parts[len(parts)-1]); err == nil {
			if bg == 7 || bg == 15 {
				return &lightTheme
			}
			return &darkTheme
		}
	}
	if probe != nil {
		if light, ok := probe(); ok && light {
			return &lightTheme
		}
	}
	return &darkTheme
}

// bgQuery asks for the background colour (OSC 11) and then for the
// device attributes (DA1), whose reply ends the wait (probeBackground).
const bgQuery = "\x1b]11;?\x07\x1b[c"

// hasDA1Reply reports whether b holds a DA1 reply: ESC [ ? digits and
// semicolons, then c.
func hasDA1Reply(b []byte) bool {
	for i := 0; i+2 < len(b); i++ {
		if b[i] != 0x1b || b[i+1] != '[' || b[i+2] != '?' {
			continue
		}
		for j := i + 3; j < len(b); j++ {
			c := b[j]
			if c == 'c' {
				return true
			}
			if (c < '0' || c > '9') && c != ';' {
				break
			}
		}
	}
	return false
}

// parseBackground reads an OSC 11 reply in b ("ESC ] 11 ; rgb:RRRR/GGGG/BBBB"
// ended by BEL or ESC \, with 1 to 4 hex digits a channel) and reports
// whether that colour is light (relative luminance above one half).
func parseBackground(b []byte) (light, ok bool) {
	s := string(b)
	i := strings.Index(s, "\x1b]11;rgb:")
	if i < 0 {
		return false, false
	}
	s = s[i+len("\x1b]11;rgb:"):]
	if j := strings.IndexAny(s, "\x07\x1b"); j >= 0 {
		s = s[:j]
	} else {
		return false, false
	}
	ch := strings.Split(s, "/")
	if len(ch) != 3 {
		return false, false
	}
	var v [3]float64
	for k, h := range ch {
		if len(h) < 1 || len(h) > 4 {
			return false, false
		}
		n, err := strconv.ParseUint(h, 16, 16)
		if err != nil {
			return false, false
		}
		v[k] = float64(n) / float64(uint64(1)<<(4*len(h))-1)
	}
	return 0.2126*v[0]+0.7152*v[1]+0.0722*v[2] > 0.5, true
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
