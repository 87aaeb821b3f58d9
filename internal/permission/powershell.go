package permission

import (
	"fmt"
	"strings"

	"github.com/reasonix/reasonix/internal/lazy"
)

// PowerShell lines ([tools.shell] prefer = "powershell") are opaque to the
// gate: it has no PowerShell parser, and guessing at one would let a line
// the guess misreads pass a rule written for something else. So a line is
// never allowed by a prefix rule or by the ask and auto postures; only a
// person, an exact rule (Bash(<line>) or PowerShell(<line>), the whole
// line as written), a bare Bash or PowerShell rule, or yolo run it. The
// line is still split into words crudely so deny rules, Read deny rules,
// ask rules and the dangerous class catch the names they know, wherever
// they stand: that can only refuse or ask more, never allow. Landlock, the
// private TMPDIR, the scrubbed environment and the control-file guard do
// not depend on reading the line at all.

// psPerson is the reason every PowerShell line waits for a person.
const psPerson = "the gate cannot check PowerShell; only a person, an exact rule or yolo runs it"

// psDangerous are PowerShell cmdlets and aliases that delete, stop the
// machine or run code built from strings, keyed in lower case.
var psDangerous = lazy.Value[map[string]string]{Build: func() map[string]string {
	return map[string]string{
		"remove-item":         "Remove-Item deletes files",
		"ri":                  "ri (Remove-Item) deletes files",
		"del":                 "del (Remove-Item) deletes files",
		"erase":               "erase (Remove-Item) deletes files",
		"rd":                  "rd (Remove-Item) deletes directories",
		"clear-content":       "Clear-Content empties files",
		"clc":                 "clc (Clear-Content) empties files",
		"clear-item":          "Clear-Item empties items",
		"move-item":           "Move-Item moves or overwrites files",
		"mi":                  "mi (Move-Item) moves or overwrites files",
		"move":                "move (Move-Item) moves or overwrites files",
		"format-volume":       "Format-Volume formats a disk",
		"clear-disk":          "Clear-Disk erases a disk",
		"stop-computer":       "Stop-Computer stops the machine",
		"restart-computer":    "Restart-Computer restarts the machine",
		"stop-process":        "Stop-Process kills processes",
		"spps":                "spps (Stop-Process) kills processes",
		"set-executionpolicy": "Set-ExecutionPolicy changes what scripts may run",
		"set-acl":             "Set-Acl changes permissions",
		"invoke-expression":   "Invoke-Expression runs code built from a string",
		"iex":                 "iex (Invoke-Expression) runs code built from a string",
		"invoke-command":      "Invoke-Command runs a script block, possibly elsewhere",
		"icm":                 "icm (Invoke-Command) runs a script block, possibly elsewhere",
		"start-process":       "Start-Process starts a program outside this command",
		"saps":                "saps (Start-Process) starts a program outside this command",
		"add-type":            "Add-Type compiles and loads code",
		"-encodedcommand":     "an encoded command hides the code it runs",
		"-enc":                "an encoded command hides the code it runs",
		"-ec":                 "an encoded command hides the code it runs",
	}
}}

// psWords splits a PowerShell line into words, crudely: backticks (the
// escape character) are dropped, and quotes, brackets, operators and
// separators split words. Each word keeps its case.
func psWords(line string) []string {
	line = strings.ReplaceAll(line, "`", "")
	return strings.FieldsFunc(line, func(r rune) bool {
		return strings.ContainsRune(" \t\r\n;|&(){}[]<>\"',=+@$!", r) || r == '\u2018' || r == '\u2019' || r == '\u201c' || r == '\u201d'
	})
}

// psName is how a word is compared with rule and danger names when it
// stands for a command: lower case (PowerShell ignores case), its base
// name under either slash, without a Windows program suffix.
func psName(w string) string {
	w = strings.ToLower(w)
	if i := strings.LastIndexAny(w, `/\`); i >= 0 && i < len(w)-1 {
		w = w[i+1:]
	}
	for _, ext := range []string{".exe", ".cmd", ".bat", ".com", ".ps1"} {
		if s, ok := strings.CutSuffix(w, ext); ok && s != "" {
			return s
		}
	}
	return w
}

// matchPSWords matches a Bash or PowerShell rule against words starting
// at one of a line's words, ignoring case; for deny and ask rules only.
func (r Rule) matchPSWords(words []string) bool {
	if r.glob != "" {
		if len(words) == 0 {
			return false
		}
		return r.matchWords(append([]string{psName(words[0])}, words[1:]...), true)
	}
	if r.Spec == "" || (r.prefix && len(r.words) == 0) {
		return true
	}
	low := make([]string, len(words))
	for i, w := range words {
		low[i] = strings.ToLower(w)
	}
	if len(low) > 0 {
		low[0] = psName(words[0])
	}
	f := r
	f.words = make([]string, len(r.words))
	for i, w := range r.words {
		f.words[i] = strings.ToLower(w)
	}
	return f.matchWords(low, true)
}

// psRule reports whether r is a Bash or PowerShell rule of tool.
func psRule(r Rule, tool string) bool {
	return r.appliesTo(tool, FamilyBash) || r.appliesTo(tool, FamilyPowerShell)
}

// psExact reports whether an allow rule or grant covers line: a bare Bash
// or PowerShell rule, or an exact one that spells the whole line.
func psExact(r Rule, tool, line string) bool {
	if !psRule(r, tool) {
		return false
	}
	if r.Spec == "" {
		return true
	}
	return !r.prefix && r.glob == "" && r.Spec == line
}

// evaluatePowerShell decides a PowerShell line: deny > Read deny >
// dangerous > ask > exact allow > the posture, where the ask and auto
// postures ask and say a person is needed (see the comment at the top).
func (p Policy) evaluatePowerShell(c *call, grants []Rule) Outcome {
	line := strings.TrimSpace(c.command)
	out := Outcome{Subjects: []string{c.command}}
	if line == "" {
		out.Decision, out.Reason = Ask, "empty command"
		return out
	}
	words := psWords(line)
	anyRule := func(rules []Rule) (Rule, bool) {
		for i := range words {
			for _, r := range rules {
				if psRule(r, c.tool) && r.matchPSWords(words[i:]) {
					return r, true
				}
			}
		}
		if len(words) == 0 {
			for _, r := range rules {
				if psRule(r, c.tool) && r.Spec == "" {
					return r, true
				}
			}
		}
		return Rule{}, false
	}
	if r, ok := anyRule(p.Deny); ok {
		out.Decision, out.Rule, out.List = Deny, r.Raw, "Deny"
		out.Reason = "denied by rule Deny: " + r.Raw
		return out
	}
	// Paths: -Path:.env is PowerShell's -Path .env, and \ separates.
	var paths []string
	for _, w := range words {
		if strings.HasPrefix(w, "-") {
			if _, v, ok := strings.Cut(w, ":"); ok && v != "" {
				w = v
			} else {
				continue
			}
		}
		paths = append(paths, strings.ReplaceAll(w, `\`, "/"))
	}
	an := &shellAnalysis{cmds: []shellCmd{{words: append([]string{""}, paths...)}}}
	if r, word, ok := p.namesDeniedRead(an); ok {
		out.Decision, out.Rule, out.List = Deny, r.Raw, "Deny"
		out.Reason = fmt.Sprintf("denied by rule Deny: %s (the command names %s)", r.Raw, word)
		return out
	}
	for i, w := range words {
		name := psName(w)
		if reason, ok := psDangerous.Get()[name]; ok {
			out.Dangerous = appendOnce(out.Dangerous, reason)
		} else if reason := dangerousCommand(name, append([]string{name}, words[i+1:]...)); reason != "" {
			out.Dangerous = appendOnce(out.Dangerous, reason)
		}
		if shells.Get()[name] || name == "pwsh" || name == "powershell" {
			out.Dangerous = appendOnce(out.Dangerous, name+" runs nested shell code the gate cannot read")
		}
		for _, r := range p.Dangerous {
			if r.matchPSWords(words[i:]) {
				out.Dangerous = appendOnce(out.Dangerous, "matches the configured dangerous pattern "+r.Spec)
			}
		}
	}
	for _, rel := range p.relPaths(paths) {
		if name, ok := p.controlFile(rel); ok {
			out.Dangerous = appendOnce(out.Dangerous, controlDanger("the command names", name))
		}
	}
	out.Person = psPerson
	if len(out.Dangerous) > 0 {
		out.Decision, out.Reason = Ask, "dangerous: "+strings.Join(out.Dangerous, "; ")
		return out
	}
	if s := "PowerShell(" + line + ")"; !strings.ContainsAny(line, "\r\n") {
		if r, err := ParseRule(s); err == nil && psExact(r, c.tool, line) {
			out.Suggest = []string{s}
		}
	}
	covered := func(rules []Rule) (Rule, bool) {
		for _, r := range rules {
			if psExact(r, c.tool, line) {
				return r, true
			}
		}
		return Rule{}, false
	}
	if r, ok := anyRule(p.Ask); ok {
		out.Decision, out.Rule, out.List = Ask, r.Raw, "Ask"
		out.Reason = "rule Ask: " + r.Raw
		if _, ok := covered(grants); ok {
			out.Decision, out.Reason = Allow, "allowed for this session"
		} else if p.Mode == ModeYolo {
			out.Decision, out.Reason = Allow, "yolo mode"
		}
		return out
	}
	if r, ok := covered(p.Allow); ok {
		out.Decision, out.Rule, out.List = Allow, r.Raw, "Allow"
		out.Reason = "allowed by rule Allow: " + r.Raw
		return out
	}
	if _, ok := covered(grants); ok {
		out.Decision, out.Reason = Allow, "allowed for this session"
		return out
	}
	switch p.Mode {
	case ModeYolo:
		out.Decision, out.Reason = Allow, "yolo mode"
	case ModeDeny:
		out.Decision, out.Reason = Deny, "mode deny: no exact rule allows this PowerShell line"
	default:
		out.Decision, out.Reason = Ask, "PowerShell line: "+psPerson
	}
	return out
}

func appendOnce(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}
