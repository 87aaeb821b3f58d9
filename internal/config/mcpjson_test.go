package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPluginsMergeByNameAcrossLayers(t *testing.T) {
	f := newFixture(t)
	f.env["TOKEN"] = "tok"
	f.write(f.userFile, `
[[plugins]]
name = "gh"
command = "gh-mcp"
env = { GITHUB_TOKEN = "${TOKEN}" }
timeout_ms = 5000

[[plugins]]
name = "web"
type = "http"
url = "https://mcp.example/${MISSING:-v1}"
tools = { allow = ["search*"], deny = ["search_admin"] }
`)
	f.write(f.wsFile, `
[[plugins]]
name = "gh"
args = ["--read-only"]
enabled = false
`)
	l := f.load()
	ps := l.Config.Plugins
	if len(ps) != 2 {
		t.Fatalf("plugins = %+v", ps)
	}
	gh, web := ps[0], ps[1]
	if gh.Command != "gh-mcp" || gh.Args[0] != "--read-only" || gh.On() || gh.TimeoutMS != 5000 || gh.Env["GITHUB_TOKEN"] != "tok" {
		t.Errorf("gh = %+v", gh)
	}
	if web.URL != "https://mcp.example/v1" || web.Tools.Allow[0] != "search*" || web.Tools.Deny[0] != "search_admin" || !web.On() {
		t.Errorf("web = %+v", web)
	}
	if l.Sources["plugins.gh.args"] != f.wsFile || l.Sources["plugins.gh.command"] != f.userFile {
		t.Errorf("sources = %v", l.Sources)
	}
	d := l.Describe(true)
	for _, want := range []string{"[[plugins]]", `tools = { allow = ["search*"], deny = ["search_admin"] }`, `env = { GITHUB_TOKEN = "****" }`, "enabled = false"} {
		if !strings.Contains(d, want) {
			t.Errorf("describe lacks %q:\n%s", want, d)
		}
	}
}

func TestPluginErrorsNameFileLineAndKey(t *testing.T) {
	f := newFixture(t)
	f.write(f.wsFile, `
[[plugins]]
name = "a"
type = "grpc"
command = "x"

[[plugins]]
command = "c"
timeout_ms = "5s"
`)
	_, err := Load(f.opts())
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`reasonix.toml:4: key "plugins[0].type": invalid value "grpc"`,
		`reasonix.toml:7: key "plugins[1]": plugin has no name`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	// What only the merged entry can tell (a layer may add the url).
	f.write(f.wsFile, "[[plugins]]\nname = \"a\"\ncommand = \"x\"\n\n[[plugins]]\nname = \"b\"\ntype = \"http\"\n")
	_, err = Load(f.opts())
	if err == nil || !strings.Contains(err.Error(), `reasonix.toml:5: key "plugins[1]": plugin "b" is of type "http" but has no url`) {
		t.Errorf("merged check: %v", err)
	}
}

func TestMCPServersFromJSONFiles(t *testing.T) {
	f := newFixture(t)
	userHome := t.TempDir()
	f.write(f.wsFile, "[[plugins]]\nname = \"shared\"\ncommand = \"from-toml\"\n")
	f.write(filepath.Join(f.ws, MCPFile), `{"mcpServers": {
  "shared": {"command": "from-json"},
  "sentry": {"type": "http", "url": "https://mcp.sentry.dev/mcp", "headers": {"Authorization": "Bearer ${SENTRY_TOKEN}"}},
  "fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "${WORK:-/tmp}"], "env": {"K": "${DEEPSEEK_API_KEY}"}},
  "remote": {"type": "streamable-http", "url": "https://x"}
}}`)
	f.write(filepath.Join(userHome, ".claude.json"), `{"mcpServers": {"fs": {"command": "user-fs"}, "userwide": {"command": "u"}},
  "projects": {"`+f.ws+`": {"mcpServers": {"local": {"command": "l"}}}}}`)
	l := f.load()
	env := func(k string) string {
		return map[string]string{"SENTRY_TOKEN": "st", "DEEPSEEK_API_KEY": "sk-123456789"}[k]
	}
	got, err := MCPServers(l.Config, l.Sources, f.ws, userHome, env, []string{"DEEPSEEK_API_KEY"})
	// The withheld key is named, not fatal: the server is still listed.
	if err == nil || err.Error() != filepath.Join(f.ws, MCPFile)+": mcpServers.fs: env.K uses ${DEEPSEEK_API_KEY}, a provider key, which a JSON-file server never gets (it expands to nothing)" {
		t.Fatalf("err = %v", err)
	}
	by := map[string]MCPServer{}
	var order []string
	for _, s := range got {
		by[s.Name] = s
		order = append(order, s.Name)
	}
	if strings.Join(order, ",") != "shared,fs,remote,sentry,local,userwide" {
		t.Fatalf("order = %v", order)
	}
	if by["shared"].Command != "from-toml" || !by["shared"].Project {
		t.Errorf("reasonix.toml must win: %+v", by["shared"])
	}
	if s := by["sentry"]; s.Headers["Authorization"] != "Bearer st" || !s.Project || s.Type != "http" {
		t.Errorf("sentry = %+v", s)
	}
	if s := by["fs"]; s.Command != "npx" || s.Args[2] != "/tmp" || s.Env["K"] != "" {
		t.Errorf("fs = %+v (the project file wins over ~/.claude.json; provider keys never expand)", s)
	}
	if by["remote"].Type != "http" || !by["local"].Project || by["userwide"].Project {
		t.Errorf("remote %+v local %+v userwide %+v", by["remote"], by["local"], by["userwide"])
	}
}

func TestMCPJSONErrorsNameTheFile(t *testing.T) {
	f := newFixture(t)
	p := filepath.Join(f.ws, MCPFile)
	f.write(p, "{\n  \"mcpServers\": {\n    \"a\": {\"command\": }\n  }\n}")
	_, err := MCPServers(Default(), nil, f.ws, "", nil, nil)
	if err == nil || !strings.Contains(err.Error(), p+":3:") {
		t.Fatalf("err = %v", err)
	}
	f.write(p, `{"mcpServers": {"a": {"args": ["x"]}, "b": {"command": "ok"}}}`)
	got, err := MCPServers(Default(), nil, f.ws, "", func(string) string { return "" }, nil)
	if err == nil || !strings.Contains(err.Error(), "mcpServers.a: server has no command") || len(got) != 1 || got[0].Name != "b" {
		t.Fatalf("got %+v, err %v", got, err)
	}
	if err := os.Remove(p); err != nil {
		t.Fatal(err)
	}
	if got, err := MCPServers(Default(), nil, f.ws, "", nil, nil); err != nil || len(got) != 0 {
		t.Fatalf("no file: %v %v", got, err)
	}
}

// A ${VAR} without a default that is not set is named with its server and
// field (it expands to nothing, and the server is still listed); one with
// a default, a set one and a $${literal} are not.
func TestMCPJSONUnsetVariablesAreNamed(t *testing.T) {
	f := newFixture(t)
	p := filepath.Join(f.ws, MCPFile)
	f.write(p, `{"mcpServers": {"posthog": {"command": "npx", "args": ["-y", "mcp-remote", "--header", "Authorization:${AUTH}", "$${KEEP}", "${NOPE}"],
  "env": {"AUTH": "Bearer ${POSTHOG_KEY}", "B": "${SET}", "C": "${GONE:-x}"}}}}`)
	env := func(k string) string { return map[string]string{"SET": "1"}[k] }
	got, err := MCPServers(Default(), nil, f.ws, "", env, nil)
	if len(got) != 1 || got[0].Name != "posthog" {
		t.Fatalf("got %+v", got)
	}
	// ${AUTH} in an argument is the server's own env variable: it stays
	// for the server (mcp-remote) to expand.
	if args := strings.Join(got[0].Args, " "); args != "-y mcp-remote --header Authorization:${AUTH} ${KEEP} " {
		t.Errorf("args = %q", args)
	}
	want := p + ": mcpServers.posthog: args[5] uses ${NOPE}, which is not set (it expands to nothing)\n" +
		p + ": mcpServers.posthog: env.AUTH uses ${POSTHOG_KEY}, which is not set (it expands to nothing)"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

// A remote server's hand-registered OAuth client: oauth.* in
// [[plugins]] (the secret expanded, hidden by describe, the port checked)
// and Claude Code's oauth.clientId / callbackPort / scopes in .mcp.json.
func TestPluginOAuthClient(t *testing.T) {
	f := newFixture(t)
	f.env["GH_SECRET"] = "very-secret"
	f.write(f.wsFile, `
[[plugins]]
name = "gh"
type = "http"
url = "https://api.example/mcp"
oauth = { client_id = "Iv1.abc", client_secret = "${GH_SECRET}", callback_port = 8765, scopes = ["repo", "read:org"] }
`)
	f.write(filepath.Join(f.ws, MCPFile), `{"mcpServers": {"linear": {"type": "http", "url": "https://l.example/mcp",
  "oauth": {"clientId": "lin-1", "callbackPort": 9000, "scopes": "read write"}}}}`)
	l := f.load()
	gh := l.Config.Plugins[0]
	if gh.OAuth.ClientID != "Iv1.abc" || gh.OAuth.ClientSecret != "very-secret" || gh.OAuth.CallbackPort != 8765 || strings.Join(gh.OAuth.Scopes, " ") != "repo read:org" {
		t.Errorf("gh oauth = %+v", gh.OAuth)
	}
	d := l.Describe(true)
	if strings.Contains(d, "very-secret") || !strings.Contains(d, `"Iv1.abc"`) {
		t.Errorf("describe shows the secret or hides the id:\n%s", d)
	}
	got, err := MCPServers(l.Config, l.Sources, f.ws, "", func(string) string { return "" }, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range got {
		if s.Name == "linear" && (s.OAuth.ClientID != "lin-1" || s.OAuth.CallbackPort != 9000 || strings.Join(s.OAuth.Scopes, ",") != "read,write" || s.OAuth.ClientSecret != "") {
			t.Errorf("linear oauth = %+v", s.OAuth)
		}
	}
	f.write(f.wsFile, "[[plugins]]\nname = \"gh\"\ntype = \"http\"\nurl = \"https://x\"\noauth = { callback_port = 70000 }\n")
	if _, err := Load(f.opts()); err == nil || !strings.Contains(err.Error(), "callback_port") {
		t.Errorf("port out of range: %v", err)
	}
}
