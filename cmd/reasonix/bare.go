package main

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/reasonix/reasonix/internal/text"
)

// commandNames are the subcommands dispatch knows, for the suggestion
// after a mistyped one. A function, not a package variable: nothing is
// built at start-up for a command that does not need it.
func commandNames() []string {
	return []string{"chat", "run", "plan", "models", "config", "context", "demo", "setup", "doctor",
		"sessions", "commands", "fork", "rewind", "stats", "replay", "diff", "balance", "acp", "serve",
		"mcp", "compact", "trust", "version", "help"}
}

// barePrompt reports whether a first argument that is no command and no
// flag is a prompt for the interactive mode (`reasonix "fix the bug"`, as
// Claude Code's claude "query"). It is one when it has white space in it,
// or letters outside ASCII (a Chinese or Japanese prompt has no spaces)
// and is not a near miss of a command. A single ASCII word never is: it
// is far likelier a mistyped or unknown command (seesions, upgrade) than
// a prompt, and a typo must not start a paid turn.
func barePrompt(a string) bool {
	if strings.ContainsFunc(a, unicode.IsSpace) {
		return true
	}
	return !ascii(a) && nearestCommand(a) == ""
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// nearestCommand is the command a word is most likely a typo of: within
// one edit (a swap of neighbours counts as one) for commands of up to four
// letters, two for longer ones, or a prefix of at least two letters of
// exactly one command. "" when there is none.
func nearestCommand(word string) string {
	w := strings.ToLower(word)
	best, bestD := "", 3
	var prefixed []string
	for _, c := range commandNames() {
		if len(w) >= 2 && strings.HasPrefix(c, w) {
			prefixed = append(prefixed, c)
		}
		limit := 2
		if len(c) <= 4 {
			limit = 1
		}
		if d := text.EditDistance(w, c); d <= limit && d < bestD {
			best, bestD = c, d
		}
	}
	if best == "" && len(prefixed) == 1 {
		best = prefixed[0]
	}
	return best
}

// unknownCommand explains a first argument that is neither a command, a
// flag nor a prompt: a near miss names the command meant, and the line
// after says how a prompt is given instead.
func unknownCommand(w io.Writer, args []string) {
	word := args[0]
	fmt.Fprintf(w, "reasonix: unknown command %q", word)
	if c := nearestCommand(word); c != "" {
		fmt.Fprintf(w, "; did you mean %q?", c)
	}
	// Words typed unquoted after it were meant as one prompt.
	n := 1
	for n < len(args) && !strings.HasPrefix(args[n], "-") {
		n++
	}
	if n > 1 {
		prompt := strings.Join(args[:n], " ")
		fmt.Fprintf(w, "\n(a prompt goes in quotes, as one argument: reasonix %s; reasonix --help lists the commands)\n",
			shellArgs(append([]string{prompt}, args[n:]...)))
		return
	}
	fmt.Fprintf(w, "\n(reasonix --help lists the commands; to start a chat with it as the prompt: reasonix chat %s)\n", shellArgs(args))
}

// shellArgs spells args as they would be typed in a POSIX shell: plain
// words as they are, anything else in single quotes.
func shellArgs(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		plain := a != ""
		for _, r := range a {
			if !(r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_./:=@%+,", r))) {
				plain = false
				break
			}
		}
		if plain {
			out[i] = a
		} else {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}
