package config

import "strings"

// AnswerLanguage is the language the user wants answers in: the language
// key, else $REASONIX_LANG, else the language part of $LANG (zh_CN.UTF-8
// is "zh"). explicit is false when only $LANG decided, so callers can
// leave the default (English) unsaid. "" when none is known, or $LANG is
// C or POSIX.
func (c *Config) AnswerLanguage(env func(string) string) (lang string, explicit bool) {
	if l := strings.TrimSpace(c.Language); l != "" {
		return l, true
	}
	if l := strings.TrimSpace(env("REASONIX_LANG")); l != "" {
		return l, true
	}
	l := env("LANG")
	l, _, _ = strings.Cut(l, ".")
	l, _, _ = strings.Cut(l, "@")
	switch l {
	case "", "C", "POSIX":
		return "", false
	}
	base, _, _ := strings.Cut(l, "_")
	return strings.ToLower(base), false
}

// LanguageName names a language tag for a prompt ("zh" is Chinese); an
// unknown tag is returned as written.
func LanguageName(tag string) string {
	base, _, _ := strings.Cut(strings.ToLower(strings.ReplaceAll(tag, "_", "-")), "-")
	switch base {
	case "zh":
		return "Chinese (中文)"
	case "en":
		return "English"
	case "ja":
		return "Japanese"
	case "ko":
		return "Korean"
	case "fr":
		return "French"
	case "de":
		return "German"
	case "es":
		return "Spanish"
	case "ru":
		return "Russian"
	case "pt":
		return "Portuguese"
	}
	return tag
}
