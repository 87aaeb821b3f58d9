package config

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/reasonix/reasonix/providers"
)

// ProviderConfigs converts the configured providers into the form the
// providers package builds from, reading each api_key_env through env (nil
// means os.Getenv). A provider without a usable key is not an error here:
// local servers need none, and a remote one says so on first use.
func (c *Config) ProviderConfigs(env func(string) string) ([]providers.Config, error) {
	if env == nil {
		env = os.Getenv
	}
	out := make([]providers.Config, 0, len(c.Providers))
	seen := map[string]bool{}
	for _, p := range c.Providers {
		if p.Name == "" {
			return nil, fmt.Errorf("config: a provider has no name")
		}
		if seen[p.Name] {
			return nil, fmt.Errorf("config: provider %q is defined twice", p.Name)
		}
		seen[p.Name] = true
		if msg := p.problem(); msg != "" {
			return nil, fmt.Errorf("config: provider %q %s", p.Name, msg)
		}
		out = append(out, p.toProviderConfig(env))
	}
	return out, nil
}

func (p *Provider) toProviderConfig(env func(string) string) providers.Config {
	key := p.APIKey
	if key == "" && p.APIKeyEnv != "" {
		key = env(p.APIKeyEnv)
	}
	models := slices.Clone(p.Models)
	for _, m := range []string{p.Model, p.Default} {
		if m != "" && !slices.Contains(models, m) {
			models = append(models, m)
		}
	}
	def := p.Default
	if def == "" {
		def = p.Model
	}
	if def == "" && len(models) > 0 {
		def = models[0]
	}
	window := 0 // not configured: the model's known size
	if p.ContextWindow != nil {
		window = *p.ContextWindow
		if window == 0 {
			window = -1 // configured as 0: off
		}
	}
	kind := p.Kind
	if kind == "" {
		kind = "openai"
	}
	return providers.Config{
		Name:             p.Name,
		Kind:             kind,
		BaseURL:          p.BaseURL,
		APIKey:           key,
		APIKeyEnv:        p.APIKeyEnv,
		Models:           models,
		DefaultModel:     def,
		Headers:          maps.Clone(p.Headers),
		Timeout:          p.Timeout,
		ConnectTimeout:   p.ConnectTimeout,
		FirstByteTimeout: p.FirstByteTimeout,
		IdleTimeout:      p.IdleTimeout,
		ContextWindow:    window,
		Thinking:         p.Thinking,
		ReasoningEffort:  p.ReasoningEffort,
		MaxAttempts:      p.MaxAttempts,
		Script:           p.Script,
		Price:            p.Price.provider(),
		ModelPrices:      modelPrices(p.ModelPrices),
		FlattenSchemas:   p.FlattenSchemas,
	}
}

// provider converts a configured price; nil when none is set. Parts
// left out cost nothing.
func (p Price) provider() *providers.Price {
	if !p.set() {
		return nil
	}
	out := &providers.Price{Currency: p.Currency}
	for _, f := range []struct {
		v   *float64
		dst *float64
	}{{p.InputHit, &out.InputHit}, {p.InputMiss, &out.InputMiss}, {p.Output, &out.Output}} {
		if f.v != nil {
			*f.dst = *f.v
		}
	}
	return out
}

func modelPrices(m map[string]Price) map[string]providers.Price {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]providers.Price, len(m))
	for k, p := range m {
		if pp := p.provider(); pp != nil {
			out[k] = *pp
		}
	}
	return out
}

// NoProviderHelp is the message shown when no provider is configured. It
// names the exact command and variables rather than pointing at docs.
func NoProviderHelp(home string) string {
	file := filepath.Join(home, UserFile)
	return "no model provider is configured. Run `reasonix setup` (or `reasonix setup --provider deepseek`\n" +
		"with DEEPSEEK_API_KEY exported) to add one to " + file + ",\n" +
		"or set " + EnvBaseURL + " (and " + EnvAPIKey + ", " + EnvModel + ") for this shell only.\n" +
		"`reasonix demo` shows Reasonix at work without any provider."
}
