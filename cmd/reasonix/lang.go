package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/reasonix/reasonix/internal/config"
)

// languageRules is what the language settings add to every session's
// rules text: the answer language and the reasoning language. It depends
// only on the config and the environment, so the prefix stays byte-stable.
func languageRules(cfg *config.Config, getenv func(string) string) string {
	out := ""
	if lang, explicit := cfg.AnswerLanguage(getenv); lang != "" && (explicit || lang != "en") {
		out += fmt.Sprintf("\n\n# Language\nAnswer the user in %s unless they write to you in another language.", config.LanguageName(lang))
	}
	switch cfg.Agent.ReasoningLanguage {
	case "zh":
		out += "\n\n# Reasoning language\nWrite your visible reasoning in Chinese (中文)."
	case "en":
		out += "\n\n# Reasoning language\nWrite your visible reasoning in English."
	}
	return out
}

// systemPrompt is the executor's system prompt from [agent] system_prompt
// or system_prompt_file (relative to the file that set it), "" for the
// built-in one.
//
// denied, when set, says why a path may not be read (the read deny list, a
// Read deny rule), as for rules files: a project's reasonix.toml could
// otherwise name ~/.ssh/id_rsa and put it in every request.
func systemPrompt(cfg *config.Config, l *config.Loaded, denied func(string) string) (string, error) {
	a := cfg.Agent
	if a.SystemPrompt != "" && a.SystemPromptFile != "" {
		return "", usagef("[agent] system_prompt and system_prompt_file are both set (%s, %s): keep one",
			l.Sources["agent.system_prompt"], l.Sources["agent.system_prompt_file"])
	}
	if a.SystemPromptFile == "" {
		return a.SystemPrompt, nil
	}
	p := a.SystemPromptFile
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(l.Sources["agent.system_prompt_file"]), p)
	}
	if denied != nil {
		if why := denied(filepath.Clean(p)); why != "" {
			return "", usagef("[agent] system_prompt_file (from %s): %s may not be read: %s", l.Sources["agent.system_prompt_file"], p, why)
		}
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return "", usagef("[agent] system_prompt_file (from %s): %v", l.Sources["agent.system_prompt_file"], err)
	}
	return string(data), nil
}
