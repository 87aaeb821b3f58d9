package tui

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// complete is Tab in the composer: a "/name" draft completes to a command
// (built-ins, then the engine's commands and skills), an "@path" word to
// a path, one directory level at a time. One match is completed; several
// complete to what they share and are listed under the draft. It reports
// whether it handled the key.
func (a *App) complete() bool {
	text := a.composer.GetText()
	if strings.HasPrefix(text, "/") && !strings.ContainsAny(text, " \n") {
		names := append([]string(nil), builtins...)
		for _, c := range a.eng.Commands() {
			names = append(names, c.Name)
		}
		a.offer("/", text[1:], names, " ")
		return true
	}
	i := strings.LastIndexAny(text, " \n")
	word := text[i+1:]
	if !strings.HasPrefix(word, "@") {
		return false
	}
	dir, base := filepath.Split(word[1:])
	entries, err := os.ReadDir(filepath.Join(".", dir))
	if err != nil {
		a.note("no such folder: " + dir)
		return true
	}
	var names []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasPrefix(n, ".") && !strings.HasPrefix(base, ".") {
			continue
		}
		if e.IsDir() {
			n += "/"
		}
		names = append(names, n)
	}
	a.offer(text[:i+1]+"@"+dir, base, names, "")
	return true
}

// offer completes typed (the part after lead) among names: the one match
// plus after, or the longest shared start, listing the candidates.
func (a *App) offer(lead, typed string, names []string, after string) {
	var match []string
	seen := map[string]bool{}
	for _, n := range names {
		if strings.HasPrefix(n, typed) && !seen[n] {
			seen[n] = true
			match = append(match, n)
		}
	}
	sort.Strings(match)
	switch len(match) {
	case 0:
		a.note("no completion for " + strings.TrimSpace(lead+typed))
	case 1:
		end := after
		if strings.HasSuffix(match[0], "/") {
			end = ""
		}
		a.composer.SetText(lead+match[0]+end, true)
	default:
		p := match[0]
		for _, m := range match[1:] {
			for !strings.HasPrefix(m, p) {
				p = p[:len(p)-1]
			}
		}
		if len(p) > len(typed) {
			a.composer.SetText(lead+p, true)
		}
		shown := match
		if len(shown) > 30 {
			shown = append(shown[:30:30], "…")
		}
		a.note(strings.Join(shown, "  "))
	}
}
