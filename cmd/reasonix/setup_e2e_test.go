package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/internal/credentials"
	"github.com/reasonix/reasonix/providers/scripted"
)

// The README's quick start: a key in the environment, `reasonix setup
// --provider ...`, then a run that reaches the endpoint with that key.
func TestE2ESetupWritesAWorkingConfig(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "hello from the configured provider"})
	url := e.srv.URL()
	e.env = withoutEnv(e.env, "REASONIX_MODEL", "REASONIX_API_KEY", "REASONIX_BASE_URL")
	cfgPath := filepath.Join(e.home, "config.toml")

	// No flag and no key anywhere: nothing to guess, so a usage error
	// that names the flag and the presets.
	r := e.run("", "setup")
	if r.code != 2 || !strings.Contains(r.stderr, "--provider") || !strings.Contains(r.stderr, "openrouter") {
		t.Fatalf("setup with nothing: exit %d %q", r.code, r.stderr)
	}

	// A refused endpoint writes nothing.
	e.env = append(e.env, "DEEPSEEK_API_KEY=sk-test-deepseek")
	r = e.run("", "setup", "--provider", "deepseek", "--base-url", "http://127.0.0.1:9/v1", "--yes")
	if r.code != 1 || !strings.Contains(r.stderr, "cannot reach") {
		t.Fatalf("unreachable endpoint: exit %d %q", r.code, r.stderr)
	}
	if _, err := os.Stat(cfgPath); err == nil {
		t.Fatal("a failed test still wrote the config")
	}

	// No --provider: the preset whose key is in the environment.
	r = e.run("", "setup", "--base-url", url, "--yes")
	if r.code != 0 || !strings.Contains(r.stdout, "provider deepseek") || !strings.Contains(r.stdout, "$DEEPSEEK_API_KEY") {
		t.Fatalf("setup: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	written, _ := os.ReadFile(cfgPath)
	if strings.Contains(string(written), "sk-test-deepseek") || !strings.Contains(string(written), `api_key_env = "DEEPSEEK_API_KEY"`) {
		t.Fatalf("config holds the key or lacks its variable:\n%s", written)
	}
	if fi, err := os.Stat(cfgPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("config mode %v (%v), want 0600", fi.Mode().Perm(), err)
	}

	r = e.run("", "run", "hi")
	if r.code != 0 || !strings.Contains(r.stdout, "hello from the configured provider") {
		t.Fatalf("run with the written config: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	reqs := e.srv.Received()
	if len(reqs) != 1 || reqs[0].Header.Get("Authorization") != "Bearer sk-test-deepseek" || !strings.Contains(string(reqs[0].Body), `"model":"deepseek-chat"`) {
		t.Fatalf("request %d: %q %s", len(reqs), reqs[0].Header.Get("Authorization"), reqs[0].Body)
	}

	// Setup again adds a provider; the model comes from the server's list.
	r = e.run("", "setup", "--provider", "local", "--name", "box", "--base-url", url, "--yes")
	if r.code != 0 || !strings.Contains(r.stdout, "model scripted") {
		t.Fatalf("second provider: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	// The server lists the model's window (vLLM's max_model_len), which
	// no preset knows: written, so the conversation compacts on its own.
	if b, _ := os.ReadFile(cfgPath); !strings.Contains(string(b), "context_window = 32768") {
		t.Errorf("the window the server lists was not written:\n%s", b)
	}
	r = e.run("", "models")
	if r.code != 0 || !strings.Contains(r.stdout, "deepseek/deepseek-chat (default)") || !strings.Contains(r.stdout, "box/scripted") {
		t.Fatalf("models after two setups: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	// The same name twice is refused, and the file keeps both.
	r = e.run("", "setup", "--provider", "local", "--name", "box", "--base-url", url, "--yes")
	if r.code != 2 || !strings.Contains(r.stderr, "--name") {
		t.Fatalf("same name again: exit %d %q", r.code, r.stderr)
	}
	if again, _ := os.ReadFile(cfgPath); strings.Count(string(again), "[[providers]]") != 2 {
		t.Fatalf("file after a refused setup:\n%s", again)
	}
}

// TestTUIFirstRunSetup: `reasonix` with no provider opens the setup
// screen; picking the local preset, pointing it at the scripted endpoint
// and saving writes a working config, and the chat that follows answers
// through it.
func TestTUIFirstRunSetup(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "answered through the new config"})
	url := e.srv.URL()
	e.env = withoutEnv(e.env, "REASONIX_MODEL", "REASONIX_API_KEY", "REASONIX_BASE_URL")
	e.env = append(e.env, "OPENROUTER_API_KEY=sk-or-test")
	tt := startTUI(t, e)
	s := tt.waitFor("Welcome to Reasonix", "Local server", "key found in $OPENROUTER_API_KEY", "$DEEPSEEK_API_KEY not set")
	if !strings.Contains(s, "DeepSeek") {
		t.Errorf("presets:\n%s", s)
	}
	// The list starts on the preset whose key was found; local is next.
	tt.keys("Down", "Enter")
	tt.waitFor("Base URL", "Test and save", "Leave the model empty")
	tt.keys("C-u")
	tt.tmux("send-keys", "-t", "rx", "-l", "http://127.0.0.1:9/v1")
	tt.keys("Tab", "Tab", "Enter")
	tt.waitFor("cannot reach")
	tt.keys("BTab", "BTab", "C-u")
	tt.tmux("send-keys", "-t", "rx", "-l", url)
	tt.keys("Tab", "Tab", "Enter")
	tt.waitFor("Enter sends")
	written, err := os.ReadFile(filepath.Join(e.home, "config.toml"))
	if err != nil || !strings.Contains(string(written), `name = "local"`) || !strings.Contains(string(written), `default = "scripted"`) {
		t.Fatalf("first-run config (%v):\n%s", err, written)
	}
	if !strings.Contains(string(written), "context_window = 32768") {
		t.Errorf("the window the server lists was not written:\n%s", written)
	}
	tt.typeLine("hello")
	tt.waitFor("answered through the new config")
	tt.quit()
}

// TestTUIFirstRunSetupInChinese: with $LANG=zh_CN.UTF-8 (no language
// set elsewhere) the first-run screen is Chinese, its boxes straight at
// 80 columns, and saving the local preset still leads to a working chat.
func TestTUIFirstRunSetupInChinese(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "answered through the new config"})
	e.env = withoutEnv(e.env, "REASONIX_MODEL", "REASONIX_API_KEY", "REASONIX_BASE_URL")
	e.env = append(e.env, "OPENROUTER_API_KEY=sk-or-test", "LANG=zh_CN.UTF-8")
	tt := startTerm(t, e, "欢迎使用 Reasonix")
	tt.tmux("resize-window", "-t", "rx", "-x", "80", "-y", "24")
	tt.waitFrame(80, "尚未配置模型提供方", "本地服务器（vLLM、Ollama、llama.cpp）", "已在 $OPENROUTER_API_KEY 中找到密钥",
		"$DEEPSEEK_API_KEY 未设置：下一步粘贴密钥")
	tt.keys("Down", "Enter")
	tt.waitFrame(80, "API 地址", "测试并保存", "返回", "模型留空则使用服务器列出的第一个。")
	tt.keys("C-u")
	tt.tmux("send-keys", "-t", "rx", "-l", e.srv.URL())
	tt.keys("Tab", "Tab", "Enter")
	tt.waitFor("Enter 发送", "就绪")
	tt.quit()
}

// TestE2ESetupStdinDevNull: stdin from /dev/null (cron, nohup, CI) is a
// character device but no terminal: setup asks nothing, writes the entry
// that reads the key's variable, and says to export it.
func TestE2ESetupStdinDevNull(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.env = withoutEnv(e.env, "REASONIX_MODEL", "REASONIX_API_KEY", "REASONIX_BASE_URL")
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Skipf("no %s: %v", os.DevNull, err)
	}
	defer null.Close()
	cmd := exec.Command(binPath, "setup", "--provider", "deepseek", "--no-test")
	cmd.Dir, cmd.Env, cmd.Stdin = e.repo, e.env, null
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("setup: %v\n%s%s", err, out.String(), errb.String())
	}
	if strings.Contains(errb.String(), "Paste") {
		t.Errorf("setup asked for a key with stdin from %s:\n%s", os.DevNull, errb.String())
	}
	if !strings.Contains(out.String(), "export DEEPSEEK_API_KEY") {
		t.Errorf("setup did not say to export the key:\n%s", out.String())
	}
	cfg, _ := os.ReadFile(filepath.Join(e.home, "config.toml"))
	if !strings.Contains(string(cfg), `api_key_env = "DEEPSEEK_API_KEY"`) {
		t.Errorf("config:\n%s", cfg)
	}
}

// A key pasted into `reasonix setup` at its terminal prompt goes to the
// credential store (here the 0600 file: no Secret Service in the test's
// environment), never into config.toml, and a run finds it there through
// the provider's api_key_env.
func TestE2ESetupKeepsAPastedKeyInTheCredentialStore(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "keyed"})
	var env []string
	for _, kv := range e.env {
		if !strings.HasPrefix(kv, "REASONIX_BASE_URL=") && !strings.HasPrefix(kv, "REASONIX_API_KEY=") && !strings.HasPrefix(kv, "REASONIX_MODEL=") {
			env = append(env, kv)
		}
	}
	e.env = env
	tt := startTerm(t, e, "Paste the key", "setup", "--provider", "deepseek", "--base-url", e.srv.URL(), "--no-test")
	tt.tmux("send-keys", "-t", "rx", "-l", "sk-pasted-0123456789")
	tt.keys("Enter")
	tt.waitFor("key saved in", "EXIT CODE 0")
	b, err := os.ReadFile(filepath.Join(e.home, "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(b)
	if strings.Contains(cfg, "sk-pasted") || !strings.Contains(cfg, `api_key_env = "DEEPSEEK_API_KEY"`) {
		t.Errorf("config.toml holds the key or lacks its variable:\n%s", cfg)
	}
	creds := filepath.Join(e.home, "credentials.json")
	if fi, err := os.Stat(creds); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v %v", fi, err)
	}
	if r := e.run("", "run", "hi"); r.code != 0 || !strings.Contains(r.stdout, "keyed") {
		t.Fatalf("run: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if h := e.srv.Received()[0].Header.Get("Authorization"); h != "Bearer sk-pasted-0123456789" {
		t.Errorf("Authorization %q: the stored key was not used", h)
	}
}

// TestTUIMissingKeyAsked: a configured provider whose key variable is set
// nowhere (a new shell without the export) opens the setup screen for
// that provider alone, asking only for the key; the key typed is tested,
// kept in the credential store (the config file is left as it was), and
// the chat that follows sends it.
func TestTUIMissingKeyAsked(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "answered with the typed key"})
	e.env = withoutEnv(e.env, "REASONIX_MODEL", "REASONIX_API_KEY", "REASONIX_BASE_URL")
	// The file store: the test must not write to a developer's keychain.
	cfg := fmt.Sprintf("default_model = \"sim\"\ncredentials_store = \"file\"\n\n[[providers]]\nname = \"sim\"\nbase_url = %q\napi_key_env = \"SIM_TEST_KEY\"\nmodel = \"test-model\"\n", e.srv.URL())
	cfgPath := filepath.Join(e.home, "config.toml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	tt := startTerm(t, e, "The key of sim is missing")
	tt.waitFor("$SIM_TEST_KEY is set nowhere", "sim · test-model")
	tt.keys("Enter")
	s := tt.waitFor("API key", "Test and save", "Ctrl-C and export the variable")
	if strings.Contains(s, "Base URL") || strings.Contains(s, "Model ") {
		t.Errorf("the form asks for more than the key:\n%s", s)
	}
	tt.keys("Tab", "Enter") // nothing typed
	tt.waitFor("paste the key, or quit and export SIM_TEST_KEY")
	tt.keys("BTab")
	tt.tmux("send-keys", "-t", "rx", "-l", "sk-typed-key")
	tt.keys("Tab", "Enter")
	tt.waitFor("Enter sends")
	tt.typeLine("hello")
	tt.waitFor("answered with the typed key")
	reqs := e.srv.Received()
	if auth := reqs[len(reqs)-1].Header.Get("Authorization"); auth != "Bearer sk-typed-key" {
		t.Errorf("the chat request's Authorization is %q", auth)
	}
	if got, _ := os.ReadFile(cfgPath); string(got) != cfg {
		t.Errorf("the config file changed:\n%s", got)
	}
	if stored, _ := os.ReadFile(filepath.Join(e.home, credentials.File)); !strings.Contains(string(stored), "SIM_TEST_KEY") {
		t.Errorf("the key is not in the credential store file:\n%s", stored)
	}
	tt.quit()
}

// TestTUIMissingKeyAskedInChinese: with $REASONIX_LANG=zh the screen
// asking for the missing key is Chinese, its box straight at 80 columns,
// and the key typed there is kept.
func TestTUIMissingKeyAskedInChinese(t *testing.T) {
	t.Parallel()
	e := newE2E(t, scripted.Turn{Text: "answered with the typed key"})
	e.env = append(withoutEnv(e.env, "REASONIX_MODEL", "REASONIX_API_KEY", "REASONIX_BASE_URL"), "REASONIX_LANG=zh")
	cfg := fmt.Sprintf("default_model = \"sim\"\ncredentials_store = \"file\"\n\n[[providers]]\nname = \"sim\"\nbase_url = %q\napi_key_env = \"SIM_TEST_KEY\"\nmodel = \"test-model\"\n", e.srv.URL())
	if err := os.WriteFile(filepath.Join(e.home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	tt := startTerm(t, e, "缺少 sim 的密钥")
	tt.tmux("resize-window", "-t", "rx", "-x", "80", "-y", "24")
	tt.waitFrame(80, "都没有设置 $SIM_TEST_KEY", "粘贴密钥即可保存到凭据", "Enter 选择 · Ctrl-C 退出", "sim · test-model")
	tt.keys("Enter")
	tt.waitFrame(80, "API 密钥", "测试并保存", "返回")
	tt.keys("Tab", "Enter") // nothing typed
	tt.waitFor("请粘贴密钥，或退出后导出 SIM_TEST_KEY")
	tt.keys("BTab")
	tt.tmux("send-keys", "-t", "rx", "-l", "sk-typed-key")
	tt.keys("Tab", "Enter")
	tt.waitFor("Enter 发送")
	tt.typeLine("hello")
	tt.waitFor("answered with the typed key")
	tt.quit()
}

// TestE2ESetupHonoursCredentialsStore: an existing config that says
// credentials_store = "file" gets a key pasted into `reasonix setup` in
// the 0600 file under the home, even where an OS store is at hand (here a
// stand-in secret-tool on PATH with a session bus named, which "auto"
// would take, as doctor shows first).
func TestE2ESetupHonoursCredentialsStore(t *testing.T) {
	t.Parallel()
	if runtime.GOOS != "linux" {
		t.Skip("the stand-in OS store is secret-tool, which only the Linux build uses")
	}
	e := newE2E(t)
	e.env = withoutEnv(e.env, "REASONIX_MODEL", "REASONIX_API_KEY", "REASONIX_BASE_URL", "PATH", "DBUS_SESSION_BUS_ADDRESS")
	bin := t.TempDir()
	called := filepath.Join(bin, "secret-tool.called")
	fake := "#!/bin/sh\necho \"$@\" >> " + called + "\ncat >> " + called + "\n"
	if err := os.WriteFile(filepath.Join(bin, "secret-tool"), []byte(fake), 0o755); err != nil {
		t.Fatal(err)
	}
	e.env = append(e.env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "DBUS_SESSION_BUS_ADDRESS=unix:path=/nonexistent")
	cfgPath := filepath.Join(e.home, "config.toml")
	existing := "credentials_store = \"auto\"\n\n[[providers]]\nname = \"box\"\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n"
	if err := os.WriteFile(cfgPath, []byte(existing), 0o600); err != nil {
		t.Fatal(err)
	}
	// The premise: with "auto", keys would go to the stand-in keyring.
	if r := e.run("", "doctor"); !strings.Contains(r.stdout, "credentials_store auto: the Secret Service keyring") {
		t.Fatalf("doctor with auto and a secret-tool on PATH: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	existing = strings.Replace(existing, `"auto"`, `"file"`, 1)
	if err := os.WriteFile(cfgPath, []byte(existing), 0o600); err != nil {
		t.Fatal(err)
	}
	tt := startTerm(t, e, "Paste the key", "setup", "--provider", "deepseek", "--no-test")
	tt.tmux("send-keys", "-t", "rx", "-l", "sk-pasted-to-file")
	tt.keys("Enter")
	// The screen wraps the long "key saved in <path>" line; the files say
	// where the key went.
	if s := tt.waitFor("EXIT CODE 0"); strings.Contains(s, "could not store") {
		t.Errorf("setup could not store the key:\n%s", s)
	}
	if b, err := os.ReadFile(called); err == nil {
		t.Errorf("setup used the OS store although the config says file:\n%s", b)
	}
	creds := filepath.Join(e.home, credentials.File)
	fi, err := os.Stat(creds)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("credentials file: %v %v", fi, err)
	}
	if got, ok := credentials.Open(e.home, credentials.FileKey, "").Get("DEEPSEEK_API_KEY"); !ok || got != "sk-pasted-to-file" {
		t.Errorf("the file store holds %q (%v) for DEEPSEEK_API_KEY", got, ok)
	}
	if b, _ := os.ReadFile(cfgPath); strings.Contains(string(b), "sk-pasted") || !strings.Contains(string(b), existing) {
		t.Errorf("config.toml holds the key or lost its lines:\n%s", b)
	}
}
