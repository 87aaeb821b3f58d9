package tui

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/reasonix/reasonix/events"
)

func floatp(f float64) *float64 { return &f }

// deployForm is a request for input with a field of each kind.
func deployForm() events.Elicitation {
	return events.Elicitation{Server: "live", Message: "Deploy to which environment?", Mode: events.ElicitForm, Fields: []events.ElicitField{
		{Name: "env", Title: "Environment", Type: "string", Required: true, Default: "stg",
			Options: []events.ElicitOption{{Value: "stg", Title: "Staging"}, {Value: "prod", Title: "Production"}}},
		{Name: "owner", Title: "Owner", Type: "string", Format: "email", Required: true, Description: "who is paged"},
		{Name: "canary", Title: "Canary first", Type: "boolean"},
		{Name: "checks", Title: "Checks", Type: "array", Options: []events.ElicitOption{{Value: "lint"}, {Value: "test"}}},
		{Name: "replicas", Type: "integer", Minimum: floatp(1), Maximum: floatp(5), Default: 2.0},
	}}
}

type elicitResult struct {
	a   events.ElicitAnswer
	err error
}

func (h *harness) elicit(e events.Elicitation) chan elicitResult {
	ch := make(chan elicitResult, 1)
	go func() {
		a, err := h.broker.Elicit(context.Background(), "", e)
		ch <- elicitResult{a, err}
	}()
	return ch
}

func awaitAnswer(t *testing.T, ch chan elicitResult) events.ElicitAnswer {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.a
	case <-time.After(5 * time.Second):
		t.Fatal("the request for input was not answered")
	}
	return events.ElicitAnswer{}
}

// A form names its server and warns about secrets; Tab moves between the
// fields, a bad value is refused in place with the reason, Enter sends
// what was filled in, Esc cancels and the Decline button declines.
func TestElicitationForm(t *testing.T) {
	h := start(t, Options{})
	got := h.elicit(deployForm())
	h.waitFor("input for MCP server live", "MCP server live asks: Deploy to which environment?", "Do not enter passwords",
		"Environment*", "Staging", "Owner*", "[ ] lint", "[ ] test", "replicas", "2", "Submit", "Decline", "Cancel")
	h.key(tcell.KeyDown) // opens the list on Production
	h.key(tcell.KeyEnter)
	h.waitFor("Production")
	h.key(tcell.KeyTab)
	h.waitFor("who is paged · an email address")
	h.typeText("not-an-address")
	h.key(tcell.KeyEnter)
	h.waitFor("Owner: must be an email address")
	h.key(tcell.KeyCtrlU) // the focus is back on the bad field
	h.typeText("ops@example.com")
	h.key(tcell.KeyTab) // canary
	h.rune(' ')
	h.key(tcell.KeyTab) // checks: lint
	h.rune(' ')
	h.key(tcell.KeyTab) // checks: test
	h.key(tcell.KeyTab) // replicas
	h.key(tcell.KeyCtrlU)
	h.typeText("3")
	h.waitFor("[x] lint")
	h.key(tcell.KeyEnter)
	a := awaitAnswer(t, got)
	b, _ := json.Marshal(a)
	if string(b) != `{"action":"accept","content":{"canary":true,"checks":["lint"],"env":"prod","owner":"ops@example.com","replicas":3}}` {
		t.Fatalf("answer %s", b)
	}
	waitGone(t, h, "input for MCP server live")

	got = h.elicit(deployForm())
	h.waitFor("input for MCP server live")
	h.key(tcell.KeyEscape)
	if a := awaitAnswer(t, got); a.Action != events.ElicitCancel {
		t.Fatalf("Esc: %+v", a)
	}
	waitGone(t, h, "input for MCP server live")

	got = h.elicit(deployForm())
	h.waitFor("input for MCP server live")
	h.key(tcell.KeyBacktab) // from the first field round to Cancel
	h.key(tcell.KeyBacktab) // Decline
	h.key(tcell.KeyEnter)
	if a := awaitAnswer(t, got); a.Action != events.ElicitDecline {
		t.Fatalf("Decline: %+v", a)
	}
}

// An address is shown whole with its site, opened only on o; a site
// name that can imitate another is warned about; d declines.
func TestElicitationOpenURL(t *testing.T) {
	var mu sync.Mutex
	var opened []string
	h := start(t, Options{OpenURL: func(u string) {
		mu.Lock()
		opened = append(opened, u)
		mu.Unlock()
	}})
	got := h.elicit(events.Elicitation{Server: "cal", Message: "Link your calendar", Mode: events.ElicitURL, URL: "https://auth.example.com/link?id=7"})
	s := h.waitFor("input for MCP server cal", "MCP server cal asks: Link your calendar", "https://auth.example.com/link?id=7", "site auth.example.com", "o open in the browser")
	if strings.Contains(s, "Careful") || strings.Contains(s, "Do not enter passwords") {
		t.Fatalf("warned about a plain address:\n%s", s)
	}
	mu.Lock()
	if len(opened) != 0 {
		t.Fatalf("opened before the person agreed: %v", opened)
	}
	mu.Unlock()
	h.rune('o')
	if a := awaitAnswer(t, got); a.Action != events.ElicitAccept || a.Content != nil {
		t.Fatalf("o: %+v", a)
	}
	h.waitFor("opening https://auth.example.com/link?id=7 in the browser")
	mu.Lock()
	if len(opened) != 1 || opened[0] != "https://auth.example.com/link?id=7" {
		t.Fatalf("opened %v", opened)
	}
	mu.Unlock()

	got = h.elicit(events.Elicitation{Server: "cal", Message: "Sign in", Mode: events.ElicitURL, URL: "http://xn--pple-43d.com/login"})
	h.waitFor("Careful: the site's name uses letters that can imitate", "the address is not encrypted (http)")
	h.rune('d')
	if a := awaitAnswer(t, got); a.Action != events.ElicitDecline {
		t.Fatalf("d: %+v", a)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(opened) != 1 {
		t.Fatalf("a declined address was opened: %v", opened)
	}
}
