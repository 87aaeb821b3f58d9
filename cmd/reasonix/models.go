package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/reasonix/reasonix/internal/tui"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/providers/openai"
)

// choices lists every configured model as "provider/model", for /model
// and /models, with its context window and price.
func (p *providerSet) choices() []tui.ModelChoice {
	def := ""
	if c, m, err := providers.Resolve("", p.cfgs, p.def); err == nil {
		def = c.Name + "/" + m
	}
	var out []tui.ModelChoice
	for _, c := range p.cfgs {
		models := c.Models
		if c.DefaultModel != "" && !slices.Contains(models, c.DefaultModel) {
			models = append([]string{c.DefaultModel}, models...)
		}
		for _, m := range models {
			ref := c.Name + "/" + m
			var note []string
			if w := c.WindowFor(m); w > 0 {
				note = append(note, fmt.Sprintf("%dk context", w/1000))
			}
			if pr, ok := c.PriceFor(m); ok {
				cur := pr.Currency
				if cur == "" {
					cur = "USD"
				}
				note = append(note, fmt.Sprintf("%g/%g/%g %s per M (hit/miss/out)", pr.InputHit, pr.InputMiss, pr.Output, cur))
			}
			out = append(out, tui.ModelChoice{Ref: ref, Provider: c.Name, Default: ref == def, Note: strings.Join(note, " · ")})
		}
	}
	return out
}

// offered asks provider name's endpoint which models it serves (GET
// /models). Only OpenAI-compatible providers have one.
func (p *providerSet) offered(ctx context.Context, name string) ([]string, error) {
	for _, c := range p.cfgs {
		if c.Name != name {
			continue
		}
		if c.Kind != "" && c.Kind != "openai" || c.BaseURL == "" {
			return nil, fmt.Errorf("a %s provider has no /models endpoint", c.Kind)
		}
		if c.APIKey == "" && c.APIKeyEnv != "" {
			return nil, fmt.Errorf("no API key: %s is not set", c.APIKeyEnv)
		}
		return openai.ListModels(ctx, c.BaseURL, c.APIKey)
	}
	return nil, fmt.Errorf("no provider named %q", name)
}
