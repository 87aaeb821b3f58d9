package providers

import "strings"

// Windowed is a provider that knows its models' context size. Providers
// built from a Config implement it through Config.WindowFor.
type Windowed interface {
	ContextWindow(model string) int
}

// WindowOf is the context window, in tokens, of model served by p: what
// the provider says, else the known size of the model; 0 is unknown or
// turned off.
func WindowOf(p Provider, model string) int {
	if w, ok := p.(Windowed); ok {
		return max(w.ContextWindow(model), 0)
	}
	return KnownContextWindow(model)
}

// WindowFor is the context window of model under c: the configured
// context_window when positive, none when it is configured as 0
// (ContextWindow < 0), else the known size of the model.
func (c Config) WindowFor(model string) int {
	switch {
	case c.ContextWindow > 0:
		return c.ContextWindow
	case c.ContextWindow < 0:
		return 0
	}
	return KnownContextWindow(model)
}

// knownWindows are context sizes of well-known model families, matched by
// prefix on the lower-cased model name without any "vendor/" path, first
// match wins (longer prefixes first).
var knownWindows = []struct {
	prefix string
	tokens int
}{
	{"deepseek-chat", 128000},
	{"deepseek-reasoner", 128000},
	{"deepseek-v3", 128000},
	{"deepseek-r1", 128000},
	{"deepseek", 128000},
	{"qwen3-coder", 262144},
	{"qwen-max", 32768},
	{"qwen-plus", 131072},
	{"qwen-turbo", 131072},
	{"qwen3", 131072},
	{"qwen2.5", 131072},
	{"qwen", 131072},
	{"gpt-4.1", 1047576},
	{"gpt-4o", 128000},
	{"o1-mini", 128000},
	{"o1", 200000},
	{"o3", 200000},
	{"o4-mini", 200000},
	{"mimo", 131072},
}

// KnownContextWindow is the context size of a well-known model, or 0.
func KnownContextWindow(model string) int {
	m := strings.ToLower(model)
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:]
	}
	for _, k := range knownWindows {
		if strings.HasPrefix(m, k.prefix) {
			return k.tokens
		}
	}
	return 0
}
