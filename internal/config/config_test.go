package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"
)

// fixture is a home directory and a workspace in a temp dir, with an
// environment that holds only what the test sets.
type fixture struct {
	t         *testing.T
	home, ws  string
	env       map[string]string
	flagFile  string
	userFile  string
	wsFile    string
	extraFile string
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	root := t.TempDir()
	f := &fixture{t: t, home: filepath.Join(root, "home"), ws: filepath.Join(root, "ws"), env: map[string]string{}}
	for _, d := range []string{f.home, f.ws} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.userFile = filepath.Join(f.home, UserFile)
	f.wsFile = filepath.Join(f.ws, ProjectFile)
	f.extraFile = filepath.Join(root, "flag.toml")
	return f
}

func (f *fixture) write(path, text string) {
	f.t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

// opts are the fixture's load options. The person trusts the project
// file as it is now (TrustProject), so these tests see all it sets; the
// settings an untrusted project may not make are trust_test.go's.
func (f *fixture) opts() Options {
	_, _ = TrustProject(f.home, f.ws)
	return Options{Workspace: f.ws, Home: f.home, File: f.flagFile, Env: func(k string) string { return f.env[k] }}
}

func (f *fixture) load() *Loaded {
	f.t.Helper()
	l, err := Load(f.opts())
	if err != nil {
		f.t.Fatalf("Load: %v", err)
	}
	return l
}

func (f *fixture) loadErr() string {
	f.t.Helper()
	_, err := Load(f.opts())
	if err == nil {
		f.t.Fatal("Load succeeded, want an error")
	}
	return err.Error()
}

const deepseekProvider = `
[[providers]]
name = "deepseek"
base_url = "https://api.deepseek.com/v1"
api_key_env = "DEEPSEEK_API_KEY"
model = "deepseek-chat"
`

func TestDefaultsWithoutFiles(t *testing.T) {
	f := newFixture(t)
	l := f.load()
	if !reflect.DeepEqual(l.Config, Default()) {
		t.Fatalf("config without files = %+v, want defaults", l.Config)
	}
	if len(l.Files) != 0 {
		t.Errorf("Files = %v, want none", l.Files)
	}
	if l.Sources["agent.max_steps"] != SourceDefault || l.Sources["sandbox.bash"] != SourceDefault {
		t.Errorf("default sources missing: %v", l.Sources)
	}
	if l.Home != f.home {
		t.Errorf("Home = %q, want %q", l.Home, f.home)
	}
}

func TestPrecedenceAcrossLayers(t *testing.T) {
	f := newFixture(t)
	f.write(f.userFile, deepseekProvider+`
[agent]
max_steps = 10
planner_max_steps = 5
max_parallel = 2
`)
	f.write(f.wsFile, `
[agent]
max_steps = 20
max_parallel = 3
`)
	f.write(f.extraFile, `
[agent]
max_steps = 30
`)

	// Without a flag the project file wins over the user file.
	l := f.load()
	a := l.Config.Agent
	if a.MaxSteps != 20 || a.MaxParallel != 3 || a.PlannerMaxSteps != 5 || a.GoalMaxTurns != 20 {
		t.Fatalf("agent = %+v, want max_steps 20, max_parallel 3, planner_max_steps 5, goal_max_turns 20", a)
	}
	if got := l.Sources["agent.max_steps"]; got != f.wsFile {
		t.Errorf("source of agent.max_steps = %q, want %q", got, f.wsFile)
	}
	if got := l.Sources["agent.planner_max_steps"]; got != f.userFile {
		t.Errorf("source of agent.planner_max_steps = %q, want %q", got, f.userFile)
	}
	if !slices.Equal(l.Files, []string{f.userFile, f.wsFile}) {
		t.Errorf("Files = %v", l.Files)
	}

	// The flag file, given through REASONIX_CONFIG, wins over both.
	f.env[EnvConfig] = f.extraFile
	l = f.load()
	if l.Config.Agent.MaxSteps != 30 || l.Config.Agent.MaxParallel != 3 {
		t.Fatalf("agent = %+v, want max_steps 30 from the flag file, max_parallel 3", l.Config.Agent)
	}
	if got := l.Sources["agent.max_steps"]; got != f.extraFile {
		t.Errorf("source of agent.max_steps = %q, want %q", got, f.extraFile)
	}

	// An explicit file takes the place of REASONIX_CONFIG and must exist.
	f.flagFile = filepath.Join(f.ws, "missing.toml")
	if msg := f.loadErr(); !strings.Contains(msg, "missing.toml") {
		t.Errorf("error for a missing --config file = %q, want it to name the file", msg)
	}
}

func TestFlagNamingProjectFileIsReadOnce(t *testing.T) {
	f := newFixture(t)
	f.write(f.wsFile, "[permissions]\nallow = [\"Read\"]\n")
	f.flagFile = f.wsFile
	l := f.load()
	if len(l.Files) != 1 {
		t.Errorf("Files = %v, want the project file once", l.Files)
	}
}

func TestEnvModelOverridesDefaultModel(t *testing.T) {
	f := newFixture(t)
	f.write(f.userFile, `default_model = "deepseek"`+"\n"+deepseekProvider)
	f.env[EnvModel] = "deepseek/deepseek-reasoner"
	l := f.load()
	if l.Config.DefaultModel != "deepseek/deepseek-reasoner" {
		t.Errorf("default_model = %q", l.Config.DefaultModel)
	}
	if got := l.Sources["default_model"]; got != "env REASONIX_MODEL" {
		t.Errorf("source = %q, want env REASONIX_MODEL", got)
	}
}

func TestListsConcatenateAcrossLayers(t *testing.T) {
	f := newFixture(t)
	f.write(f.userFile, `
[permissions]
allow = ["Read", "Bash(go test:*)"]
deny = ["Bash(rm:*)"]
[sandbox]
allow_read = ["/etc"]
[skills]
paths = ["~/skills"]
[tools]
disabled = ["web_fetch"]
`)
	f.write(f.wsFile, `
[permissions]
allow = ["Bash(go test:*)", "Edit(docs/**)"]
[skills]
paths = ["./skills", "~/skills"]
[tools]
disabled = ["bash"]
`)
	f.write(f.extraFile, `
[permissions]
allow = ["Bash(make:*)"]
`)
	f.flagFile = f.extraFile
	l := f.load()
	p := l.Config.Permissions
	if want := []string{"Read", "Bash(go test:*)", "Edit(docs/**)", "Bash(make:*)"}; !slices.Equal(p.Allow, want) {
		t.Errorf("allow = %q, want %q", p.Allow, want)
	}
	if !slices.Equal(p.Deny, []string{"Bash(rm:*)"}) {
		t.Errorf("deny = %q", p.Deny)
	}
	if want := []string{"~/skills", "./skills"}; !slices.Equal(l.Config.Skills.Paths, want) {
		t.Errorf("skills.paths = %q, want %q", l.Config.Skills.Paths, want)
	}
	if !slices.Equal(l.Config.Sandbox.AllowRead, []string{"/etc"}) {
		t.Errorf("sandbox.allow_read = %q", l.Config.Sandbox.AllowRead)
	}
	// Lists outside the accumulating set are replaced by the higher layer.
	if !slices.Equal(l.Config.Tools.Disabled, []string{"bash"}) {
		t.Errorf("tools.disabled = %q, want the project's list only", l.Config.Tools.Disabled)
	}
	want := f.userFile + " + " + f.wsFile + " + " + f.extraFile
	if got := l.Sources["permissions.allow"]; got != want {
		t.Errorf("source of permissions.allow = %q, want %q", got, want)
	}
}

func TestProvidersMergeByName(t *testing.T) {
	f := newFixture(t)
	f.write(f.userFile, `
[[providers]]
name = "deepseek"
base_url = "https://api.deepseek.com/v1"
api_key_env = "DEEPSEEK_API_KEY"
model = "deepseek-chat"
headers = { "X-A" = "1", "X-B" = "user" }
timeout = "10m"

[[providers]]
name = "qwen"
base_url = "https://dashscope.aliyuncs.com/compatible-mode/v1"
model = "qwen-plus"
`)
	f.write(f.wsFile, `
[[providers]]
name = "deepseek"
model = "deepseek-reasoner"
thinking = "enabled"

[providers.headers]
"X-B" = "project"

[[providers]]
name = "local"
base_url = "http://localhost:8000/v1"
models = ["a", "b"]
default = "b"
`)
	l := f.load()
	ps := l.Config.Providers
	var names []string
	for _, p := range ps {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, []string{"deepseek", "qwen", "local"}) {
		t.Fatalf("providers = %v, want deepseek, qwen, local", names)
	}
	ds := ps[0]
	if ds.Model != "deepseek-reasoner" || ds.BaseURL != "https://api.deepseek.com/v1" || ds.Thinking != "enabled" || ds.Timeout != 10*time.Minute {
		t.Errorf("merged deepseek = %+v", ds)
	}
	if want := map[string]string{"X-A": "1", "X-B": "project"}; !reflect.DeepEqual(ds.Headers, want) {
		t.Errorf("headers = %v, want %v", ds.Headers, want)
	}
	if got := l.Sources["providers.deepseek.model"]; got != f.wsFile {
		t.Errorf("source of deepseek model = %q", got)
	}
	if got := l.Sources["providers.deepseek.base_url"]; got != f.userFile {
		t.Errorf("source of deepseek base_url = %q", got)
	}
	if got := l.Sources["providers.deepseek.headers.X-B"]; got != f.wsFile {
		t.Errorf("source of header X-B = %q", got)
	}
}

func TestSubagentModelsMergeByKey(t *testing.T) {
	f := newFixture(t)
	f.write(f.userFile, deepseekProvider+`
[agent]
subagent_models = { explore = "deepseek-chat", general = "deepseek-chat" }
`)
	f.write(f.wsFile, `
[agent.subagent_models]
explore = "deepseek/deepseek-reasoner"
`)
	l := f.load()
	want := map[string]string{"explore": "deepseek/deepseek-reasoner", "general": "deepseek-chat"}
	if !reflect.DeepEqual(l.Config.Agent.SubagentModels, want) {
		t.Errorf("subagent_models = %v, want %v", l.Config.Agent.SubagentModels, want)
	}
}

func TestExpand(t *testing.T) {
	env := func(k string) string {
		return map[string]string{"HOST": "example.com", "EMPTY": ""}[k]
	}
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"https://${HOST}/v1", "https://example.com/v1"},
		{"${MISSING}", ""},
		{"${MISSING:-fallback}", "fallback"},
		{"${EMPTY:-fallback}", "fallback"},
		{"${HOST:-fallback}", "example.com"},
		{"${HOST}${HOST}", "example.comexample.com"},
		{"$HOST stays", "$HOST stays"},
		{"$${HOST} is literal", "${HOST} is literal"},
		{"${not a name}", "${not a name}"},
		{"unterminated ${HOST", "unterminated ${HOST"},
	}
	for _, c := range cases {
		if got := Expand(c.in, env); got != c.want {
			t.Errorf("Expand(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestExpandInFiles(t *testing.T) {
	f := newFixture(t)
	f.write(f.userFile, `
[[providers]]
name = "local"
base_url = "${LLM_URL:-http://localhost:8000/v1}"
model = "${LLM_MODEL}"
headers = { "X-Team" = "${TEAM:-none}" }

[permissions]
allow = ["Edit(${PROJ}/**)"]
`)
	f.env["LLM_MODEL"] = "qwen3"
	f.env["PROJ"] = "src"
	l := f.load()
	p := l.Config.Providers[0]
	if p.BaseURL != "http://localhost:8000/v1" || p.Model != "qwen3" || p.Headers["X-Team"] != "none" {
		t.Errorf("expanded provider = %+v", p)
	}
	if !slices.Equal(l.Config.Permissions.Allow, []string{"Edit(src/**)"}) {
		t.Errorf("allow = %q", l.Config.Permissions.Allow)
	}
	f.env["LLM_URL"] = "http://gpu:9000/v1"
	if got := f.load().Config.Providers[0].BaseURL; got != "http://gpu:9000/v1" {
		t.Errorf("base_url = %q, want the environment's", got)
	}
}

func TestErrorsNameFileLineAndKey(t *testing.T) {
	cases := []struct {
		name, text string
		want       []string
	}{
		{"wrong type", "# comment\n\n[agent]\nmax_parallel = 2\n\nmax_steps = \"fifty\"\n",
			[]string{ProjectFile + `:6: key "agent.max_steps": expected integer, got string`}},
		{"unknown key", "[agent]\nmax_steps = 3\nmax_stpes = 4\n",
			[]string{ProjectFile + `:3: key "agent.max_stpes": unknown key`, "max_steps"}},
		{"unknown top-level key", "\n\nmodel = \"x\"\n",
			[]string{ProjectFile + `:3: key "model": unknown key`}},
		{"syntax error", "[agent]\nmax_steps = = 3\n",
			[]string{ProjectFile + ":2:"}},
		{"bad mode", "[permissions]\n\nmode = \"sometimes\"\n",
			[]string{ProjectFile + `:3: key "permissions.mode": invalid value "sometimes"`, `"ask", "allow", "auto", "deny", "yolo"`}},
		{"bad sandbox bash", "[sandbox]\nbash = \"maybe\"\n",
			[]string{`:2: key "sandbox.bash": invalid value "maybe"`}},
		{"max_parallel range", "[agent]\nmax_parallel = 11\n",
			[]string{`:2: key "agent.max_parallel": 11 is out of range: want 1..10`}},
		{"bad duration", "[tools]\nbash_timeout = \"two minutes\"\n",
			[]string{`:2: key "tools.bash_timeout": invalid duration "two minutes"`}},
		{"duration as number", "[tools]\nbash_timeout = 120\n",
			[]string{`:2: key "tools.bash_timeout": expected duration string such as "120s", got integer`}},
		{"bad list element", "[permissions]\nallow = [\"Read\",\n  3]\n",
			[]string{`:2: key "permissions.allow[1]": expected string, got integer`}},
		{"bad permission rule", "[permissions]\nallow = [\"Read\",\n  \"Bsh(ls:*)\"]\n",
			[]string{`:2: key "permissions.allow[1]": permission rule "Bsh(ls:*)": unknown tool family`}},
		{"bad deny pattern", "[permissions]\n\ndeny = [\"Edit(../x/**)\"]\n",
			[]string{`:3: key "permissions.deny[0]": permission rule "Edit(../x/**)"`, "'..' is not allowed"}},
		{"bad dangerous pattern", "[permissions]\ndangerous = [\"npm ** publish\"]\n",
			[]string{`:2: key "permissions.dangerous[0]": permission rule "Bash(npm ** publish)": a wildcard is only allowed at the end`}},
		{"bad thinking", deepseekProvider + "thinking = \"on\"\n",
			[]string{`:7: key "providers[0].thinking": invalid value "on"`}},
		{"unknown provider key in second entry", deepseekProvider + `
[[providers]]
name = "b"
base_url = "http://b"
model = "m"
modle = "m2"
`, []string{`:12: key "providers[1].modle": unknown key`}},
		{"provider timeout in sub-table line", deepseekProvider + "timeout = \"soon\"\n",
			[]string{`:7: key "providers[0].timeout": invalid duration "soon"`}},
		{"duplicate provider", deepseekProvider + deepseekProvider,
			[]string{`:8: key "providers[1]": duplicate provider name "deepseek" (also defined at line 2)`}},
		{"nameless provider", "[[providers]]\nbase_url = \"http://x\"\n",
			[]string{`:1: key "providers[0]": provider has no name`}},
		{"missing base_url", "\n[[providers]]\nname = \"x\"\nmodel = \"m\"\n",
			[]string{`:2: key "providers[0]": provider "x" has no base_url`}},
		{"missing model", "[[providers]]\nname = \"x\"\nbase_url = \"http://x\"\n",
			[]string{`provider "x" has no model`}},
		{"scripted without script", "[[providers]]\nname = \"s\"\nkind = \"scripted\"\nmodel = \"m\"\n",
			[]string{`provider "s" is of kind "scripted" but has no script`}},
		{"unknown default model", deepseekProvider + "\n", nil},
		{"timeouts inverted", "[tools]\nbash_timeout = \"10m\"\nbash_max_timeout = \"1m\"\n",
			[]string{`:3: key "tools.bash_max_timeout": 1m0s is less than tools.bash_timeout (10m0s)`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			text := c.text
			if c.want == nil {
				// A default_model that names nothing configured.
				text = "default_model = \"gpt-9\"\n" + text
				c.want = []string{ProjectFile + `:1: key "default_model": model "gpt-9" not found`}
			}
			f.write(f.wsFile, text)
			msg := f.loadErr()
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error\n  %s\nwant it to contain\n  %s", msg, w)
				}
			}
			if !strings.Contains(msg, f.wsFile) {
				t.Errorf("error %q does not name the file %s", msg, f.wsFile)
			}
		})
	}
}

func TestSyntaxErrorIsTyped(t *testing.T) {
	f := newFixture(t)
	f.write(f.userFile, "a = 1\nb = = 2\nc = 3\n")
	_, err := Load(f.opts())
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("error %v is not a *config.Error", err)
	}
	var pe *toml.DecodeError
	if !errors.As(err, &pe) {
		t.Errorf("error %v does not wrap the toml.DecodeError", err)
	}
	if ce.File != f.userFile || ce.Line != 2 || ce.Col == 0 {
		t.Errorf("error location = %s:%d:%d, want %s:2:<col>", ce.File, ce.Line, ce.Col, f.userFile)
	}
}

func TestAllErrorsOfAFileAreReported(t *testing.T) {
	f := newFixture(t)
	f.write(f.wsFile, "[agent]\nmax_steps = \"x\"\nmax_parallel = 0\nbogus = 1\n")
	msg := f.loadErr()
	for _, w := range []string{`:2: key "agent.max_steps"`, `:3: key "agent.max_parallel"`, `:4: key "agent.bogus"`} {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q lacks %q", msg, w)
		}
	}
}

func TestBaseURLSynthesizesProvider(t *testing.T) {
	f := newFixture(t)
	f.write(f.userFile, deepseekProvider)
	f.env[EnvBaseURL] = "http://localhost:8000/v1"
	f.env[EnvModel] = "qwen3-coder"
	f.env[EnvAPIKey] = "sk-env"
	l := f.load()
	ps := l.Config.Providers
	if len(ps) != 2 {
		t.Fatalf("providers = %+v, want deepseek plus env", ps)
	}
	env := ps[1]
	if env.Name != "env" || env.Kind != "openai" || env.BaseURL != "http://localhost:8000/v1" || env.Model != "qwen3-coder" || env.APIKey != "sk-env" {
		t.Errorf("synthesized provider = %+v", env)
	}
	if l.Config.DefaultModel != "env" {
		t.Errorf("default_model = %q, want env", l.Config.DefaultModel)
	}
	if got := l.Sources["providers.env.base_url"]; got != "env REASONIX_BASE_URL" {
		t.Errorf("source = %q", got)
	}
	pcs, err := l.Config.ProviderConfigs(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	if pcs[1].APIKey != "sk-env" || pcs[1].DefaultModel != "qwen3-coder" {
		t.Errorf("provider config = %+v", pcs[1])
	}

	// Without a model the synthesized provider is unusable: say so.
	delete(f.env, EnvModel)
	if msg := f.loadErr(); !strings.Contains(msg, EnvModel) {
		t.Errorf("error %q should mention %s", msg, EnvModel)
	}
}

func TestBaseURLMatchingAConfiguredProvider(t *testing.T) {
	f := newFixture(t)
	f.write(f.userFile, deepseekProvider+`
[[providers]]
name = "local"
base_url = "http://localhost:8000/v1"
models = ["a", "b"]
`)
	f.env[EnvBaseURL] = "http://localhost:8000/v1/"
	f.env[EnvModel] = "b"
	f.env[EnvAPIKey] = "sk-env"
	l := f.load()
	if len(l.Config.Providers) != 2 {
		t.Fatalf("a provider was synthesized although one has that URL: %+v", l.Config.Providers)
	}
	if l.Config.DefaultModel != "local/b" {
		t.Errorf("default_model = %q, want local/b", l.Config.DefaultModel)
	}
	if l.Config.Providers[1].APIKey != "sk-env" || l.Config.Providers[0].APIKey != "" {
		t.Errorf("REASONIX_API_KEY went to the wrong provider: %+v", l.Config.Providers)
	}
}

func TestAPIKeyAppliesToDefaultProviderWithoutKey(t *testing.T) {
	f := newFixture(t)
	f.write(f.userFile, `default_model = "qwen"`+"\n"+deepseekProvider+`
[[providers]]
name = "qwen"
base_url = "https://dashscope.aliyuncs.com/compatible-mode/v1"
api_key_env = "DASHSCOPE_API_KEY"
model = "qwen-plus"
`)
	f.env[EnvAPIKey] = "sk-env"
	l := f.load()
	if l.Config.Providers[1].APIKey != "sk-env" || l.Config.Providers[0].APIKey != "" {
		t.Fatalf("providers = %+v, want the key on qwen only", l.Config.Providers)
	}
	if got := l.Sources["providers.qwen.api_key"]; got != "env REASONIX_API_KEY" {
		t.Errorf("source = %q", got)
	}

	// A provider whose own key variable is set keeps its key.
	f.env["DASHSCOPE_API_KEY"] = "sk-own"
	l = f.load()
	if l.Config.Providers[1].APIKey != "" {
		t.Errorf("api_key = %q, want it left empty so DASHSCOPE_API_KEY applies", l.Config.Providers[1].APIKey)
	}
	pcs, err := l.Config.ProviderConfigs(func(k string) string { return f.env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if pcs[1].APIKey != "sk-own" {
		t.Errorf("resolved key = %q, want sk-own", pcs[1].APIKey)
	}
}

func TestProviderConfigs(t *testing.T) {
	c := &Config{Providers: []Provider{
		{Name: "ds", BaseURL: "https://d/v1", APIKeyEnv: "DS_KEY", Models: []string{"chat", "reasoner"}, Default: "reasoner",
			Headers: map[string]string{"X": "1"}, Timeout: time.Minute, ContextWindow: intp(1000), Thinking: "enabled", ReasoningEffort: "high", MaxAttempts: 2},
		{Name: "one", BaseURL: "https://o/v1", APIKey: "inline", Model: "m"},
		{Name: "s", Kind: "scripted", Script: "/tmp/s.json", Model: "x"},
	}}
	pcs, err := c.ProviderConfigs(func(k string) string { return map[string]string{"DS_KEY": "sk-ds"}[k] })
	if err != nil {
		t.Fatal(err)
	}
	ds := pcs[0]
	if ds.Kind != "openai" || ds.APIKey != "sk-ds" || ds.APIKeyEnv != "DS_KEY" || ds.DefaultModel != "reasoner" ||
		!slices.Equal(ds.Models, []string{"chat", "reasoner"}) || ds.Timeout != time.Minute || ds.ContextWindow != 1000 ||
		ds.Thinking != "enabled" || ds.ReasoningEffort != "high" || ds.MaxAttempts != 2 || ds.Headers["X"] != "1" {
		t.Errorf("ds = %+v", ds)
	}
	if pcs[1].APIKey != "inline" || pcs[1].DefaultModel != "m" || !slices.Equal(pcs[1].Models, []string{"m"}) {
		t.Errorf("one = %+v", pcs[1])
	}
	if pcs[2].Kind != "scripted" || pcs[2].Script != "/tmp/s.json" {
		t.Errorf("s = %+v", pcs[2])
	}
	// The copy must not alias the config's map.
	pcs[0].Headers["X"] = "changed"
	if c.Providers[0].Headers["X"] != "1" {
		t.Error("ProviderConfigs shares the headers map with the config")
	}

	c.Providers = append(c.Providers, Provider{Name: "ds", BaseURL: "x", Model: "y"})
	if _, err := c.ProviderConfigs(nil); err == nil || !strings.Contains(err.Error(), `"ds"`) {
		t.Errorf("duplicate names: err = %v", err)
	}
}

func floatp(f float64) *float64 { return &f }
func boolp(b bool) *bool        { return &b }

func TestPricesReachProviderConfigs(t *testing.T) {
	f := newFixture(t)
	f.write(f.wsFile, `[[providers]]
name = "p"
base_url = "http://p"
models = ["a", "b"]
price = { input_miss = 1.5, output = 2 }
[providers.model_prices.b]
input_hit = 0.5
`)
	pcs, err := f.load().Config.ProviderConfigs(nil)
	if err != nil {
		t.Fatal(err)
	}
	pa, ok := pcs[0].PriceFor("a")
	if !ok || pa.InputMiss != 1.5 || pa.Output != 2 || pa.InputHit != 0 || pa.Currency != "USD" {
		t.Errorf("price of a = %+v, %v", pa, ok)
	}
	if pb, _ := pcs[0].PriceFor("b"); pb.InputHit != 0.5 || pb.Output != 0 {
		t.Errorf("price of b = %+v (model_prices replaces the provider's price)", pb)
	}
	f.write(f.wsFile, "[[providers]]\nname = \"p\"\nbase_url = \"http://p\"\nmodel = \"a\"\nprice = { input_hit = \"cheap\" }\n")
	if msg := f.loadErr(); !strings.Contains(msg, `key "providers[0].price.input_hit": expected number, got string`) {
		t.Errorf("bad price: %s", msg)
	}
}

func TestScriptPathIsRelativeToItsFile(t *testing.T) {
	f := newFixture(t)
	f.write(f.wsFile, "[[providers]]\nname = \"s\"\nkind = \"scripted\"\nscript = \"testdata/demo.json\"\nmodel = \"m\"\n")
	l := f.load()
	if want := filepath.Join(f.ws, "testdata", "demo.json"); l.Config.Providers[0].Script != want {
		t.Errorf("script = %q, want %q", l.Config.Providers[0].Script, want)
	}
}

func TestTemperatureAcceptsIntegersAndFloats(t *testing.T) {
	f := newFixture(t)
	if f.load().Config.Agent.Temperature != nil {
		t.Fatal("temperature set without configuration")
	}
	f.write(f.userFile, "[agent]\ntemperature = 1\n")
	if tp := f.load().Config.Agent.Temperature; tp == nil || *tp != 1 {
		t.Errorf("temperature = %v", tp)
	}
	f.write(f.userFile, "[agent]\ntemperature = 0.2\n")
	if tp := f.load().Config.Agent.Temperature; tp == nil || *tp != 0.2 {
		t.Errorf("temperature = %v", tp)
	}
}

func TestEveryKeyDecodes(t *testing.T) {
	// One file setting every key guards the reflection decoder against a
	// schema field of a type it does not handle.
	f := newFixture(t)
	f.write(f.wsFile, `
default_model = "p"
language = "zh"
credentials_store = "file"
instructions = ["docs/rules.md"]
[agent]
max_steps = 7
planner_model = "p/plan"
planner_max_steps = 3
subagent_model = "p/sub"
subagent_models = { explore = "p/x" }
max_parallel = 10
plan_isolation = "files"
goal_max_turns = 2
temperature = 0.5
plan_write_window = "90s"
system_prompt = "be brief"
system_prompt_file = "p.md"
reasoning_language = "en"
budget = 0.25
[[providers]]
name = "p"
kind = "openai"
base_url = "http://p"
api_key = "k"
api_key_env = "P_KEY"
model = "m"
models = ["m", "n"]
default = "n"
headers = { A = "b" }
timeout = "1s"
context_window = 9
thinking = "disabled"
reasoning_effort = "low"
max_attempts = 1
script = ""
price = { input_hit = 0.1, input_miss = 1, output = 2, currency = "CNY" }
flatten_schemas = false
[providers.model_prices.n]
output = 3.5
[tools]
output_limit = 5
bash_timeout = "1s"
bash_max_timeout = "2s"
disabled = ["x"]
enabled = ["read_file"]
bash_timeout_seconds = 0
[tools.shell]
prefer = "bash"
path = "/bin/bash"
[permissions]
mode = "yolo"
allow = ["a"]
ask = ["b"]
deny = ["c"]
dangerous = ["d"]
[sandbox]
workspace_root = "/w"
allow_read = ["/r"]
allow_write = ["/x"]
network = true
bash = "off"
[skills]
paths = ["s"]
excluded_paths = ["e"]
disabled_skills = ["z"]
`)
	l := f.load()
	temp := 0.5
	want := &Config{
		DefaultModel: "p",
		Instructions: []string{"docs/rules.md"},
		Agent: Agent{MaxSteps: 7, PlannerModel: "p/plan", PlannerMaxSteps: 3, SubagentModel: "p/sub",
			SubagentModels: map[string]string{"explore": "p/x"}, MaxParallel: 10, PlanIsolation: "files", GoalMaxTurns: 2, Temperature: &temp,
			PlanWriteWindow: 90 * time.Second, SystemPrompt: "be brief", SystemPromptFile: "p.md", ReasoningLanguage: "en",
			Budget: floatp(0.25)},
		Providers: []Provider{{Name: "p", Kind: "openai", BaseURL: "http://p", APIKey: "k", APIKeyEnv: "P_KEY", Model: "m",
			Models: []string{"m", "n"}, Default: "n", Headers: map[string]string{"A": "b"}, Timeout: time.Second,
			ContextWindow: intp(9), Thinking: "disabled", ReasoningEffort: "low", MaxAttempts: 1,
			Price:       Price{InputHit: floatp(0.1), InputMiss: floatp(1), Output: floatp(2), Currency: "CNY"},
			ModelPrices: map[string]Price{"n": {Output: floatp(3.5)}}, FlattenSchemas: boolp(false)}},
		Tools: Tools{OutputLimit: 5, BashTimeout: time.Second, BashMaxTimeout: 2 * time.Second, Disabled: []string{"x"},
			Enabled: []string{"read_file"}, BashTimeoutSeconds: intp(0), Shell: Shell{Prefer: "bash", Path: "/bin/bash"}},
		Language: "zh", CredentialsStore: "file",
		Permissions: Permissions{Mode: "yolo", Allow: []string{"a"}, Ask: []string{"b"}, Deny: []string{"c"}, Dangerous: []string{"d"}},
		Sandbox:     Sandbox{WorkspaceRoot: "/w", AllowRead: []string{"/r"}, AllowWrite: []string{"/x"}, Network: true, Bash: "off"},
		Skills:      Skills{Paths: []string{"s"}, ExcludedPaths: []string{"e"}, DisabledSkills: []string{"z"}},
	}
	if !reflect.DeepEqual(l.Config, want) {
		t.Errorf("decoded\n%+v\nwant\n%+v", l.Config, want)
	}
}

func TestDescribeShowsSourcesAndRedacts(t *testing.T) {
	f := newFixture(t)
	f.write(f.userFile, `
[[providers]]
name = "deepseek"
base_url = "https://api.deepseek.com/v1"
api_key = "sk-very-secret"
model = "deepseek-chat"
headers = { Authorization = "Bearer tok-123", "X-Api-Key" = "k-456", "X-Team" = "blue" }
timeout = "10m"
`)
	f.write(f.wsFile, "[agent]\nmax_steps = 7\ntemperature = 1\n[permissions]\nallow = [\"Read\"]\n")
	l := f.load()
	out := l.Describe(true)
	for _, w := range []string{
		"temperature = 1.0  # from " + f.wsFile,
		"max_steps = 7  # from " + f.wsFile,
		"goal_max_turns = 20  # from default",
		`bash_timeout = "2m"  # from default`,
		`allow = ["Read"]  # from ` + f.wsFile,
		`mode = "ask"  # from default`,
		"[[providers]]",
		`name = "deepseek"  # from ` + f.userFile,
		`api_key = "****"  # from ` + f.userFile,
		`timeout = "10m"  # from ` + f.userFile,
		`X-Team = "blue"`,
		`Authorization = "****"`,
		`X-Api-Key = "****"`,
	} {
		if !strings.Contains(out, w) {
			t.Errorf("Describe output lacks %q:\n%s", w, out)
		}
	}
	for _, secret := range []string{"sk-very-secret", "tok-123", "k-456"} {
		if strings.Contains(out, secret) {
			t.Errorf("redacted output leaks %q", secret)
		}
	}
	if plain := l.Describe(false); !strings.Contains(plain, "sk-very-secret") || !strings.Contains(plain, "tok-123") {
		t.Errorf("unredacted output hides values:\n%s", plain)
	}
	// The description is TOML (comments aside), so it can be loaded back.
	back := filepath.Join(t.TempDir(), "back.toml")
	if err := os.WriteFile(back, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	g := newFixture(t)
	g.flagFile = back
	if got := g.load().Config.Agent.MaxSteps; got != 7 {
		t.Errorf("reloaded max_steps = %d", got)
	}
}

func TestDefaultFile(t *testing.T) {
	f := newFixture(t)
	f.write(f.userFile, defaultFile)
	l := f.load()
	if !reflect.DeepEqual(l.Config, Default()) {
		t.Errorf("the default file sets values: %+v", l.Config)
	}

	// Enabling every commented setting must give a valid configuration
	// with all the example providers.
	var lines []string
	for _, line := range strings.Split(defaultFile, "\n") {
		if strings.HasPrefix(line, "## ") {
			continue
		}
		lines = append(lines, strings.TrimPrefix(line, "# "))
	}
	f.write(f.userFile, strings.Join(lines, "\n"))
	l = f.load()
	var names []string
	for _, p := range l.Config.Providers {
		names = append(names, p.Name)
	}
	if !slices.Equal(names, []string{"deepseek", "qwen", "mimo", "openai", "local"}) {
		t.Errorf("providers = %v", names)
	}
	if l.Config.Providers[4].BaseURL != "http://localhost:8000/v1" {
		t.Errorf("local base_url = %q", l.Config.Providers[4].BaseURL)
	}
	if _, err := l.Config.ProviderConfigs(func(string) string { return "" }); err != nil {
		t.Error(err)
	}
}

func TestAddProvider(t *testing.T) {
	path := filepath.Join(t.TempDir(), "home", UserFile)
	deepseek := NewProvider{Name: "deepseek", BaseURL: "https://api.deepseek.com/v1", KeyEnv: "DEEPSEEK_API_KEY",
		Models: []string{"deepseek-chat", "deepseek-reasoner"}, Default: "deepseek-chat", ContextWindow: 128000}
	if err := AddProvider(path, deepseek, false); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t)
	load := func() *Config {
		t.Helper()
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		f.write(f.userFile, string(data))
		return f.load().Config
	}
	c := load()
	if c.DefaultModel != "deepseek" || len(c.Providers) != 1 || c.Providers[0].APIKeyEnv != "DEEPSEEK_API_KEY" ||
		*c.Providers[0].ContextWindow != 128000 || c.Providers[0].Default != "deepseek-chat" {
		t.Fatalf("first provider: %+v", c)
	}
	// A hand-edited file with a table and no default_model keeps every
	// byte and gains the provider; default_model goes before the tables.
	mine := "[agent]\nmax_steps = 9 # mine\n"
	if err := os.WriteFile(path, []byte(mine), 0o644); err != nil {
		t.Fatal(err)
	}
	local := NewProvider{Name: "box", BaseURL: "http://localhost:8000/v1", Key: "sk-typed", Default: "m"}
	if err := AddProvider(path, local, false); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if !strings.Contains(string(data), mine) {
		t.Errorf("the user's lines changed:\n%s", data)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("a file holding a key has mode %v", fi.Mode().Perm())
	}
	c = load()
	if c.DefaultModel != "box" || c.Agent.MaxSteps != 9 || c.Providers[0].APIKey != "sk-typed" {
		t.Fatalf("after adding: %+v", c)
	}
	if err := AddProvider(path, local, false); !errors.Is(err, ErrProviderExists) {
		t.Errorf("same name again: %v", err)
	}
	if err := os.WriteFile(path, []byte("[agent\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := AddProvider(path, local, false); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("broken file: %v", err)
	}
	if err := AddProvider(path, deepseek, true); err != nil {
		t.Fatal(err)
	}
	if c = load(); len(c.Providers) != 1 || c.Providers[0].Name != "deepseek" {
		t.Errorf("replace: %+v", c.Providers)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

func TestHome(t *testing.T) {
	dir := t.TempDir()
	h, err := Home(func(k string) string { return map[string]string{EnvHome: dir + "/"}[k] })
	if err != nil || h != dir {
		t.Errorf("Home = %q, %v; want %q", h, err, dir)
	}
	// Load resolves the home the same way when Options.Home is empty.
	if err := os.WriteFile(filepath.Join(dir, UserFile), []byte("[agent]\nmax_steps = 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Load(Options{Env: func(k string) string { return map[string]string{EnvHome: dir}[k] }})
	if err != nil {
		t.Fatal(err)
	}
	if l.Home != dir || l.Config.Agent.MaxSteps != 3 {
		t.Errorf("home %q, max_steps %d", l.Home, l.Config.Agent.MaxSteps)
	}
}

func TestNoProviderHelp(t *testing.T) {
	msg := NoProviderHelp("/h/.reasonix")
	for _, w := range []string{EnvBaseURL, EnvAPIKey, EnvModel, "reasonix setup --provider deepseek", "DEEPSEEK_API_KEY",
		filepath.Join("/h/.reasonix", UserFile), "reasonix demo"} {
		if !strings.Contains(msg, w) {
			t.Errorf("help lacks %q:\n%s", w, msg)
		}
	}
}

func TestPlanWriteWindow(t *testing.T) {
	f := newFixture(t)
	if got := f.load().Config.Agent.PlanWriteWindow; got != 10*time.Minute {
		t.Errorf("default plan_write_window = %v, want 10m", got)
	}
	f.write(f.wsFile, "[agent]\nplan_write_window = \"0s\"\n")
	if got := f.load().Config.Agent.PlanWriteWindow; got != 0 {
		t.Errorf("plan_write_window \"0s\" = %v, want 0 (off)", got)
	}
	f.write(f.wsFile, "[agent]\nplan_write_window = \"-1m\"\n")
	if msg := f.loadErr(); !strings.Contains(msg, "agent.plan_write_window") || !strings.Contains(msg, "negative") {
		t.Errorf("negative window: %q", msg)
	}
	f.write(f.wsFile, "[agent]\nplan_write_window = 600\n")
	if msg := f.loadErr(); !strings.Contains(msg, "reasonix.toml:2") || !strings.Contains(msg, "duration") {
		t.Errorf("integer window: %q", msg)
	}
}

func TestInstructionsConcatAndEmptyEntryLocated(t *testing.T) {
	f := newFixture(t)
	f.write(f.userFile, "instructions = [\"~/rules.md\"]\n")
	f.write(f.wsFile, "instructions = [\"docs/a.md\"]\n")
	l := f.load()
	if want := []string{"~/rules.md", "docs/a.md"}; !slices.Equal(l.Config.Instructions, want) {
		t.Errorf("instructions = %q, want %q", l.Config.Instructions, want)
	}
	f.write(f.wsFile, "default_model = \"\"\ninstructions = [\"a.md\", \"\"]\n")
	_, err := Load(f.opts())
	if err == nil || !strings.Contains(err.Error(), f.wsFile+`:2: key "instructions[1]": empty path`) {
		t.Errorf("err = %v", err)
	}
	f.write(f.wsFile, "instructions = \"a.md\"\n")
	_, err = Load(f.opts())
	if err == nil || !strings.Contains(err.Error(), `key "instructions": expected array of strings, got string`) {
		t.Errorf("err = %v", err)
	}
}

func intp(n int) *int { return &n }

func TestHomeOnWindowsIsAppData(t *testing.T) {
	app := t.TempDir()
	env := func(k string) string {
		if k == "APPDATA" {
			return app
		}
		return ""
	}
	t.Setenv("HOME", t.TempDir()) // no legacy ~/.reasonix
	if h, err := home(env, "windows"); err != nil || h != filepath.Join(app, "reasonix") {
		t.Errorf("windows home = %q, %v", h, err)
	}
	if h, _ := home(env, "linux"); !strings.HasSuffix(h, ".reasonix") {
		t.Errorf("linux home = %q", h)
	}
	withHome := func(k string) string {
		if k == "REASONIX_HOME" {
			return "/x/rh"
		}
		return env(k)
	}
	if h, _ := home(withHome, "windows"); h != filepath.Clean("/x/rh") {
		t.Errorf("REASONIX_HOME ignored: %q", h)
	}
}

func TestDotEnvFillsExpansionNotReasonixVars(t *testing.T) {
	f := newFixture(t)
	f.write(filepath.Join(f.ws, ".env"), "# keys\nexport MY_URL=http://from-dotenv/v1\nREASONIX_BASE_URL=http://evil/v1\nQUOTED=\"a b\" \nBAD LINE\n")
	l0, err := Load(Options{Workspace: f.ws, Home: f.home, Env: func(string) string { return "" }})
	if err != nil || len(l0.DotEnvSkipped) != 1 || l0.DotEnvSkipped[0] != 5 || l0.Getenv("QUOTED") != "a b" {
		t.Fatalf("a line that is not KEY=VALUE is skipped and named: %v %+v", err, l0)
	}
	f.write(filepath.Join(f.ws, ".env"), "export MY_URL=http://from-dotenv/v1\nREASONIX_BASE_URL=http://evil/v1\nMY_KEY='k-123'\n")
	// The person's own file takes ${VAR} from the environment only: a
	// .env a repository brings must not redirect their provider. The
	// project's file takes it from the .env too.
	f.write(f.userFile, "[[providers]]\nname = \"p\"\nbase_url = \"${MY_URL:-http://own/v1}\"\nmodel = \"m\"\napi_key_env = \"MY_KEY\"\n")
	f.write(filepath.Join(f.ws, ProjectFile), "instructions = [\"${MY_URL}\"]\n")
	l, err := Load(Options{Workspace: f.ws, Home: f.home, Env: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Config.Providers[0].BaseURL; got != "http://own/v1" {
		t.Errorf("the user's base_url took the .env's value: %q", got)
	}
	if got := l.Config.Instructions; len(got) != 1 || got[0] != "http://from-dotenv/v1" {
		t.Errorf("the project's instructions did not take the .env's value: %q", got)
	}
	if l.Getenv("MY_KEY") != "k-123" || l.Getenv("REASONIX_BASE_URL") != "" {
		t.Errorf("Getenv: key %q, base %q", l.Getenv("MY_KEY"), l.Getenv("REASONIX_BASE_URL"))
	}
	if os.Getenv("MY_KEY") != "" {
		t.Error(".env leaked into the process environment")
	}
}

// CredentialsStore reads the one file on its own: a default_model that no
// provider of the file serves is no fault there, a bad value is, with its
// line.
func TestCredentialsStoreOfOneFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, UserFile)
	env := func(string) string { return "" }
	if got, err := CredentialsStore(path, env); err != nil || got != "auto" {
		t.Fatalf("no file: %q %v", got, err)
	}
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("default_model = \"deepseek\"\ncredentials_store = \"file\"\n")
	if got, err := CredentialsStore(path, env); err != nil || got != "file" {
		t.Fatalf("file: %q %v", got, err)
	}
	write("theme = \"dark\"\ncredentials_store = \"vault\"\n")
	_, err := CredentialsStore(path, env)
	var ce *Error
	if !errors.As(err, &ce) || ce.File != path || ce.Line != 2 || ce.Key != "credentials_store" {
		t.Fatalf("bad value: %#v (%v)", ce, err)
	}
}
