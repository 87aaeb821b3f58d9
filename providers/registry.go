package providers

import (
	"fmt"
	"sort"
	"strings"
)

// Factory builds a provider from its configuration.
type Factory func(cfg Config) (Provider, error)

// factories is an init-time registry: kinds register themselves from their
// package init and it is read-only afterwards. A slice, not a map: it
// starts as nothing the program has to build.
var factories []kindFactory

type kindFactory struct {
	kind string
	f    Factory
}

// Register adds a provider kind, replacing an earlier one of that kind.
// It is meant to be called from init.
func Register(kind string, f Factory) {
	for i := range factories {
		if factories[i].kind == kind {
			factories[i].f = f
			return
		}
	}
	factories = append(factories, kindFactory{kind, f})
}

// Kinds lists the registered provider kinds.
func Kinds() []string {
	out := make([]string, 0, len(factories))
	for _, k := range factories {
		out = append(out, k.kind)
	}
	sort.Strings(out)
	return out
}

func factory(kind string) (Factory, bool) {
	for _, k := range factories {
		if k.kind == kind {
			return k.f, true
		}
	}
	return nil, false
}

// New builds a provider of cfg.Kind ("openai" when empty).
func New(cfg Config) (Provider, error) {
	kind := cfg.Kind
	if kind == "" {
		kind = "openai"
	}
	f, ok := factory(kind)
	if !ok {
		return nil, fmt.Errorf("provider %q: unknown kind %q (known: %s)", cfg.Name, kind, strings.Join(Kinds(), ", "))
	}
	return f(cfg)
}

// Resolve finds the provider and model a reference names. A reference is a
// provider name (its default model), a model name offered by some provider,
// or "provider/model". An empty ref uses def, then the first provider.
func Resolve(ref string, cfgs []Config, def string) (Config, string, error) {
	if len(cfgs) == 0 {
		return Config{}, "", fmt.Errorf("no provider configured")
	}
	if ref == "" {
		ref = def
	}
	if ref == "" {
		c := cfgs[0]
		return c, defaultModel(c), nil
	}
	for _, c := range cfgs {
		if c.Name == ref {
			m := defaultModel(c)
			if m == "" {
				return Config{}, "", fmt.Errorf("provider %q has no model configured", c.Name)
			}
			return c, m, nil
		}
	}
	if i := strings.Index(ref, "/"); i > 0 {
		pname, model := ref[:i], ref[i+1:]
		for _, c := range cfgs {
			if c.Name == pname {
				// "deepseek/" (often "deepseek/${MODEL}" with MODEL unset)
				// would otherwise resolve to no model and silently run the
				// provider's default, hiding the mistake.
				if model == "" {
					return Config{}, "", fmt.Errorf("model reference %q names no model after the provider", ref)
				}
				return c, model, nil
			}
		}
	}
	for _, c := range cfgs {
		for _, m := range c.Models {
			if m == ref {
				return c, m, nil
			}
		}
		if c.DefaultModel == ref {
			return c, ref, nil
		}
	}
	names := make([]string, 0, len(cfgs))
	for _, c := range cfgs {
		names = append(names, c.Name)
	}
	return Config{}, "", fmt.Errorf("model %q not found: not a provider (%s), a configured model, or provider/model", ref, strings.Join(names, ", "))
}

func defaultModel(c Config) string {
	if c.DefaultModel != "" {
		return c.DefaultModel
	}
	if len(c.Models) > 0 {
		return c.Models[0]
	}
	return ""
}
