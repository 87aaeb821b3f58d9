package events

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// briefKeys are the arguments that best name what a call acts on, in the
// order they are looked for.
var briefKeys = []string{"command", "path", "file_path", "pattern", "source", "agent", "name", "action"}

// Brief renders a call as one readable line: the tool and its main
// argument. Every front end names calls this way, so a line in the TUI
// reads like the same call in the text output.
func (t *Tool) Brief() string {
	var args map[string]any
	_ = json.Unmarshal(t.Args, &args)
	for _, k := range briefKeys {
		if v, ok := args[k].(string); ok && v != "" {
			return t.Name + " " + Clip(strings.ReplaceAll(v, "\n", " "), 120)
		}
	}
	return t.Name
}

// Clip shortens s to at most n bytes, cutting at a rune boundary and
// marking the cut with an ellipsis.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
