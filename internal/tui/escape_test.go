package tui

import (
	"math/rand"
	"testing"

	"github.com/rivo/tview"
)

// shownText is what a text view with markup shows for m.
func shownText(m string) string {
	return tview.NewTextView().SetDynamicColors(true).SetRegions(true).SetText(m).GetText(true)
}

// escape shows what a model, a tool or a server wrote as text: control
// characters in caret notation, the bidirectional controls by code point,
// and every bracket as it is, including those of escape sequences in
// caret notation, which tview.Escape left for tview to take as an escaped
// tag ("^[[1m^[]0;" lost a "[").
func TestEscapeShowsTextAsItIs(t *testing.T) {
	for in, want := range map[string]string{
		"rm -rf ~\recho hello":                "rm -rf ~^Mecho hello",
		"\x1b[1m\x1b]0;title\x07 \x1b[2K":     "^[[1m^[]0;title^G ^[[2K",
		"safe \u202eevil\u202c \u2066x\u2069": "safe <U+202E>evil<U+202C> <U+2066>x<U+2069>",
		"[red]not red[-] [::b] [\"r\"]":       "[red]not red[-] [::b] [\"r\"]",
		"a[i^[]] [é[] [.^#[]":                 "a[i^[]] [é[] [.^#[]",
		"tab\tand\nnewline":                   "tab\tand\nnewline",
	} {
		if got := shownText(escape(in)); got != want {
			t.Errorf("escape(%q) shows %q, want %q", in, got, want)
		}
	}
	// Any text of brackets and the characters around them shows as it
	// is. (A tag's fourth field, a link, may hold brackets: text with
	// three colons after a "[" is left out, as tview cannot show all of
	// it.)
	r := rand.New(rand.NewSource(1))
	alpha := []rune("[]^a \"-é/#.,;_")
	for range 20000 {
		b := make([]rune, 1+r.Intn(12))
		for j := range b {
			b[j] = alpha[r.Intn(len(alpha))]
		}
		if s := string(b); shownText(escape(s)) != s {
			t.Fatalf("escape(%q) = %q shows %q", s, escape(s), shownText(escape(s)))
		}
	}
}

// TestDropToneModifiers: a skin-tone modifier after a character goes (the
// line breaker would end the line there), one alone stays, and the rest
// of the text is untouched.
func TestDropToneModifiers(t *testing.T) {
	for _, c := range []struct {
		prev     rune
		in, want string
	}{
		{' ', "ok 👍🏽 done", "ok 👍 done"},
		{' ', "好的✌🏿。", "好的✌。"},
		{' ', "a lone 🏽 swatch", "a lone 🏽 swatch"},
		{' ', "🏽 first", "🏽 first"},
		{'👍', "🏽 next piece", " next piece"},
		{' ', "no emoji at all", "no emoji at all"},
	} {
		if got := dropToneModifiers(c.prev, c.in); got != c.want {
			t.Errorf("dropToneModifiers(%q, %q) = %q, want %q", c.prev, c.in, got, c.want)
		}
	}
}
