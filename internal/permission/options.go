package permission

import (
	"strings"

	"github.com/reasonix/reasonix/internal/lazy"
)

// Some options make an ordinary command run another program or write a
// file: `rg --pre prog`, `sort -o file`, `tar --to-command=cmd`,
// `git diff --output=file`. A prefix allow rule such as Bash(rg:*) was
// written for the command's usual job, so a line using one of them is
// judged by what it really does: a program it runs must be allowed in its
// own right (or is dangerous when computed at run time), a file it writes
// is judged like a redirection onto that file, and an option whose effect
// cannot be seen on the line (a program named in configuration) takes the
// line out of reach of every prefix rule. Only an exact rule, the posture
// or a person can then allow it.

// optEffect is what a risky option does with its value.
type optEffect int

const (
	// runsProgram: the value is a program and its arguments.
	runsProgram optEffect = iota
	// runsShell: the value is shell code (sh -c).
	runsShell
	// writesFile: the value is a file the command writes.
	writesFile
	// hidden: the option runs or writes something the line does not
	// name (a program from configuration or the environment); it takes
	// no value, or its value says nothing useful.
	hidden
	// deletes: the option deletes files; it is dangerous.
	deletes
)

// riskyOpt is one option. long spellings are matched as getopt_long does,
// abbreviated down to min (empty: no abbreviation); short is a letter of a
// short-option cluster (0: none). noValue options take no value.
type riskyOpt struct {
	long    string
	min     string
	short   byte
	effect  optEffect
	noValue bool
	// prefix, when set, is a value prefix the option must carry to be
	// risky, stripped before judging the rest (--checkpoint-action=exec=).
	prefix string
	what   string
}

// cmdOpts is the table entry of one command (or git subcommand).
type cmdOpts struct {
	opts []riskyOpt
	// shortArgs are the short options that take a value, so a cluster
	// such as -fI is read as -f with value I.
	shortArgs string
	// stop, when set, ends option parsing at the first operand (git,
	// whose paths follow); otherwise options may follow operands (GNU).
	stopAtOperand bool
}

// gitDiffOpts are the diff options every git command that shows a diff
// takes (diff, log, show, format-patch, …).
var gitDiffOpts = []riskyOpt{
	{long: "--output", min: "--outp", effect: writesFile, what: "writes its output to a file"},
	{long: "--ext-diff", min: "--ext", effect: hidden, noValue: true, what: "runs the external diff program named in git config or GIT_EXTERNAL_DIFF"},
}

// riskyOptions is the table. Keys are command names as judged (base name,
// lower case) or "git <subcommand>". Like the gate's other tables it is
// built on first use: a map literal at package level is built at every
// start of the binary, `reasonix version` included.
var riskyOptions = lazy.Value[map[string]cmdOpts]{Build: func() map[string]cmdOpts {
	return map[string]cmdOpts{
		"rg": {opts: []riskyOpt{
			{long: "--pre", effect: runsProgram, what: "runs a preprocessor program on every file"},
			{long: "--hostname-bin", effect: runsProgram, what: "runs a program to learn the host name"},
		}, shortArgs: "ABCEefgjMmrTtd"},
		"sort": {opts: []riskyOpt{
			{long: "--compress-program", min: "--com", effect: runsProgram, what: "runs a compression program"},
			{long: "--output", min: "--o", short: 'o', effect: writesFile, what: "writes its output to a file"},
		}, shortArgs: "kotST"},
		"tar": {opts: []riskyOpt{
			{long: "--use-compress-program", min: "--use", short: 'I', effect: runsProgram, what: "runs a compression program"},
			{long: "--to-command", min: "--to-c", effect: runsShell, what: "pipes every extracted file into a command"},
			{long: "--checkpoint-action", min: "--checkpoint-a", prefix: "exec=", effect: runsShell, what: "runs a command at each checkpoint"},
			{long: "--info-script", min: "--inf", short: 'F', effect: runsProgram, what: "runs a script at the end of each volume"},
			{long: "--new-volume-script", min: "--new-v", effect: runsProgram, what: "runs a script at the end of each volume"},
			{long: "--rsh-command", min: "--rsh", effect: runsProgram, what: "runs a remote shell program"},
			{long: "--rmt-command", min: "--rmt", effect: runsProgram, what: "runs a remote tape program"},
			{long: "--index-file", min: "--ind", effect: writesFile, what: "writes its listing to a file"},
			{long: "--remove-files", min: "--remo", effect: deletes, noValue: true, what: "deletes the files it archives"},
			{long: "--recursive-unlink", min: "--rec", effect: deletes, noValue: true, what: "deletes whole directories before extracting"},
		}, shortArgs: "bCfFgHIKLNTVX"},
		"sed": {}, // judged by sedScript
		"split": {opts: []riskyOpt{
			{long: "--filter", min: "--fi", effect: runsShell, what: "pipes every piece into a command"},
		}, shortArgs: "abClnt"},
		"zip": {opts: []riskyOpt{
			{long: "--unzip-command", min: "--unzip-c", short: 0, effect: runsShell, what: "runs a command to test the archive"},
			{long: "-TT", effect: runsShell, what: "runs a command to test the archive"},
		}},
		"rsync": {opts: []riskyOpt{
			{long: "--rsh", min: "--rsh", short: 'e', effect: runsProgram, what: "runs a remote shell program"},
			{long: "--rsync-path", min: "--rsync-p", effect: hidden, what: "runs a command on the remote side"},
		}, shortArgs: "eBfMT"},
		"wget": {opts: []riskyOpt{
			{long: "--use-askpass", min: "--use-a", effect: runsProgram, what: "runs a program to ask for passwords"},
			{long: "--execute", min: "--exe", short: 'e', effect: hidden, what: "runs wgetrc commands, which may name files to write"},
			{long: "--output-document", min: "--output-d", short: 'O', effect: writesFile, what: "writes the download to a file"},
			{long: "--output-file", min: "--output-f", short: 'o', effect: writesFile, what: "writes its log to a file"},
		}, shortArgs: "eoOaiPtTwQUYABFD"},
		"curl": {opts: []riskyOpt{
			{long: "--output", short: 'o', effect: writesFile, what: "writes the download to a file"},
			{long: "--config", short: 'K', effect: hidden, what: "reads options, which may write files, from a file"},
			{long: "--dump-header", short: 'D', effect: writesFile, what: "writes headers to a file"},
			{long: "--cookie-jar", short: 'c', effect: writesFile, what: "writes cookies to a file"},
		}, shortArgs: "oKDcdHuXAeEbCFmrTwxyYzQt"},
		"man": {opts: []riskyOpt{
			{long: "--pager", min: "--pa", short: 'P', effect: runsProgram, what: "runs a pager program"},
			{long: "--html", min: "--ht", short: 'H', effect: runsProgram, what: "runs a browser program"},
		}, shortArgs: "CdDeEHLmMPprRSsTX"},
		"fd":     {opts: fdOpts, shortArgs: "dEeSCjtcpo"},
		"fdfind": {opts: fdOpts, shortArgs: "dEeSCjtcpo"},
		"ssh":    {opts: sshOpts, shortArgs: sshArgs},
		"scp":    {opts: append([]riskyOpt{{short: 'S', long: "-S", effect: runsProgram, what: "runs another ssh program"}}, sshOpts...), shortArgs: "cDFiJlOoPSX"},
		"sftp":   {opts: append([]riskyOpt{{short: 'S', long: "-S", effect: runsProgram, what: "runs another ssh program"}}, sshOpts...), shortArgs: "BbcDFiJloPRSsX"},
		"vim":    {opts: vimOpts},
		"vi":     {opts: vimOpts},
		"nvim":   {opts: vimOpts},
		"view":   {opts: vimOpts},
		"ex":     {opts: vimOpts},
		"awk":    {}, // judged by awkProgram
		"gawk":   {},
		"mawk":   {},
		"nawk":   {},

		"git diff":         {opts: gitDiffOpts, stopAtOperand: false},
		"git log":          {opts: gitDiffOpts},
		"git show":         {opts: gitDiffOpts},
		"git whatchanged":  {opts: gitDiffOpts},
		"git diff-tree":    {opts: gitDiffOpts},
		"git diff-index":   {opts: gitDiffOpts},
		"git diff-files":   {opts: gitDiffOpts},
		"git range-diff":   {opts: gitDiffOpts},
		"git format-patch": {opts: append([]riskyOpt{{long: "--output-directory", min: "--output-d", short: 'o', effect: writesFile, what: "writes patches into a directory"}}, gitDiffOpts...), shortArgs: "ov"},
		"git grep": {opts: []riskyOpt{
			{long: "--open-files-in-pager", min: "--open", short: 'O', effect: runsProgram, what: "opens the files in a pager program"},
		}},
		"git archive": {opts: []riskyOpt{
			{long: "--output", min: "--o", short: 'o', effect: writesFile, what: "writes the archive to a file"},
			{long: "--exec", effect: hidden, what: "runs a program on the remote side"},
		}, shortArgs: "o"},
		"git rebase": {opts: []riskyOpt{
			{long: "--exec", min: "--exe", short: 'x', effect: runsShell, what: "runs a command after each commit"},
		}, shortArgs: "xsXC"},
		"git bisect": {opts: []riskyOpt{}},
		"git difftool": {opts: []riskyOpt{
			{long: "--extcmd", min: "--extc", short: 'x', effect: runsShell, what: "runs a diff command"},
			{long: "--tool", min: "--to", short: 't', effect: hidden, what: "runs a diff tool from configuration"},
		}, shortArgs: "xt"},
		"git fetch":     {opts: gitRemoteOpts},
		"git pull":      {opts: gitRemoteOpts},
		"git clone":     {opts: append([]riskyOpt{{long: "--template", min: "--te", effect: hidden, what: "installs hooks from a template directory"}, {long: "--config", min: "--con", short: 'c', effect: hidden, what: "sets configuration that may run commands"}}, gitRemoteOpts...), shortArgs: "bcoujL"},
		"git push":      {opts: gitRemoteOpts},
		"git ls-remote": {opts: gitRemoteOpts},
		"git submodule": {opts: []riskyOpt{}},
	}
}}

var gitRemoteOpts = []riskyOpt{
	{long: "--upload-pack", min: "--upl", short: 'u', effect: runsProgram, what: "runs a program as the remote's upload-pack"},
	{long: "--receive-pack", min: "--rec", effect: runsProgram, what: "runs a program as the remote's receive-pack"},
	{long: "--exec", effect: runsProgram, what: "runs a program as the remote's pack program"},
}

var fdOpts = []riskyOpt{
	{long: "--exec", short: 'x', effect: runsProgram, what: "runs a command on every result"},
	{long: "--exec-batch", short: 'X', effect: runsProgram, what: "runs a command on the results"},
}

const sshArgs = "BbcDEeFIiJLlmOoPpQRSWw"

var sshOpts = []riskyOpt{
	{short: 'o', long: "-o", effect: hidden, what: "sets an option; ProxyCommand, LocalCommand and KnownHostsCommand run commands"},
	{short: 'F', long: "-F", effect: hidden, what: "reads a configuration file, which may run commands"},
}

var vimOpts = []riskyOpt{
	{short: 'c', long: "-c", effect: hidden, what: "runs an editor command, which may run a shell"},
	{long: "--cmd", effect: hidden, what: "runs an editor command, which may run a shell"},
	{short: 'S', long: "-S", effect: hidden, what: "sources an editor script"},
}

// sshSafeOption reports whether an ssh -o value cannot run a command.
func sshSafeOption(v string) bool {
	k := strings.ToLower(strings.TrimSpace(strings.SplitN(strings.SplitN(v, "=", 2)[0], " ", 2)[0]))
	switch k {
	case "proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand", "match", "include",
		"proxyjump", "remotecommand", "securitykeyprovider", "pkcs11provider", "identityagent", "controlpath", "userknownhostsfile":
		return false
	}
	return k != ""
}

// riskyOptionsOf judges the risky options of one command. base is the
// command's judged name; words its words.
func (a *shellAnalyzer) riskyOptionsOf(base string, words []string, depth int) {
	key, args := base, words[1:]
	if base == "git" {
		sub, rest := gitSubcommand(args)
		if sub == "" {
			return
		}
		key, args = "git "+sub, rest
		switch sub {
		case "submodule":
			// git submodule foreach 'cmd' runs shell code.
			for i, w := range args {
				if w == "foreach" {
					r := skipOpts(args[i+1:], nil)
					if src, ok := joinStatic(r); ok && len(r) > 0 {
						a.nested(src, depth)
					} else if len(r) > 0 {
						a.res.danger("git submodule foreach runs a command computed when the line runs")
					}
					return
				}
			}
			return
		case "bisect":
			if len(args) > 1 && args[0] == "run" {
				a.words(args[1:], nil, false, true, depth)
			}
			return
		}
	}
	switch base {
	case "sed":
		a.sedCommand(words, depth)
		return
	case "awk", "gawk", "mawk", "nawk":
		a.awkCommand(base, words)
		return
	case "make", "gmake":
		// make SHELL=prog runs every recipe through prog.
		for _, w := range args {
			if k, v, ok := strings.Cut(w, "="); ok && !strings.HasPrefix(w, "-") &&
				(k == "SHELL" || k == "MAKESHELL" || k == ".SHELLFLAGS") {
				a.riskyValue("make", riskyOpt{long: k + "=", effect: runsProgram, what: "runs every recipe through the program it names"}, v, true, depth)
			}
		}
		return
	case "less", "more":
		for _, w := range args {
			if strings.HasPrefix(w, "+") && strings.ContainsAny(w, "!|") {
				a.noPrefix(base + " " + w + " runs a shell command when it starts")
			}
		}
		return
	}
	co, ok := riskyOptions.Get()[key]
	if !ok {
		return
	}
	for i := 0; i < len(args); i++ {
		w := args[i]
		if w == "--" {
			return
		}
		if w == dynWord {
			if len(co.opts) > 0 {
				a.noPrefix(key + " with options computed when the line runs")
			}
			continue
		}
		if len(w) < 2 || w[0] != '-' {
			if co.stopAtOperand {
				return
			}
			continue
		}
		next := func() (string, bool) {
			if i+1 < len(args) {
				i++
				return args[i], true
			}
			return "", false
		}
		if strings.HasPrefix(w, "--") {
			name, val, hasVal := strings.Cut(w, "=")
			for _, o := range co.opts {
				if !o.matchLong(name) {
					continue
				}
				if !o.noValue && !hasVal {
					val, hasVal = next()
				}
				a.riskyValue(key, o, val, hasVal || o.noValue, depth)
				break
			}
			continue
		}
		// Whole-word spellings such as zip's -TT or ssh's -o.
		matched := false
		for _, o := range co.opts {
			if o.short == 0 && o.long == w {
				val, ok := next()
				a.riskyValue(key, o, val, ok, depth)
				matched = true
			}
		}
		if matched {
			continue
		}
		// A cluster of short options: an option taking a value ends it.
		for j := 1; j < len(w); j++ {
			c := w[j]
			var hit *riskyOpt
			for k := range co.opts {
				if co.opts[k].short == c {
					hit = &co.opts[k]
				}
			}
			takes := strings.IndexByte(co.shortArgs, c) >= 0 || (hit != nil && !hit.noValue)
			if !takes {
				if hit != nil {
					a.riskyValue(key, *hit, "", true, depth)
				}
				continue
			}
			val, ok := w[j+1:], true
			if val == "" {
				val, ok = next()
			}
			if hit != nil {
				a.riskyValue(key, *hit, val, ok, depth)
			}
			break
		}
	}
}

func (o riskyOpt) matchLong(name string) bool {
	if o.long == "" || !strings.HasPrefix(o.long, "--") {
		return false
	}
	if o.min == "" {
		return name == o.long
	}
	return longOpt(name, o.long, o.min)
}

// riskyValue judges one use of a risky option with its value.
func (a *shellAnalyzer) riskyValue(key string, o riskyOpt, val string, hasVal bool, depth int) {
	spell := o.long
	if o.short != 0 {
		spell = "-" + string(o.short)
	}
	what := key + " " + spell + " " + o.what
	if o.prefix != "" {
		if val == dynWord {
			a.res.danger(what + ", with an action computed when the line runs")
			return
		}
		rest, ok := strings.CutPrefix(val, o.prefix)
		if !ok {
			return
		}
		val = rest
	}
	if !hasVal && o.effect != hidden && o.effect != deletes {
		return
	}
	switch o.effect {
	case deletes:
		a.res.danger(what)
	case hidden:
		if key == "ssh" || key == "scp" || key == "sftp" {
			if o.short == 'o' && val != dynWord && sshSafeOption(val) {
				return
			}
		}
		a.noPrefix(what)
	case runsProgram:
		if val == dynWord {
			a.res.danger(what + ", named only when the line runs")
			return
		}
		prog := strings.Fields(val)
		if len(prog) == 0 {
			return
		}
		a.res.runs = append(a.res.runs, what+": "+val)
		a.words(prog, nil, false, true, depth)
	case runsShell:
		if val == dynWord {
			a.res.danger(what + ", with code computed when the line runs")
			return
		}
		a.res.runs = append(a.res.runs, what+": "+val)
		a.nested(val, depth)
	case writesFile:
		a.writeTarget(what, val)
	}
}

// writeTarget judges a file an option or script writes (and truncates):
// like a > redirection, plus, when nothing makes it dangerous, the line
// is out of reach of prefix rules.
func (a *shellAnalyzer) writeTarget(what, target string) {
	switch {
	case target == dynWord:
		a.res.danger(what + ", named only when the line runs")
		return
	case target == "" || harmlessTarget(target) || target == "-" || a.inTmp(target):
		return
	}
	if name, ok := a.controlTarget(target); ok {
		a.res.danger(controlDanger(what+":", name))
		return
	}
	if inGitDir(target) {
		a.res.danger(what + ": " + target + " is where git keeps config and hooks it runs")
		return
	}
	if a.mayExist(target, true) {
		a.res.danger(what + ", overwriting existing file " + target)
		return
	}
	a.noPrefix(what + " (" + target + ")")
}

// gitSubcommand skips git's global options and returns the subcommand and
// its arguments.
func gitSubcommand(args []string) (string, []string) {
	for i := 0; i < len(args); i++ {
		w := args[i]
		if w == dynWord {
			return "", nil
		}
		if !strings.HasPrefix(w, "-") {
			return w, args[i+1:]
		}
		if gitGlobalWithArg.Get()[w] {
			i++
		}
	}
	return "", nil
}

// noPrefix records why prefix allow rules do not cover this line.
func (a *shellAnalyzer) noPrefix(reason string) {
	for _, r := range a.res.noPrefix {
		if r == reason {
			return
		}
	}
	a.res.noPrefix = append(a.res.noPrefix, reason)
}

// programEnv are variables whose value names a program, or options that
// name one, for an ordinary command to run; setting one takes the line out
// of reach of prefix rules (PATH too: it decides which program a name
// runs). codeEnv (shell.go) lists those that need a person outright.
var programEnv = lazy.Value[map[string]string]{Build: func() map[string]string {
	return map[string]string{
		"PATH": "decides which program each command name runs", "HOME": "decides which configuration git and others read",
		"XDG_CONFIG_HOME": "decides which configuration git and others read",
		"MANPAGER":        "names a pager program", "SYSTEMD_PAGER": "names a pager program", "BAT_PAGER": "names a pager program",
		"DELTA_PAGER": "names a pager program", "BROWSER": "names a browser program", "MANOPT": "holds options for man, which may name a pager",
		"LESS": "holds options for less, which may run commands", "TAR_OPTIONS": "holds options for tar, which may run commands",
		"RIPGREP_CONFIG_PATH": "names a file of options for rg, which may run a preprocessor",
		"MAKEFLAGS":           "holds options for make, which may evaluate recipes", "GNUMAKEFLAGS": "holds options for make, which may evaluate recipes",
		"MFLAGS": "holds options for make", "GOFLAGS": "holds options for go, which may run -toolexec programs",
		"CC": "names the compiler program builds run", "CXX": "names the compiler program builds run", "LD": "names the linker program builds run",
		"AR": "names the archiver program builds run", "RUSTC_WRAPPER": "names a program cargo runs", "RUSTC": "names a program cargo runs",
		"CARGO_BUILD_RUSTC_WRAPPER": "names a program cargo runs", "GOTOOLCHAIN": "makes go run another toolchain",
		"GOROOT": "makes go run another toolchain", "NODE_OPTIONS": "holds options for node, which may load code",
		"PERL5OPT": "holds options for perl, which may load code", "JAVA_TOOL_OPTIONS": "holds options for java, which may load agents",
		"CURL_HOME": "names where curl reads options, which may write files", "WGETRC": "names a file of options for wget",
		"GCONV_PATH": "makes the C library load code", "LD_LIBRARY_PATH": "makes programs load other libraries",
		"DYLD_INSERT_LIBRARIES": "makes programs load other libraries", "DYLD_LIBRARY_PATH": "makes programs load other libraries",
		"SHELL": "names the shell other programs run commands with", "SUDO_ASKPASS": "names a program sudo runs",
	}
}}
