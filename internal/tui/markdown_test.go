package tui

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/gdamore/tcell/v2"
	"github.com/rivo/tview"
)

const sampleMD = "# Title\n\nSome **bold** text, *italic*, _also_, ~~gone~~ and `code [x]`.\n" +
	"A [link](https://example.com) and snake_case_name and 2 * 3 * 4.\n\n" +
	"- one\n- two with **bold**\n  - nested\n1. first\n2. second\n\n" +
	"> quoted *words*\n\n" +
	"```go\nfunc main() { // entry\n\tfmt.Println(\"hi [red]\", 42)\n}\n```\n\n" +
	"| name | size |\n|---|--:|\n| a.go | 12 |\n| **b** | 3 |\n\n" +
	"---\nsee [red]not a tag[-] and \\*stars\\* and [x] end\n中文 **粗体** 文本\n"

// render feeds text to a fresh stream in the given pieces.
func render(th *theme, pieces ...string) string {
	m := newMarkdown(th)
	var b strings.Builder
	for _, p := range pieces {
		b.WriteString(m.Feed(p))
	}
	b.WriteString(m.Flush())
	return b.String()
}

// TestMarkdownStreamingIsChunkingIndependent: however the answer is cut
// into deltas, the markup is the same as for the whole text at once.
func TestMarkdownStreamingIsChunkingIndependent(t *testing.T) {
	whole := render(&darkTheme, sampleMD)
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		var pieces []string
		rest := sampleMD
		for rest != "" {
			n := 1 + rng.IntN(7)
			if trial == 0 {
				n = 1
			}
			n = min(n, len(rest))
			pieces = append(pieces, rest[:n])
			rest = rest[n:]
		}
		if got := render(&darkTheme, pieces...); got != whole {
			t.Fatalf("trial %d: chunked output differs:\n%q\nwant\n%q", trial, got, whole)
		}
	}
}

// screenOf draws markup in a TextView on a simulation screen.
func screenOf(t *testing.T, markup string, w, h int) ([]tcell.SimCell, int) {
	t.Helper()
	sim := tcell.NewSimulationScreen("UTF-8")
	if err := sim.Init(); err != nil {
		t.Fatal(err)
	}
	defer sim.Fini()
	sim.SetSize(w, h)
	tv := tview.NewTextView().SetDynamicColors(true).SetWrap(true)
	tv.SetText(markup)
	tv.SetRect(0, 0, w, h)
	tv.Draw(sim)
	sim.Show()
	cells, cw, _ := sim.GetContents()
	return cells, cw
}

// lineOf is row y as text, and the cell column of each byte of it (a
// wide character fills two cells, the second with no rune).
func lineOf(cells []tcell.SimCell, w, y int) string {
	l, _ := lineCols(cells, w, y)
	return l
}

func lineCols(cells []tcell.SimCell, w, y int) (string, []int) {
	var b strings.Builder
	var cols []int
	for x := range w {
		c := cells[y*w+x]
		if len(c.Runes) > 0 {
			n := b.Len()
			b.WriteRune(c.Runes[0])
			for range b.Len() - n {
				cols = append(cols, x)
			}
		}
	}
	return strings.TrimRight(b.String(), " "), cols
}

// find returns the style of the first cell of want on screen.
func find(t *testing.T, cells []tcell.SimCell, w int, want string) (tcell.Style, int) {
	t.Helper()
	for y := 0; y*w < len(cells); y++ {
		l, cols := lineCols(cells, w, y)
		if i := strings.Index(l, want); i >= 0 {
			return cells[y*w+cols[i]].Style, y
		}
	}
	var all []string
	for y := 0; y*w < len(cells); y++ {
		all = append(all, lineOf(cells, w, y))
	}
	t.Fatalf("%q not on screen:\n%s", want, strings.Join(all, "\n"))
	return tcell.Style{}, 0
}

func TestMarkdownRendersOnScreen(t *testing.T) {
	th := &darkTheme
	cells, w := screenOf(t, render(th, sampleMD), 80, 40)
	attrs := func(s string) tcell.AttrMask {
		st, _ := find(t, cells, w, s)
		_, _, a := st.Decompose()
		return a
	}
	fg := func(s string) tcell.Color {
		st, _ := find(t, cells, w, s)
		f, _, _ := st.Decompose()
		return f
	}
	if attrs("Title")&tcell.AttrBold == 0 || fg("Title") != tcell.GetColor(th.heading) {
		t.Error("heading not bold in the heading colour")
	}
	if _, y := find(t, cells, w, "Title"); strings.Contains(lineOf(cells, w, y), "#") {
		t.Error("heading marker shown")
	}
	if attrs("bold text")&tcell.AttrBold == 0 || attrs(" text,")&tcell.AttrBold != 0 {
		t.Error("bold span wrong")
	}
	if attrs("italic")&tcell.AttrItalic == 0 || attrs("also")&tcell.AttrItalic == 0 {
		t.Error("italic wrong")
	}
	if attrs("gone")&tcell.AttrStrikeThrough == 0 {
		t.Error("strike wrong")
	}
	if fg("code [x]") != tcell.GetColor(th.code) {
		t.Error("code span colour / its bracket")
	}
	if st, _ := find(t, cells, w, "link"); st.GetUnderlineStyle() == tcell.UnderlineStyleNone {
		t.Error("link not underlined")
	}
	find(t, cells, w, "(https://example.com)")
	find(t, cells, w, "snake_case_name and 2 * 3 * 4.")
	find(t, cells, w, "• one")
	find(t, cells, w, "  • nested")
	find(t, cells, w, "1. first")
	if attrs("quoted")&tcell.AttrItalic == 0 {
		t.Error("quote not italic")
	}
	find(t, cells, w, "│ quoted words")
	// Code: a keyword, a string with a bracket, a comment, a number.
	find(t, cells, w, "╭─ go")
	if fg("func") != tcell.GetColor(th.keyword) {
		t.Error("keyword colour")
	}
	if fg(`"hi [red]"`) != tcell.GetColor(th.str) {
		t.Error("string colour (or the bracket was taken for a tag)")
	}
	if fg("// entry") != tcell.GetColor(th.comment) || fg("42") != tcell.GetColor(th.number) {
		t.Error("comment / number colour")
	}
	// Table: aligned columns, header bold, the separator drawn.
	_, y1 := find(t, cells, w, "name │")
	_, y2 := find(t, cells, w, "a.go")
	l1, l2 := lineOf(cells, w, y1), lineOf(cells, w, y2)
	if strings.Index(l1, "│") != strings.Index(l2, "│") || attrs("name │")&tcell.AttrBold == 0 {
		t.Errorf("table not aligned:\n%s\n%s", l1, l2)
	}
	find(t, cells, w, "─┼─")
	// The model cannot style the transcript.
	find(t, cells, w, "see [red]not a tag[-] and *stars* and [x] end")
	if attrs("粗体")&tcell.AttrBold == 0 {
		t.Error("CJK bold")
	}
}

// TestMarkdownTagsCannotBeAssembled: a tag split over deltas stays text.
func TestMarkdownTagsCannotBeAssembled(t *testing.T) {
	for _, pieces := range [][]string{
		{"look [re", "d]red?"},
		{"`[yel", "low]`"},
		{"```sh\necho [gre", "en]x\n```\n"},
		{"[", "::b]bold?"},
	} {
		markup := render(&darkTheme, pieces...)
		cells, w := screenOf(t, markup, 60, 6)
		want := strings.ReplaceAll(strings.Join(pieces, ""), "`", "")
		want = strings.TrimPrefix(strings.TrimSuffix(want, "\n"), "sh\n")
		want = strings.Split(want, "\n")[0]
		if want == "echo [green]x" {
			find(t, cells, w, "│ echo [green]x")
			continue
		}
		find(t, cells, w, want)
	}
}

func TestHighlightLanguages(t *testing.T) {
	th := &lightTheme
	for _, c := range []struct{ lang, line, word, color string }{
		{"py", "def f(x):  # note", "def", th.keyword},
		{"python", "def f(x):  # note", "# note", th.comment},
		{"ts", "const x: string = 'a'", "'a'", th.str},
		{"rust", "let v: Vec<u8> = vec![];", "let", th.keyword},
		{"bash", "if [ -f x ]; then echo hi; fi", "then", th.keyword},
		{"json", `{"a": true}`, "true", th.typ},
		{"diff", "+added line", "+added line", th.added},
		{"java", "public static void main() {}", "void", th.typ},
	} {
		cells, w := screenOf(t, highlight(c.lang, c.line, th), 60, 2)
		st, _ := find(t, cells, w, c.word)
		if f, _, _ := st.Decompose(); f != tcell.GetColor(c.color) {
			t.Errorf("%s: %q in %v, want %s", c.lang, c.word, f, c.color)
		}
		if got := lineOf(cells, w, 0); got != c.line {
			t.Errorf("%s: shown %q, want %q", c.lang, got, c.line)
		}
	}
}

func TestPickTheme(t *testing.T) {
	env := func(v string) func(string) string { return func(string) string { return v } }
	probe := func(light, ok bool) func() (bool, bool) { return func() (bool, bool) { return light, ok } }
	for _, c := range []struct {
		name, fgbg string
		probe      func() (bool, bool)
		want       string
	}{
		{"", "", nil, "dark"}, {"auto", "0;15", nil, "light"}, {"", "15;0", nil, "dark"}, {"light", "", nil, "light"}, {"dark", "0;15", nil, "dark"},
		{"", "12;7", nil, "light"},
		// No COLORFGBG: the terminal's answer decides.
		{"", "", probe(true, true), "light"}, {"auto", "", probe(false, true), "dark"}, {"", "", probe(true, false), "dark"},
		// COLORFGBG wins over asking; a configured theme over both.
		{"", "15;0", probe(true, true), "dark"}, {"dark", "", probe(true, true), "dark"},
	} {
		if got := pickTheme(c.name, env(c.fgbg), c.probe).name; got != c.want {
			t.Errorf("theme %q COLORFGBG %q: %s, want %s", c.name, c.fgbg, got, c.want)
		}
	}
}

// TestParseBackground: OSC 11 replies as terminals send them (BEL or ST
// ended, 2 or 4 hex digits a channel) next to the DA1 reply that ends the
// wait.
func TestParseBackground(t *testing.T) {
	for _, c := range []struct {
		reply     string
		light, ok bool
	}{
		{"\x1b]11;rgb:ffff/ffff/ffff\x07\x1b[?1;2c", true, true},
		{"\x1b]11;rgb:1e1e/1e1e/2e2e\x1b\\\x1b[?62;22c", false, true},
		{"\x1b]11;rgb:fd/f6/e3\x07", true, true},  // solarized light
		{"\x1b]11;rgb:00/2b/36\x07", false, true}, // solarized dark
		{"\x1b[?1;2c", false, false},              // no OSC 11 support
		{"\x1b]11;rgb:ffff/ffff\x07", false, false},
		{"\x1b]11;rgb:ffff/ffff/ffff", false, false}, // cut before its end
		{"", false, false},
	} {
		light, ok := parseBackground([]byte(c.reply))
		if light != c.light || ok != c.ok {
			t.Errorf("%q: light %v ok %v, want %v %v", c.reply, light, ok, c.light, c.ok)
		}
	}
	if !hasDA1Reply([]byte("\x1b]11;rgb:0/0/0\x07\x1b[?1;2c")) || hasDA1Reply([]byte("\x1b]11;rgb:0/0/0\x07\x1b[?1;2")) {
		t.Error("hasDA1Reply")
	}
}

// TestMarkdownWrapsListsAndQuotes: with the transcript's width known, a
// long list item continues under its text and a long quote keeps its
// bar on every line, whatever the chunking; every line fits, no word is
// lost or split, and the styles still apply.
func TestMarkdownWrapsListsAndQuotes(t *testing.T) {
	const width = 40
	text := "Intro.\n\n- a list item long enough to wrap over more than two lines of **forty** columns each\n" +
		"  - nested item that also runs on past the end of the forty column line\n" +
		"12. numbered item that runs on well past the end of the forty column line\n\n" +
		"> a quoted line with *emphasis* long enough to wrap twice at a width of forty\n\nshort\n"
	wrapped := func(pieces ...string) string {
		m := newMarkdown(&darkTheme)
		m.soft = true
		var b strings.Builder
		for _, p := range pieces {
			b.WriteString(m.Feed(p))
		}
		b.WriteString(m.Flush())
		return layoutSoft(b.String(), width)
	}
	whole := wrapped(text)
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 100 {
		var pieces []string
		for rest := text; rest != ""; {
			n := min(1+rng.IntN(9), len(rest))
			pieces, rest = append(pieces, rest[:n]), rest[n:]
		}
		if got := wrapped(pieces...); got != whole {
			t.Fatalf("trial %d: chunked output differs:\n%q\nwant\n%q", trial, got, whole)
		}
	}
	cells, w := screenOf(t, whole, width, 30)
	var rows []string
	for y := range 30 {
		rows = append(rows, lineOf(cells, w, y))
	}
	shown := strings.Join(rows, "\n")
	// The TextView did no wrapping of its own: every row is one of ours.
	if n := strings.Count(strings.TrimRight(whole, "\n"), "\n") + 1; strings.Count(strings.TrimRight(shown, "\n"), "\n")+1 != n {
		t.Errorf("%d markup lines became other rows:\n%s", n, shown)
	}
	want := []string{
		"• a list item long enough to wrap over",
		"  more than two lines of forty columns",
		"  each",
		"  • nested item that also runs on past",
		"    the end of the forty column line",
		"12. numbered item that runs on well",
		"    past the end of the forty column",
		"    line",
		"│ a quoted line with emphasis long",
		"│ enough to wrap twice at a width of",
		"│ forty",
	}
	for _, l := range want {
		if !strings.Contains(shown, l+"\n") {
			t.Errorf("row %q missing:\n%s", l, shown)
		}
	}
	if st, _ := find(t, cells, w, "forty columns"); attrsOf(st)&tcell.AttrBold == 0 {
		t.Error("bold lost in a wrapped list item")
	}
	if st, _ := find(t, cells, w, "twice at a width"); attrsOf(st)&tcell.AttrItalic == 0 {
		t.Error("a quote's continuation is not italic")
	}
	// Emphasis in a quote does not end the quote's italics.
	qc, qw := screenOf(t, render(&darkTheme, "> before *stressed* after\n"), 40, 2)
	if st, _ := find(t, qc, qw, "after"); attrsOf(st)&tcell.AttrItalic == 0 {
		t.Error("the quote lost its italics after an emphasis")
	}
	// Without soft lines wrapping is left to the TextView; soft lines
	// laid out without a width (not drawn yet) are not wrapped either.
	if got := render(&darkTheme, text); strings.Contains(got, "\n  more than") {
		t.Errorf("wrapped without soft lines:\n%q", got)
	}
	m := newMarkdown(&darkTheme)
	m.soft = true
	soft := m.Feed(text) + m.Flush()
	if got := layoutSoft(soft, 0); strings.Contains(got, "\n  more than") || strings.ContainsAny(got, softMark+softSep) {
		t.Errorf("laid out without a width:\n%q", got)
	}
	// Marks in the model's text are dropped: it cannot make a soft line.
	m = newMarkdown(&darkTheme)
	m.soft = true
	forged := m.Feed("plain \x1e[red]\x1fline "+strings.Repeat("word ", 20)+"\n") + m.Flush()
	if strings.ContainsAny(forged, softMark+softSep) {
		t.Errorf("forged soft line: %q", forged)
	}
}

func attrsOf(st tcell.Style) tcell.AttrMask {
	_, _, a := st.Decompose()
	return a
}
