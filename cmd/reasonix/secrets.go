package main

import (
	"strings"

	"github.com/reasonix/reasonix/internal/config"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/tools"
)

// runSecrets collects what a run keeps from the model: the variables that
// hold provider keys (every api_key_env and REASONIX_API_KEY), which bash
// commands do not inherit, and the resolved keys and credential headers of
// every configured provider, which are redacted from tool output.
func runSecrets(cfg *config.Config, pcfgs []providers.Config, getenv func(string) string) *tools.Secrets {
	names := []string{config.EnvAPIKey}
	values := []string{getenv(config.EnvAPIKey)}
	for _, p := range cfg.Providers {
		if p.APIKeyEnv != "" {
			names = append(names, p.APIKeyEnv)
			values = append(values, getenv(p.APIKeyEnv))
		}
		values = append(values, p.APIKey)
	}
	for _, pc := range pcfgs {
		if pc.APIKeyEnv != "" {
			names = append(names, pc.APIKeyEnv)
		}
		values = append(values, pc.APIKey)
		for h, v := range pc.Headers {
			if credentialHeader(h) {
				values = append(values, strings.TrimSpace(v))
				// "Bearer TOKEN": the token alone is the secret.
				if _, tok, ok := strings.Cut(strings.TrimSpace(v), " "); ok {
					values = append(values, strings.TrimSpace(tok))
				}
			}
		}
	}
	return tools.NewSecrets(names, values)
}

// credentialHeader reports whether a configured header likely carries a
// credential (Authorization, api-key, X-Auth-Token, ...).
func credentialHeader(name string) bool {
	n := strings.ToLower(name)
	for _, w := range []string{"auth", "key", "token", "secret", "cookie", "password"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}
