package tui

import (
	"fmt"
	"strings"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/text"
)

const (
	// diffShow is how many diff lines an edit shows collapsed; diffFull
	// how many expanded (Ctrl-T). Ctrl-O shows the whole diff.
	diffShow = 12
	diffFull = 400
)

// diffBlock shows a finished file edit: the call with its line counts,
// then its diff coloured, cut to diffShow lines unless expanded.
func (a *App) diffBlock(prefix string, t *events.Tool) {
	head, body, files := a.diffHead(t)
	render := func(lines []string) string {
		var b strings.Builder
		b.WriteString(prefix + head + "\n")
		for _, l := range lines {
			b.WriteString(prefix + "    " + a.diffLine(l, len(files) > 1) + "\n")
		}
		return b.String()
	}
	if len(body) <= diffShow {
		a.endStream()
		a.write(render(body))
		return
	}
	more := func(n int, how string) string {
		return prefix + "    [gray]" + a.trf("… %d more lines · %s", n, how) + "[-]\n"
	}
	collapsed := render(body[:diffShow]) + more(len(body)-diffShow, a.tr("Ctrl-T shows them, Ctrl-O the whole output"))
	expanded := render(body[:min(len(body), diffFull)])
	if len(body) > diffFull {
		expanded += more(len(body)-diffFull, a.tr("Ctrl-O shows them"))
	}
	a.block(collapsed, expanded)
}

// diffHead is an edit's tool line with its line counts, and the lines
// of its diff.
func (a *App) diffHead(t *events.Tool) (head string, body, files []string) {
	body, files, added, removed := diffBody(t.Diff)
	head = "[" + a.th.ok + "]✓[-] " + escape(t.Brief())
	if len(files) > 1 {
		head += " [gray]· " + a.trf("%d files", len(files)) + "[-]"
	}
	head += fmt.Sprintf(" [%s]+%d[-] [%s]−%d[-]", a.th.added, added, a.th.removed, removed)
	return head, body, files
}

// diffLines is an edit as the lines of a block: its tool line, then its
// diff cut to diffShow lines.
func (a *App) diffLines(t *events.Tool) []string {
	head, body, files := a.diffHead(t)
	out := []string{head}
	for i, l := range body {
		if i == diffShow {
			out = append(out, "    [gray]"+a.trf("… %d more lines · %s", len(body)-i, a.tr("Ctrl-O shows them"))+"[-]")
			break
		}
		out = append(out, "    "+a.diffLine(l, len(files) > 1))
	}
	return out
}

// diffBody splits a unified diff into the lines to show, the files it
// changes and its added and removed line counts. The ---/+++ header
// pairs become one "+++ path" line, kept only when several files changed.
func diffBody(diff string) (body, files []string, added, removed int) {
	for _, l := range strings.Split(strings.TrimRight(diff, "\n"), "\n") {
		switch {
		case strings.HasPrefix(l, "--- "):
			continue
		case strings.HasPrefix(l, "+++ "):
			p := strings.TrimPrefix(strings.TrimPrefix(l, "+++ "), "b/")
			files = append(files, p)
			body = append(body, "+++ "+p)
			continue
		case strings.HasPrefix(l, "+"):
			added++
		case strings.HasPrefix(l, "-"):
			removed++
		}
		body = append(body, l)
	}
	if len(files) <= 1 {
		kept := body[:0]
		for _, l := range body {
			if !strings.HasPrefix(l, "+++ ") {
				kept = append(kept, l)
			}
		}
		body = kept
	}
	return body, files, added, removed
}

// diffLine colours one diff line from the theme: added, removed, hunk
// header, file header. The +/- marks stay, so it reads without colour
// (NO_COLOR) too.
func (a *App) diffLine(l string, files bool) string {
	e := escape(text.Clip(strings.ReplaceAll(l, "\t", "    "), 400))
	switch {
	case files && strings.HasPrefix(l, "+++ "):
		return "[::b]" + escape(strings.TrimPrefix(l, "+++ ")) + "[::-]"
	case strings.HasPrefix(l, "+"):
		return a.th.tag(a.th.added, e)
	case strings.HasPrefix(l, "-"):
		return a.th.tag(a.th.removed, e)
	case strings.HasPrefix(l, "@@"):
		return a.th.tag(a.th.dim, e)
	}
	return e
}
