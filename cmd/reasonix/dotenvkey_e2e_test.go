//go:build linux

package main

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/providers/scripted"
)

// An API key Reasonix reads from the workspace's .env (api_key_env) is
// out of every command's reach, however the command encodes what it
// reads or escapes, while the rest of the file still reaches the
// project's tools; the file tools' results carry it masked.
func TestE2EDotEnvAPIKeyOutOfCommandsReach(t *testing.T) {
	t.Parallel()
	needSandbox(t)
	const key = "sk-dotenv-canary-4e1f9a"
	bin := hideEscape(t)
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{
			bashCall(`cat .env; base64 -w0 .env; echo; rev < .env; grep -c dotenv-canary .env; cp .env copy.txt && od -c copy.txt | head -3`),
			bashCall("k=nv; " + bin + " .e$k"),
			bashCall(`echo appended >> .env; echo "exit=$?"`),
			call("read_file", map[string]any{"path": ".env"}),
		}},
		scripted.Turn{Text: "done"},
	)
	e.env = withoutEnv(e.env, "REASONIX_API_KEY")
	e.writeUserConfig(`[[providers]]
name = "main"
base_url = "` + e.srv.URL() + `"
api_key_env = "RX_DOTENV_KEY"
model = "test-model"
`)
	e.write(".env", "# app settings\nAPP_MODE=visible-setting\nexport RX_DOTENV_KEY="+key+"\nDB_HOST=localhost\n")
	if ok, why := permission.HidingAvailable(); !ok {
		t.Skipf("the sandbox cannot hide files here: %s", why)
	}
	if d := e.run("", "doctor"); !strings.Contains(d.stdout, "commands read it without the lines of RX_DOTENV_KEY") {
		t.Errorf("doctor does not say it:\n%s", d.stdout)
	}
	msgs := e.lastMessages("run", "--yolo", "look around")
	for _, leak := range []string{key, "sk-dotenv", "9a1e4f", strings.TrimRight(base64.StdEncoding.EncodeToString([]byte("RX_DOTENV_KEY="+key)), "=")[8:40]} {
		if strings.Contains(msgs, leak) {
			t.Errorf("the key reached the model (%q):\n%s", leak, msgs)
		}
	}
	res := toolResults(t, e.srv.Requests()[1])
	if !strings.Contains(res["call_0_0"], "APP_MODE=visible-setting") || !strings.Contains(res["call_0_0"], "DB_HOST=localhost") {
		t.Errorf("the rest of .env did not reach the command: %s", res["call_0_0"])
	}
	if !strings.Contains(res["call_0_1"], "escape-done") {
		t.Errorf("the hostile command did not run through: %s", res["call_0_1"])
	}
	if got := e.read(".env"); !strings.Contains(got, key) || strings.Contains(got, "appended") {
		t.Errorf(".env on disk = %q, want it whole and unchanged", got)
	}
	// The run itself used the key.
	if auth := e.srv.Received()[0].Header.Get("Authorization"); auth != "Bearer "+key {
		t.Errorf("the provider got %q", auth)
	}
}
