package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/internal/nodetest"
	"github.com/reasonix/reasonix/providers/scripted"
)

// In the terminal, a server's request for input is a form naming the
// server: the person picks, types and ticks, a bad address is refused in
// place, Enter sends, and the server gets exactly what was filled in.
func TestTUIMCPElicitationForm(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("mcp__live__deploy", map[string]any{})}},
		scripted.Turn{Text: "Deployed as asked."},
	)
	e.writeUserConfig(liveServerConfig(t))
	tt := startTUI(t, e, "chat")
	waitRunning(tt, "live  running")
	tt.typeLine("deploy it")
	tt.waitFor("input for MCP server live", "MCP server live asks: Deploy to which environment?",
		"Do not enter passwords", "Environment*", "Staging", "Owner*", "[ ] lint", "Submit", "Decline", "Cancel")
	tt.keys("Down", "Enter") // Production
	tt.waitFor("Production")
	tt.keys("Tab")
	tt.waitFor("who is paged · an email address")
	tt.tmux("send-keys", "-t", "rx", "-l", "ops at example")
	tt.keys("Enter")
	tt.waitFor("Owner: must be an email address")
	tt.keys("C-u")
	tt.tmux("send-keys", "-t", "rx", "-l", "ops@example.com")
	tt.keys("Tab", "Space", "Tab", "Tab", "Space") // canary; checks: lint skipped, test ticked
	tt.waitFor("[x] test")
	tt.keys("Enter")
	s := tt.waitFor("Deployed as asked.")
	if strings.Contains(s, "input for MCP server live") {
		t.Errorf("the form stayed open:\n%s", s)
	}
	reqs := e.srv.Requests()
	if msgs := string(messagesOf(t, reqs[len(reqs)-1])); !strings.Contains(msgs,
		`answer: accept {\"canary\":true,\"checks\":[\"test\"],\"env\":\"prod\",\"owner\":\"ops@example.com\",\"replicas\":2}`) {
		t.Errorf("the server did not get the form's values:\n%s", msgs)
	}
	tt.quit()
}

// overlayRows is the text inside the overlay's border on screen, a row
// each, from its first row to its last.
func overlayRows(screen string) []string {
	var rows []string
	for _, r := range strings.Split(screen, "\n") {
		// The border is double while the overlay has the focus.
		_, in, ok := strings.Cut(r, "║ ")
		if !ok {
			continue
		}
		if i := strings.LastIndex(in, " ║"); i >= 0 {
			in = in[:i]
		}
		rows = append(rows, strings.TrimRight(in, " "))
	}
	return rows
}

// headerError is "" when rows show the form's header whole, in n rows
// (the request's words, then the warning's, ending "in a form."), with
// the form's first field on the next row; else what is wrong.
func headerError(rows []string, n int) string {
	start := slices.IndexFunc(rows, func(r string) bool { return strings.HasPrefix(r, "MCP server live asks:") })
	field := slices.IndexFunc(rows, func(r string) bool { return strings.HasPrefix(r, "Environment*") })
	if start < 0 || field < 0 {
		return fmt.Sprintf("no header or no first field in %q", rows)
	}
	head := rows[start:field]
	var words []string
	for _, r := range head {
		words = append(words, strings.Fields(r)...)
	}
	want := "MCP server live asks: Deploy to which environment? Do not enter passwords, API keys or other secrets: servers may not ask for them in a form."
	if got := strings.Join(words, " "); got != want {
		return fmt.Sprintf("the header reads %q, want %q", got, want)
	}
	if len(head) != n {
		return fmt.Sprintf("the header takes %d rows, want %d: %q", len(head), n, head)
	}
	return ""
}

// The form's header (who asks, what for, the warning about secrets) is
// wrapped again when the terminal is resized: narrower, it takes more
// rows and every word still shows; wider again, it takes its two rows
// and the fields follow right under it.
func TestTUIMCPElicitationFormHeaderReflowsOnResize(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("mcp__live__deploy", map[string]any{})}},
		scripted.Turn{Text: "Not deployed."},
	)
	e.writeUserConfig(liveServerConfig(t))
	tt := startTUI(t, e, "chat")
	waitRunning(tt, "live  running")
	tt.typeLine("deploy it")
	tt.waitFor("input for MCP server live", "Environment*", "Submit")
	tt.waitLayout("at 120 columns", func(s string) string { return headerError(overlayRows(s), 2) })
	// At 60 columns the overlay has 46 inside its border: the request
	// continues under its text (2 rows), the warning takes 3.
	tt.tmux("resize-window", "-t", "rx", "-x", "60", "-y", "40")
	tt.waitLayout("resized to 60 columns", func(s string) string { return headerError(overlayRows(s), 5) })
	tt.tmux("resize-window", "-t", "rx", "-x", "120", "-y", "40")
	tt.waitLayout("resized to 120 columns again", func(s string) string { return headerError(overlayRows(s), 2) })
	tt.keys("Escape")
	s := tt.waitFor("Not deployed.")
	if strings.Contains(s, "input for MCP server live") {
		t.Errorf("the form stayed open:\n%s", s)
	}
	tt.quit()
}

// everythingConfig runs the npm reference server "everything" as "ev".
func everythingConfig(t *testing.T) string {
	return fmt.Sprintf(`
[[plugins]]
name = "ev"
command = "node"
args = [%q, "stdio"]
timeout_ms = 60000

[permissions]
allow = ["mcp__ev__*"]
`, npmServer(t, "server-everything"))
}

// The reference server's own form (every kind of field) and its address
// requests, driven over stream-json: the values typed reach the server,
// an address is accepted without Reasonix opening anything, and a call
// that needs a step in the browser first tells the model so.
func TestE2EStreamJSONEverythingElicitation(t *testing.T) {
	t.Parallel()
	everythingConfig(t) // skips without the package
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("mcp__ev__trigger-elicitation-request", map[string]any{})}},
		scripted.Turn{Text: "form done"},
		scripted.Turn{ToolCalls: []scripted.Call{call("mcp__ev__trigger-url-elicitation", map[string]any{"url": "https://example.com/connect", "message": "Connect your account"})}},
		scripted.Turn{Text: "url done"},
		scripted.Turn{ToolCalls: []scripted.Call{call("mcp__ev__trigger-url-elicitation", map[string]any{"url": "https://example.com/pay", "errorPath": true})}},
		scripted.Turn{Text: "needs a step"},
	)
	// A browser that records what it is asked to open: nothing may be.
	opened := filepath.Join(t.TempDir(), "opened")
	browser := filepath.Join(t.TempDir(), "browser.sh")
	if err := os.WriteFile(browser, []byte("#!/bin/sh\necho \"$1\" >> "+opened+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	e.env = append(e.env, "BROWSER="+browser)
	e.writeUserConfig(everythingConfig(t))
	c := startStream(t, e)
	asked := typed("elicitation_request")

	c.send(userLine("fill the form"))
	q := c.await("the form", asked)
	if q["server"] != "ev" || q["mode"] != "form" {
		t.Fatalf("request %v", q)
	}
	kinds := map[string]string{}
	for _, f := range q["fields"].([]any) {
		m := f.(map[string]any)
		kinds[fmt.Sprint(m["name"])] = fmt.Sprint(m["type"], " ", m["format"], " ", len(fmt.Sprint(m["options"])) > 5)
	}
	for name, want := range map[string]string{"name": "string <nil> false", "email": "string email false", "birthdate": "string date false",
		"integer": "integer <nil> false", "check": "boolean <nil> false", "titledSingleSelectEnum": "string <nil> true",
		"untitledMultipleSelectEnum": "array <nil> true", "legacyTitledEnum": "string <nil> true"} {
		if kinds[name] != want {
			t.Errorf("field %s is %q, want %q", name, kinds[name], want)
		}
	}
	c.send(map[string]any{"type": "elicitation", "id": q["id"], "action": "accept", "content": map[string]any{
		"name": "Ann Example", "check": true, "email": "ann@example.com", "birthdate": "1990-04-01", "integer": 7,
		"titledSingleSelectEnum": "hero-3", "untitledMultipleSelectEnum": []string{"Piano", "Drums"}, "legacyTitledEnum": "pet-2"}})
	c.await("the form's turn", turnDone)

	c.send(userLine("open the link"))
	q = c.await("the address", asked)
	if q["mode"] != "url" || q["url"] != "https://example.com/connect" || q["message"] != "Connect your account" {
		t.Fatalf("url request %v", q)
	}
	c.send(map[string]any{"type": "elicitation", "id": q["id"], "action": "accept"})
	c.await("the address's turn", turnDone)

	c.send(userLine("pay"))
	q = c.await("the step the call needs", asked)
	if q["mode"] != "url" || q["url"] != "https://modelcontextprotocol.io" {
		t.Fatalf("url-required request %v", q)
	}
	c.send(map[string]any{"type": "elicitation", "id": q["id"], "action": "accept"})
	c.await("the last turn", turnDone)
	c.finish()

	reqs := e.srv.Requests()
	if len(reqs) != 6 {
		t.Fatalf("requests = %d", len(reqs))
	}
	form := string(messagesOf(t, reqs[1]))
	for _, want := range []string{"User provided the requested information", "- Name: Ann Example", "- Agreed to terms: true",
		"- Email: ann@example.com", "- Birthdate: 1990-04-01", "- Favorite Integer: 7", `\"titledSingleSelectEnum\": \"hero-3\"`,
		`\"Piano\",`, `\"legacyTitledEnum\": \"pet-2\"`,
		// Defaults the person did not touch are filled in as the schema
		// says (the SDK applies them).
		`\"firstLine\": \"It was a dark and stormy night.\"`} {
		if !strings.Contains(form, want) {
			t.Errorf("the server's report lacks %q:\n%.4000s", want, form)
		}
	}
	if url := string(messagesOf(t, reqs[3])); !strings.Contains(url, "User completed the URL elicitation flow") {
		t.Errorf("the address was not accepted:\n%.3000s", url)
	}
	if step := string(messagesOf(t, reqs[5])); !strings.Contains(step, "needs a step done in the browser before it can run") ||
		!strings.Contains(step, "The person agreed to open https://modelcontextprotocol.io") {
		t.Errorf("the model was not told about the step:\n%.3000s", step)
	}
	time.Sleep(100 * time.Millisecond)
	if b, err := os.ReadFile(opened); err == nil {
		t.Errorf("stream-json opened an address itself: %s", b)
	}
}

// In the browser, a server's request for input is a dialog with a form:
// a bad address is refused with the reason shown in the dialog, and the
// values submitted reach the server.
func TestE2EServeElicitationInABrowser(t *testing.T) {
	t.Parallel()
	chromium := chromiumPath(t)
	mods := nodetest.Module(t, "playwright-core")
	e := newE2E(t,
		scripted.Turn{Text: "Ready."},
		scripted.Turn{ToolCalls: []scripted.Call{call("mcp__live__deploy", map[string]any{})}},
		scripted.Turn{Text: "Deployed."},
	)
	e.writeUserConfig(liveServerConfig(t))
	_, url, stderr := startServe(t, e)
	shots := artifactDir(t, "serve")
	out := runBrowser(t, "elicit.mjs", url, chromium, mods, shots)
	var rep struct {
		Steps      []string
		Error      string
		FormText   string
		ErrorText  string
		Open       bool
		PageErrors []string
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, out)
	}
	if rep.Error != "" {
		t.Fatalf("in the browser: %s (done: %v; screenshots in %s)\nserve stderr: %s", rep.Error, rep.Steps, shots, stderr.String())
	}
	for _, want := range []string{"MCP server live asks for input", "Deploy to which environment?", "Do not enter passwords", "Environment *", "Owner *", "who is paged"} {
		if !strings.Contains(rep.FormText, want) {
			t.Errorf("the dialog lacks %q:\n%s", want, rep.FormText)
		}
	}
	if !strings.Contains(rep.ErrorText, "owner: must be an email address") || rep.Open {
		t.Errorf("refusal %q; dialog still open after submitting: %v", rep.ErrorText, rep.Open)
	}
	reqs := e.srv.Requests()
	if msgs := string(messagesOf(t, reqs[len(reqs)-1])); !strings.Contains(msgs,
		`answer: accept {\"canary\":false,\"checks\":[\"test\"],\"env\":\"prod\",\"owner\":\"ops@example.com\",\"replicas\":4}`) {
		t.Errorf("the server did not get the form's values:\n%s", msgs)
	}
	if len(rep.PageErrors) > 0 {
		t.Errorf("page errors: %v", rep.PageErrors)
	}
}
