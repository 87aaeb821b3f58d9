package tools

import (
	"slices"
	"strings"
)

// MinSecretLen is the shortest value Secrets redacts: shorter values would
// blot out ordinary words and numbers in tool output.
const MinSecretLen = 8

// Redacted replaces a secret value in tool output.
const Redacted = "[REDACTED]"

// DefaultSecretEnv are the variables a shell never inherits even when no
// Secrets were configured: Reasonix's own key variable (config.EnvAPIKey).
var DefaultSecretEnv = []string{"REASONIX_API_KEY"}

// Secrets is what a run keeps out of the model's reach: environment
// variables a shell command does not inherit, and values redacted from
// every tool result. A nil *Secrets still drops DefaultSecretEnv and
// redacts nothing.
type Secrets struct {
	names  []string
	values []string
	rep    *strings.Replacer
}

// NewSecrets builds the set from variable names to withhold from shells and
// secret values to redact. Values shorter than MinSecretLen are ignored;
// DefaultSecretEnv is always withheld.
func NewSecrets(names, values []string) *Secrets {
	s := &Secrets{}
	for _, n := range append(slices.Clone(DefaultSecretEnv), names...) {
		n = strings.TrimSpace(n)
		if n != "" && !slices.ContainsFunc(s.names, func(m string) bool { return strings.EqualFold(m, n) }) {
			s.names = append(s.names, n)
		}
	}
	for _, v := range values {
		if len(v) >= MinSecretLen && !slices.Contains(s.values, v) {
			s.values = append(s.values, v)
		}
	}
	// Longest first, so a key that contains another is replaced whole.
	slices.SortStableFunc(s.values, func(a, b string) int { return len(b) - len(a) })
	if len(s.values) > 0 {
		pairs := make([]string, 0, 2*len(s.values))
		for _, v := range s.values {
			pairs = append(pairs, v, Redacted)
		}
		s.rep = strings.NewReplacer(pairs...)
	}
	return s
}

// Redact replaces every secret value in text with Redacted.
func (s *Secrets) Redact(text string) string {
	if s == nil || s.rep == nil || text == "" {
		return text
	}
	return s.rep.Replace(text)
}

// Holds reports whether text contains a secret value.
func (s *Secrets) Holds(text string) bool {
	if s == nil || text == "" {
		return false
	}
	return slices.ContainsFunc(s.values, func(v string) bool { return strings.Contains(text, v) })
}

// Environ returns environ (in os.Environ form) without the withheld
// variables and without any variable whose value contains a secret value.
// Names compare case-insensitively, as Windows does. The result is never
// nil, so assigning it to exec.Cmd.Env never means "inherit everything".
func (s *Secrets) Environ(environ []string) []string {
	names := DefaultSecretEnv
	var values []string
	if s != nil {
		names, values = s.names, s.values
	}
	out := make([]string, 0, len(environ))
	for _, kv := range environ {
		name, val, _ := strings.Cut(kv, "=")
		if name == "" && len(kv) > 1 {
			// Windows keeps per-drive directories in variables named "=C:".
			if j := strings.IndexByte(kv[1:], '='); j >= 0 {
				name, val = kv[:j+1], kv[j+2:]
			}
		}
		if slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, name) }) {
			continue
		}
		if slices.ContainsFunc(values, func(v string) bool { return strings.Contains(val, v) }) {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// Redact replaces every configured secret value in text (see Secrets).
func (e *Env) Redact(text string) string { return e.Secrets.Redact(text) }
