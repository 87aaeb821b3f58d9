package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/reasonix/reasonix/providers"
)

// Environment variables Load consults.
const (
	EnvBaseURL = "REASONIX_BASE_URL"
	EnvModel   = "REASONIX_MODEL"
	EnvAPIKey  = "REASONIX_API_KEY"
	EnvConfig  = "REASONIX_CONFIG"
	EnvHome    = "REASONIX_HOME"
)

// envProvider is the name of the provider synthesized from
// REASONIX_BASE_URL when no configured provider uses that URL.
const envProvider = "env"

func envSource(name string) string { return "env " + name }

// applyEnv layers the REASONIX_* overrides on top of every file.
func (m *merger) applyEnv() []error {
	baseURL, model, key := m.env(EnvBaseURL), m.env(EnvModel), m.env(EnvAPIKey)
	c := m.cfg
	if baseURL != "" {
		i := slices.IndexFunc(c.Providers, func(p Provider) bool { return sameURL(p.BaseURL, baseURL) })
		if i < 0 {
			if model == "" {
				return []error{fmt.Errorf("config: %s is set but %s is not: the provider built from them needs a model name", EnvBaseURL, EnvModel)}
			}
			p := Provider{Name: envProvider, Kind: "openai", BaseURL: baseURL, Model: model, APIKey: key}
			// An "env" provider from a file is replaced wholesale: mixing
			// its fields with the environment's would be surprising.
			if j := slices.IndexFunc(c.Providers, func(p Provider) bool { return p.Name == envProvider }); j >= 0 {
				c.Providers = slices.Delete(c.Providers, j, j+1)
				for k := range m.sources {
					if strings.HasPrefix(k, "providers."+envProvider+".") {
						delete(m.sources, k)
					}
				}
			}
			c.Providers = append(c.Providers, p)
			sp := "providers." + envProvider + "."
			for _, f := range []string{"name", "kind", "base_url"} {
				m.sources[sp+f] = envSource(EnvBaseURL)
			}
			m.sources[sp+"model"] = envSource(EnvModel)
			if key != "" {
				m.sources[sp+"api_key"] = envSource(EnvAPIKey)
			}
			c.DefaultModel = envProvider
			m.sources["default_model"] = envSource(EnvBaseURL)
			delete(m.provLoc, envProvider)
			return nil
		}
		// The URL names a configured provider: make it the default, with
		// REASONIX_MODEL picking the model on it.
		p := &c.Providers[i]
		c.DefaultModel = p.Name
		m.sources["default_model"] = envSource(EnvBaseURL)
		if model != "" {
			c.DefaultModel = p.Name + "/" + model
			m.sources["default_model"] = envSource(EnvModel)
		}
		m.applyKey(p, key)
		return nil
	}
	if model != "" {
		c.DefaultModel = model
		m.sources["default_model"] = envSource(EnvModel)
	}
	if key != "" && len(c.Providers) > 0 {
		cfgs := make([]providers.Config, len(c.Providers))
		for i, p := range c.Providers {
			cfgs[i] = p.toProviderConfig(m.env)
		}
		// An unresolvable default is reported by validate; the key then
		// has nowhere to go.
		if pc, _, err := providers.Resolve(c.DefaultModel, cfgs, ""); err == nil {
			i := slices.IndexFunc(c.Providers, func(p Provider) bool { return p.Name == pc.Name })
			m.applyKey(&c.Providers[i], key)
		}
	}
	return nil
}

// applyKey gives p the REASONIX_API_KEY value unless it already has a key
// of its own, which is more specific.
func (m *merger) applyKey(p *Provider, key string) {
	if key == "" || p.APIKey != "" || p.APIKeyEnv != "" && m.env(p.APIKeyEnv) != "" {
		return
	}
	p.APIKey = key
	m.sources["providers."+p.Name+".api_key"] = envSource(EnvAPIKey)
}

func sameURL(a, b string) bool {
	return a != "" && strings.TrimRight(a, "/") == strings.TrimRight(b, "/")
}

// locate builds an error for a merged key, pointing at the file (and line)
// that last set it.
func (m *merger) locate(key, format string, args ...any) *Error {
	src := m.sources[key]
	if src == "" {
		src = SourceDefault
	}
	e := &Error{File: src, Key: key, Msg: fmt.Sprintf(format, args...)}
	if ix, ok := m.indexes[src]; ok {
		e.Line = ix.lookup(key)
	}
	return e
}

// validate checks what only the merged result can tell: a provider may be
// split across layers, and model references may name providers from any
// layer.
func (m *merger) validate() []error {
	c := m.cfg
	var errs []error
	for _, p := range c.Providers {
		if msg := p.problem(); msg != "" {
			e := &Error{File: envSource(EnvBaseURL), Key: "providers." + p.Name}
			if loc, ok := m.provLoc[p.Name]; ok {
				e = &Error{File: loc.File, Line: loc.Line, Key: loc.Key}
			}
			e.Msg = fmt.Sprintf("provider %q %s", p.Name, msg)
			errs = append(errs, e)
		}
	}
	for _, p := range c.Plugins {
		if msg := p.Problem(); msg != "" {
			e := m.locate("plugins."+p.Name+".name", "plugin %q %s", p.Name, msg)
			if loc, ok := m.plugLoc[p.Name]; ok {
				e.File, e.Line, e.Key = loc.File, loc.Line, loc.Key
			}
			errs = append(errs, e)
		}
	}
	if c.Tools.BashTimeout <= 0 {
		errs = append(errs, m.locate("tools.bash_timeout", "must be positive"))
	}
	if c.Tools.BashMaxTimeout < c.Tools.BashTimeout {
		errs = append(errs, m.locate("tools.bash_max_timeout", "%s is less than tools.bash_timeout (%s)", c.Tools.BashMaxTimeout, c.Tools.BashTimeout))
	}
	if len(errs) > 0 || len(c.Providers) == 0 {
		// Without providers there is nothing to resolve against; the
		// caller reports that with NoProviderHelp.
		return errs
	}
	cfgs := make([]providers.Config, len(c.Providers))
	for i, p := range c.Providers {
		cfgs[i] = p.toProviderConfig(m.env)
	}
	refs := []struct{ key, ref string }{
		{"default_model", c.DefaultModel},
		{"agent.planner_model", c.Agent.PlannerModel},
		{"agent.subagent_model", c.Agent.SubagentModel},
	}
	for _, role := range sortedKeys(c.Agent.SubagentModels) {
		refs = append(refs, struct{ key, ref string }{"agent.subagent_models." + role, c.Agent.SubagentModels[role]})
	}
	for _, r := range refs {
		if r.ref == "" {
			continue
		}
		if _, _, err := providers.Resolve(r.ref, cfgs, ""); err != nil {
			errs = append(errs, m.locate(r.key, "%v", err))
		}
	}
	return errs
}

// problem says what a merged provider lacks, or "" when it is usable.
func (p *Provider) problem() string {
	scripted := p.Kind == "scripted"
	switch {
	case !scripted && p.BaseURL == "":
		return "has no base_url"
	case scripted && p.Script == "":
		return `is of kind "scripted" but has no script`
	case p.Model == "" && len(p.Models) == 0 && p.Default == "":
		return "has no model: set model = \"...\" or models = [...]"
	}
	return ""
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
