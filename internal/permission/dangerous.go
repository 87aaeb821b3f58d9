package permission

import "strings"

// dangerousNames are commands that destroy or move data, or stop the
// machine. They always need a fresh human confirmation; configuration can
// add patterns but never remove these.
var dangerousNames = map[string]string{
	"rm":       "rm deletes files",
	"rmdir":    "rmdir deletes directories",
	"mv":       "mv moves or overwrites files",
	"chmod":    "chmod changes permissions",
	"chown":    "chown changes ownership",
	"chgrp":    "chgrp changes ownership",
	"dd":       "dd writes raw data",
	"shutdown": "shutdown stops the machine",
	"reboot":   "reboot restarts the machine",
	"halt":     "halt stops the machine",
	"poweroff": "poweroff stops the machine",
	"truncate": "truncate cuts files",
	"shred":    "shred destroys files",
	"unlink":   "unlink deletes files",
}

// dangerousName judges a command by its name alone.
func dangerousName(base string) string {
	if r, ok := dangerousNames[base]; ok {
		return r
	}
	if base == "mkfs" || strings.HasPrefix(base, "mkfs.") {
		return base + " formats a file system"
	}
	return ""
}

// dangerousCommand judges one command with its arguments.
func dangerousCommand(base string, words []string) string {
	if r := dangerousName(base); r != "" {
		return r
	}
	switch base {
	case "git":
		return dangerousGit(words[1:])
	case "find":
		for _, w := range words[1:] {
			if w == "-delete" {
				return "find -delete deletes files"
			}
		}
	}
	return ""
}

// gitGlobalWithArg are git options before the subcommand that take a value.
var gitGlobalWithArg = map[string]bool{
	"-C": true, "-c": true, "--git-dir": true, "--work-tree": true,
	"--namespace": true, "--exec-path": true, "--config-env": true,
}

func dangerousGit(args []string) string {
	i := 0
	for ; i < len(args); i++ {
		w := args[i]
		if w == dynWord {
			return "git with arguments computed when the line runs"
		}
		if !strings.HasPrefix(w, "-") {
			break
		}
		if w == "-c" && i+1 < len(args) {
			kv := args[i+1]
			if k, v, ok := strings.Cut(kv, "="); ok && strings.HasPrefix(strings.ToLower(k), "alias.") && strings.HasPrefix(v, "!") {
				return "git -c alias.…=!cmd runs a shell command"
			}
		}
		if gitGlobalWithArg[w] {
			i++
		}
	}
	if i >= len(args) {
		return ""
	}
	sub, rest := args[i], args[i+1:]
	for _, w := range rest {
		if w == dynWord {
			if sub == "push" || sub == "reset" || sub == "clean" {
				return "git " + sub + " with arguments computed when the line runs"
			}
		}
	}
	switch sub {
	case "push":
		for _, w := range rest {
			if w == "--force" || w == "--force-with-lease" || strings.HasPrefix(w, "--force-with-lease=") ||
				w == "--mirror" || shortFlag(w, 'f') || (strings.HasPrefix(w, "+") && len(w) > 1) {
				return "git push --force rewrites remote history"
			}
		}
	case "reset":
		for _, w := range rest {
			if w == "--hard" {
				return "git reset --hard discards changes"
			}
		}
	case "clean":
		for _, w := range rest {
			if w == "--force" || shortFlag(w, 'f') {
				return "git clean -f deletes untracked files"
			}
		}
	}
	return ""
}

// shortFlagLast reports whether w is a cluster of short options ending in
// c, so the next word is c's value (-c, -qc).
func shortFlagLast(w string, c byte) bool {
	return len(w) > 1 && w[0] == '-' && w[1] != '-' && w[len(w)-1] == c
}

// shortFlag reports whether w is a cluster of short options containing c
// (-f, -fd, -xdf).
func shortFlag(w string, c byte) bool {
	return len(w) > 1 && w[0] == '-' && w[1] != '-' && strings.IndexByte(w[1:], c) >= 0
}
