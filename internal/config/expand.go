package config

import (
	"slices"
	"strings"
)

// expandTree expands ${VAR} references in every string value of a decoded
// TOML tree, in place. Keys are left alone: a key naming a variable would
// make the schema depend on the environment.
func expandTree(v any, env func(string) string) any {
	switch x := v.(type) {
	case string:
		return Expand(x, env)
	case map[string]any:
		for k, e := range x {
			x[k] = expandTree(e, env)
		}
	case []any:
		for i, e := range x {
			x[i] = expandTree(e, env)
		}
	case []map[string]any:
		for _, e := range x {
			expandTree(e, env)
		}
	}
	return v
}

// Expand replaces ${VAR} with the value of VAR and ${VAR:-default} with
// VAR's value, or default when VAR is unset or empty. $${ yields a literal
// ${. Anything else, including a bare $VAR, is kept as written so shell
// snippets and patterns in rules survive untouched.
func Expand(s string, env func(string) string) string {
	if !strings.Contains(s, "${") {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		if i > 0 && s[i-1] == '$' {
			b.WriteString(s[:i-1])
			b.WriteString("${")
			s = s[i+2:]
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			b.WriteString(s)
			return b.String()
		}
		expr := s[i+2 : i+2+end]
		b.WriteString(s[:i])
		name, def, hasDef := strings.Cut(expr, ":-")
		if !isEnvName(name) {
			b.WriteString("${" + expr + "}")
		} else if val := env(name); val != "" || !hasDef {
			b.WriteString(val)
		} else {
			b.WriteString(def)
		}
		s = s[i+2+end+1:]
	}
}

// unsetRefs lists the variables s references as ${VAR}, without a
// default, that env leaves empty (each once, in order): Expand turns
// them into nothing.
func unsetRefs(s string, env func(string) string) []string {
	var out []string
	for {
		i := strings.Index(s, "${")
		if i < 0 {
			return out
		}
		if i > 0 && s[i-1] == '$' { // $${ is a literal ${
			s = s[i+2:]
			continue
		}
		end := strings.IndexByte(s[i+2:], '}')
		if end < 0 {
			return out
		}
		name := s[i+2 : i+2+end]
		s = s[i+2+end+1:]
		if isEnvName(name) && env(name) == "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
}

func isEnvName(s string) bool {
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '_' && !(c >= 'a' && c <= 'z') && !(c >= 'A' && c <= 'Z') && !(c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}
