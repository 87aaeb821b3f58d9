package events

import (
	"strings"

	"github.com/reasonix/reasonix/internal/text"
)

// Brief renders a call as one readable line: the tool and the subject
// the tool itself named. Every front end names calls this way, so a line
// in the TUI reads like the same call in the text output.
func (t *Tool) Brief() string {
	if t.Subject == "" {
		return t.Name
	}
	return t.Name + " " + text.Clip(strings.ReplaceAll(t.Subject, "\n", " "), 120)
}
