package main

import (
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// TestE2EEmptyStdinPromptSaysSo: `reasonix run -` (and -p -) with nothing
// on stdin is a usage error that says stdin was empty, not that a prompt
// is missing (the person gave "-"), and calls no model.
func TestE2EEmptyStdinPromptSaysSo(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "should not be asked"})
	for _, args := range [][]string{{"run", "-"}, {"-p", "-"}} {
		r := e.run(" \n\n", args...)
		if r.code != 2 {
			t.Fatalf("%v exit %d, want 2: %s", args, r.code, r.stderr)
		}
		if !strings.Contains(r.stderr, "stdin was empty") || strings.Contains(r.stderr, "needs a PROMPT") {
			t.Errorf("%v stderr does not say stdin was empty: %s", args, r.stderr)
		}
	}
	if n := len(e.srv.Requests()); n != 0 {
		t.Errorf("%d model requests for an empty prompt", n)
	}
}
