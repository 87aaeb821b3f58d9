//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers/scripted"
)

// The tokens other tools keep as plain text in the home, and browser
// profiles (cookies of every site the person is signed in to), are on the
// built-in read deny list: neither a confined command nor a file tool
// reads them.
func TestE2EDenyListKeepsTokensAndBrowserProfiles(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	const canary = "canary-4e1d-token"
	files := []string{".git-credentials", ".config/gh/hosts.yml", ".mozilla/firefox/p.default/cookies.sqlite",
		".config/google-chrome/Default/Cookies", ".azure/msal_token_cache.json", ".pypirc"}
	var calls []scripted.Call
	for _, f := range files {
		calls = append(calls, bashCall("cat ~/"+f+"; echo probe-ran"), call("read_file", map[string]any{"path": "~/" + f}))
	}
	// What sits beside them stays readable.
	calls = append(calls, bashCall("cat ~/.config/other/settings.ini"))
	e := newE2E(t, scripted.Turn{ToolCalls: calls}, scripted.Turn{Text: "done"})
	root := filepath.Dir(e.home)
	for _, f := range append(files, ".config/other/settings.ini") {
		p := filepath.Join(root, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		content := canary
		if strings.Contains(f, "other") {
			content = "beside-ok"
		}
		if err := os.WriteFile(p, []byte(content+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e.lastMessages("run", "--yolo", "look")
	body := string(e.srv.Requests()[1])
	if strings.Contains(body, canary) {
		t.Errorf("a token or browser profile reached the model:\n%s", body)
	}
	res := toolResults(t, e.srv.Requests()[1])
	for i := range files {
		if r := res["call_0_"+strconv.Itoa(2*i)]; !strings.Contains(r, "probe-ran") {
			t.Errorf("%s: the command did not run through: %s", files[i], r)
		}
	}
	if r := res["call_0_"+strconv.Itoa(2*len(files))]; !strings.Contains(r, "beside-ok") {
		t.Errorf("a file beside the denied ones is not readable: %s", r)
	}
}
