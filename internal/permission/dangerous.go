package permission

import (
	"slices"
	"strings"

	"github.com/reasonix/reasonix/internal/lazy"
)

// dangerousNames are commands that destroy or move data, or stop the
// machine. They always need a fresh human confirmation; configuration can
// add patterns but never remove these.
var dangerousNames = lazy.Value[map[string]string]{Build: func() map[string]string {
	return map[string]string{
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
}}

// dangerousName judges a command by its name alone.
func dangerousName(base string) string {
	if r, ok := dangerousNames.Get()[base]; ok {
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
	case "make", "gmake":
		// Recipes are shell code: a makefile from stdin or --eval smuggles
		// any command past an allow rule for make.
		files, eval := makeOptions(words[1:])
		if slices.Contains(words[1:], dynWord) {
			// $(echo -f-) or $OPTS may become either.
			return "make with arguments computed when the line runs, which may name a makefile or recipes"
		}
		if eval {
			return "make --eval runs recipes written on the command line"
		}
		for _, f := range files {
			if f == "-" || f == dynWord || isStdinFile(f) {
				return "make -f - runs a makefile read from standard input"
			}
		}
	case "go":
		// go test -exec and -toolexec run any program under an allow rule
		// for go test.
		for _, w := range words[1:] {
			if w == "-exec" || w == "-toolexec" || strings.HasPrefix(w, "-exec=") || strings.HasPrefix(w, "-toolexec=") ||
				w == "--exec" || w == "--toolexec" || strings.HasPrefix(w, "--exec=") || strings.HasPrefix(w, "--toolexec=") {
				return "go " + strings.TrimLeft(strings.SplitN(w, "=", 2)[0], "-") + " runs another program"
			}
		}
	case "rsync":
		for _, w := range words[1:] {
			if strings.HasPrefix(w, "--delete") || w == "--remove-source-files" {
				return "rsync " + w + " deletes files"
			}
		}
	}
	return ""
}

// gitGlobalWithArg are git options before the subcommand that take a value.
var gitGlobalWithArg = lazy.Value[map[string]bool]{Build: func() map[string]bool {
	return map[string]bool{
		"-C": true, "-c": true, "--git-dir": true, "--work-tree": true,
		"--namespace": true, "--exec-path": true, "--config-env": true,
	}
}}

// gitSafeConfig are configuration keys (lower case; a trailing dot covers
// a section) that cannot make git run a command. Every other key may: an
// alias, a pager, an editor, core.fsmonitor, core.hooksPath, a filter or
// diff driver, credential.helper, include.path, and more, so git -c, git
// --config-env and git config setting one need a person.
var gitSafeConfig = []string{
	"user.", "color.", "advice.", "init.", "log.", "status.", "column.",
	"pull.rebase", "pull.ff", "push.default", "merge.ff", "rebase.autostash",
	"fetch.prune", "gc.auto", "maintenance.auto", "safe.directory",
	"commit.gpgsign", "tag.gpgsign", "core.quotepath", "core.autocrlf",
	"core.safecrlf", "core.abbrev", "core.filemode", "core.longpaths",
	"core.ignorecase", "http.sslverify", "diff.renames", "diff.noprefix",
}

func gitConfigSafe(key string) bool {
	key = strings.ToLower(key)
	for _, s := range gitSafeConfig {
		if key == s || (strings.HasSuffix(s, ".") && strings.HasPrefix(key, s)) {
			return true
		}
	}
	return false
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
		var kv string
		switch {
		case (w == "-c" || w == "--config-env") && i+1 < len(args):
			kv = args[i+1]
		case strings.HasPrefix(w, "--config-env="):
			kv = strings.TrimPrefix(w, "--config-env=")
		case w == "--exec-path" && i+1 < len(args), strings.HasPrefix(w, "--exec-path="):
			return "git --exec-path runs git commands from another directory"
		}
		if kv != "" {
			if kv == dynWord {
				return "git -c with configuration computed when the line runs"
			}
			if k, _, _ := strings.Cut(kv, "="); !gitConfigSafe(k) {
				return "git -c " + k + " can make git run a command"
			}
		}
		if gitGlobalWithArg.Get()[w] {
			i++
		}
	}
	if i >= len(args) {
		return ""
	}
	sub, rest := args[i], args[i+1:]
	for _, w := range rest {
		if w == dynWord {
			if sub == "push" || sub == "reset" || sub == "clean" || sub == "checkout" ||
				sub == "restore" || sub == "config" || sub == "branch" || sub == "stash" {
				return "git " + sub + " with arguments computed when the line runs"
			}
		}
	}
	has := func(long string, short byte) bool {
		for _, w := range rest {
			if w == "--" {
				return false
			}
			if (long != "" && w == long) || (short != 0 && shortFlag(w, short)) {
				return true
			}
		}
		return false
	}
	switch sub {
	case "push":
		for _, w := range rest {
			if w == "--force" || w == "--force-with-lease" || strings.HasPrefix(w, "--force-with-lease=") ||
				w == "--mirror" || shortFlag(w, 'f') || (strings.HasPrefix(w, "+") && len(w) > 1) {
				return "git push --force rewrites remote history"
			}
			if w == "--delete" || w == "--prune" || shortFlag(w, 'd') || (strings.HasPrefix(w, ":") && len(w) > 1) {
				return "git push --delete deletes remote branches"
			}
		}
	case "reset":
		if has("--hard", 0) {
			return "git reset --hard discards changes"
		}
	case "clean":
		if has("--force", 'f') {
			return "git clean -f deletes untracked files"
		}
	case "checkout":
		// checkout -- paths, checkout . and checkout -f overwrite local
		// changes; switching branches refuses to.
		for j, w := range rest {
			if (w == "--" && j+1 < len(rest)) || w == "." || w == "--force" || shortFlag(w, 'f') {
				return "git checkout of paths discards local changes"
			}
			if w == "--" {
				break
			}
		}
	case "switch":
		if has("--force", 'f') || has("--discard-changes", 0) {
			return "git switch --discard-changes discards local changes"
		}
	case "restore":
		if !(has("--staged", 'S') && !has("--worktree", 'W')) {
			return "git restore discards local changes"
		}
	case "stash":
		if len(rest) > 0 && (rest[0] == "drop" || rest[0] == "clear") {
			return "git stash " + rest[0] + " deletes stashed changes"
		}
	case "branch":
		if has("", 'D') || has("", 'M') || has("", 'C') || ((has("--delete", 'd') || has("--move", 'm')) && has("--force", 'f')) {
			return "git branch -D deletes unmerged branches"
		}
	case "rm":
		if has("--force", 'f') {
			return "git rm -f deletes files with local changes"
		}
	case "reflog":
		if len(rest) > 0 && (rest[0] == "expire" || rest[0] == "delete") {
			return "git reflog " + rest[0] + " drops recovery points"
		}
	case "update-ref":
		if has("", 'd') {
			return "git update-ref -d deletes a ref"
		}
	case "filter-branch", "filter-repo":
		return "git " + sub + " rewrites history"
	case "config":
		if key, ok := gitConfigSet(rest); ok && !gitConfigSafe(key) {
			return "git config " + key + " can make git run a command later"
		}
	}
	return ""
}

// gitConfigSet returns the key that `git config …` sets, if it sets one:
// `git config [opts] key value` and `git config set [opts] key value`.
func gitConfigSet(args []string) (string, bool) {
	if len(args) > 0 && args[0] == "set" {
		args = args[1:]
	}
	var pos []string
	for i := 0; i < len(args); i++ {
		w := args[i]
		switch {
		case w == "-f" || w == "--file" || w == "--blob" || w == "--type" || w == "--default" || w == "--comment":
			i++
		case strings.HasPrefix(w, "-"):
			if w == "--unset" || w == "--unset-all" || w == "--get" || w == "--get-all" || w == "-l" || w == "--list" ||
				w == "--get-regexp" || w == "--remove-section" || w == "--rename-section" || w == "-e" || w == "--edit" {
				return "", false
			}
		default:
			pos = append(pos, w)
		}
	}
	if len(pos) < 2 {
		return "", false
	}
	return pos[0], true
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

// makeOptions reads GNU make's options as make does: short ones may be
// clustered (-sf -, -sE code), long ones abbreviated (--fi=-, --ev=code).
// It returns the makefiles named with -f, --file or --makefile (dynWord
// for a computed one) and whether --eval or -E is given.
func makeOptions(args []string) (files []string, eval bool) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		next := func() string {
			if i+1 < len(args) {
				i++
				return args[i]
			}
			return ""
		}
		switch {
		case w == "--":
			return files, eval
		case strings.HasPrefix(w, "--"):
			name, val, hasVal := strings.Cut(w, "=")
			switch {
			case longOpt(name, "--eval", "--ev"):
				eval = true
			case longOpt(name, "--file", "--f"), longOpt(name, "--makefile", "--m"):
				if !hasVal {
					val = next()
				}
				files = append(files, val)
			}
		case len(w) > 1 && w[0] == '-':
			// Options that take a value end the cluster; the rest of the
			// word, or the next word, is the value.
			for j := 1; j < len(w); j++ {
				c := w[j]
				if strings.IndexByte("CIoWfE", c) < 0 {
					continue
				}
				v := w[j+1:]
				if v == "" {
					v = next()
				}
				switch c {
				case 'f':
					files = append(files, v)
				case 'E':
					eval = true
				}
				break
			}
		}
	}
	return files, eval
}

// longOpt reports whether name is the long option full, abbreviated to no
// less than min as getopt_long accepts.
func longOpt(name, full, min string) bool {
	return len(name) >= len(min) && strings.HasPrefix(full, name)
}
