package config

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Preset is a provider `reasonix setup` knows how to configure: where it
// is, which environment variable usually holds its key, and its models.
type Preset struct {
	// Name is the provider name written to the config (and the --provider
	// value).
	Name string
	// Label is what a person picks from.
	Label   string
	BaseURL string
	// KeyEnv is the variable the key is read from; "" for a server that
	// needs no key.
	KeyEnv string
	// Models lists the models offered; Default is the one used when a
	// request names none. A preset without models (local) asks the server.
	Models  []string
	Default string
	// ContextWindow is written when the models' size is not known to
	// providers.Windowed; 0 writes nothing.
	ContextWindow int
	// SignUp is where a key is obtained, shown when one is missing.
	SignUp string
}

// Presets are the providers setup offers, in the order it offers them.
// Facts (URLs, variable names, model ids) come from each vendor's
// published OpenAI-compatible API.
func Presets() []Preset {
	return []Preset{
		{Name: "deepseek", Label: "DeepSeek", BaseURL: "https://api.deepseek.com/v1", KeyEnv: "DEEPSEEK_API_KEY",
			Models: []string{"deepseek-chat", "deepseek-reasoner"}, Default: "deepseek-chat", ContextWindow: 128000,
			SignUp: "https://platform.deepseek.com/api_keys"},
		{Name: "qwen", Label: "Qwen (Alibaba Cloud DashScope)", BaseURL: "https://dashscope.aliyuncs.com/compatible-mode/v1",
			KeyEnv: "DASHSCOPE_API_KEY", Models: []string{"qwen3-coder-plus"}, Default: "qwen3-coder-plus",
			SignUp: "https://dashscope.console.aliyun.com/apiKey"},
		{Name: "mimo", Label: "Xiaomi MiMo", BaseURL: "https://api.xiaomimimo.com/v1", KeyEnv: "MIMO_API_KEY",
			Models: []string{"mimo-v2.5-pro"}, Default: "mimo-v2.5-pro", SignUp: "https://platform.xiaomimimo.com"},
		{Name: "openai", Label: "OpenAI", BaseURL: "https://api.openai.com/v1", KeyEnv: "OPENAI_API_KEY",
			Models: []string{"gpt-4.1"}, Default: "gpt-4.1", SignUp: "https://platform.openai.com/api-keys"},
		{Name: "openrouter", Label: "OpenRouter", BaseURL: "https://openrouter.ai/api/v1", KeyEnv: "OPENROUTER_API_KEY",
			Models: []string{"deepseek/deepseek-chat"}, Default: "deepseek/deepseek-chat", ContextWindow: 128000,
			SignUp: "https://openrouter.ai/keys"},
		{Name: "local", Label: "Local server (vLLM, Ollama, llama.cpp)", BaseURL: "http://localhost:8000/v1"},
	}
}

// FindPreset returns the preset called name.
func FindPreset(name string) (Preset, bool) {
	for _, p := range Presets() {
		if p.Name == name {
			return p, true
		}
	}
	return Preset{}, false
}

// NewProvider is one provider entry setup writes.
type NewProvider struct {
	Name    string
	BaseURL string
	// KeyEnv names the variable holding the key (preferred); Key is a key
	// typed by the person, written into the (private) file only when no
	// variable holds it.
	KeyEnv string
	Key    string
	Models []string
	// Default is the model used when a request names none.
	Default       string
	ContextWindow int
}

// TOML renders p as a [[providers]] table.
func (p NewProvider) TOML() string {
	var b strings.Builder
	b.WriteString("[[providers]]\n")
	fmt.Fprintf(&b, "name = %s\n", strconv.Quote(p.Name))
	fmt.Fprintf(&b, "base_url = %s\n", strconv.Quote(p.BaseURL))
	if p.KeyEnv != "" {
		fmt.Fprintf(&b, "api_key_env = %s\n", strconv.Quote(p.KeyEnv))
	}
	if p.Key != "" {
		// The file is private (0600); a credentials store is (planned).
		fmt.Fprintf(&b, "api_key = %s\n", strconv.Quote(p.Key))
	}
	if len(p.Models) > 0 {
		q := make([]string, len(p.Models))
		for i, m := range p.Models {
			q[i] = strconv.Quote(m)
		}
		fmt.Fprintf(&b, "models = [%s]\n", strings.Join(q, ", "))
	}
	if p.Default != "" {
		fmt.Fprintf(&b, "default = %s\n", strconv.Quote(p.Default))
	}
	if p.ContextWindow > 0 {
		fmt.Fprintf(&b, "context_window = %d\n", p.ContextWindow)
	}
	return b.String()
}

// ErrProviderExists is returned by [AddProvider] when the file already
// configures a provider of that name.
var ErrProviderExists = errors.New("provider already configured")

// setupHeader starts a file written by setup.
const setupHeader = `## Reasonix user configuration, written by ` + "`reasonix setup`" + `.
## Every key is described in docs/CONFIG.md; ` + "`reasonix setup --provider NAME`" + ` adds another provider.
`

// AddProvider writes p to the user config at path. A new file gets a
// header, default_model = p.Name and the provider; an existing file keeps
// every byte and gets the provider appended (and default_model when it
// has none), so running setup again adds a provider instead of failing.
// replace starts the file afresh. A file that is not valid TOML is left
// alone with an error naming it.
func AddProvider(path string, p NewProvider, replace bool) error {
	old, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist) || replace:
		old = nil
	case err != nil:
		return fmt.Errorf("config: %w", err)
	}
	var out bytes.Buffer
	if len(bytes.TrimSpace(old)) == 0 {
		out.WriteString(setupHeader)
		fmt.Fprintf(&out, "default_model = %s\n\n", strconv.Quote(p.Name))
		out.WriteString(p.TOML())
	} else {
		var cur struct {
			DefaultModel string `toml:"default_model"`
			Providers    []struct {
				Name string `toml:"name"`
			} `toml:"providers"`
		}
		if err := toml.Unmarshal(old, &cur); err != nil {
			return fmt.Errorf("config: %s is not valid TOML (%v); fix it or run setup with --force to start it afresh", path, err)
		}
		for _, q := range cur.Providers {
			if q.Name == p.Name {
				return fmt.Errorf("config: %s already has a provider named %q: %w", path, p.Name, ErrProviderExists)
			}
		}
		if cur.DefaultModel == "" {
			// A top-level key must come before the first table, so it
			// goes first in the file.
			fmt.Fprintf(&out, "default_model = %s\n", strconv.Quote(p.Name))
		}
		out.Write(old)
		if !bytes.HasSuffix(old, []byte("\n")) {
			out.WriteByte('\n')
		}
		out.WriteByte('\n')
		out.WriteString(p.TOML())
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	perm := fs.FileMode(0o600)
	if err := writeAtomic(path, out.Bytes(), perm); err != nil {
		return err
	}
	if p.Key != "" {
		// A key in the file: whatever mode the file had, it is private now.
		if err := os.Chmod(path, 0o600); err != nil {
			return fmt.Errorf("config: %w", err)
		}
	}
	return nil
}

// CredentialsStore returns the credentials_store the config file at path
// names ("auto" when it names none, or there is no file). The file is read
// on its own, without the other layers and without the checks that need
// them, because `reasonix setup`, which edits it, may run while it still
// names a provider it has not got; a fault in the file itself is an
// [Error] naming the file, line and key.
func CredentialsStore(path string, env func(string) string) (string, error) {
	if env == nil {
		env = os.Getenv
	}
	m := newMerger(env)
	data, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return m.cfg.CredentialsStore, nil
	case err != nil:
		return "", fmt.Errorf("config: %w", err)
	}
	if errs := m.mergeFile(path, data); len(errs) > 0 {
		return "", errors.Join(errs...)
	}
	return m.cfg.CredentialsStore, nil
}
