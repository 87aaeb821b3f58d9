package permission

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/reasonix/reasonix/internal/lazy"
)

// Recursive readers (grep -r, rg, find -exec, tar c, cp -r, …) read every
// file beneath a directory they are given, so `grep -r KEY .` shows what
// read_file .env may not. When such a directory holds a path a Read deny
// rule names, the line waits for a person instead of running: a hint
// computed from the files on disk, not a guarantee. What is guaranteed
// is the sandbox's deny_read list, which Read deny rules naming a path
// outside every writable tree join (ReadRuleDenies). Landlock can only
// grant access, and a writable tree's rule grants reading all of it, so
// denying one file in the workspace would make the workspace root a
// list-only directory in which files a command creates could not be read
// back: rules for paths inside the workspace stay the gate's.

// ReadRuleDenies returns the paths the sandbox's deny_read list takes
// from Read deny rules (raw rule text, as in ParsePolicy; a rule that does
// not parse is skipped, ParsePolicy reports it): each rule whose pattern
// is one absolute path (Read(~/secrets/prod.key)) or a whole absolute
// directory (Read(~/.config/gh/**)), unless it lies inside a writable
// path, where Landlock could not keep it out (see above), or holds one
// (Read(~/**) with the workspace in the home would refuse the file tools
// the whole workspace). gateOnly are
// the other Read deny rules (globs, workspace-relative ones such as
// Read(./.env)), which stay the gate's alone.
func ReadRuleDenies(deny []string, writable []string) (paths, gateOnly []string) {
	for _, raw := range deny {
		r, err := ParseRule(raw)
		if err != nil || r.Family != FamilyRead || r.pattern == "" {
			continue
		}
		pat := strings.TrimSuffix(r.pattern, "/**")
		p := filepath.Clean(filepath.FromSlash(pat))
		if !strings.HasPrefix(pat, "/") || strings.ContainsAny(pat, `*?[{\`) || p == string(filepath.Separator) ||
			slices.ContainsFunc(writable, func(w string) bool { return within(p, w) || within(w, p) }) {
			gateOnly = append(gateOnly, raw)
			continue
		}
		if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	return paths, gateOnly
}

// maxReaderWalk bounds the entries walked beneath one directory; a larger
// tree is not walked to its end and the line asks. A variable so tests can
// lower it.
var maxReaderWalk = 20000

// errWalkLimit stops a walk at maxReaderWalk entries.
var errWalkLimit = errors.New("too many entries")

// readsDeniedInside returns why the line must ask: a recursive reader is
// given a directory that holds a path a Read deny rule matches (or one
// too large to check). Empty when there is none.
func (p Policy) readsDeniedInside(an *shellAnalysis) string {
	denies := p.readDenies()
	if len(denies) == 0 {
		return ""
	}
	ws := p.workspace()
	for _, cmd := range an.cmds {
		dirs, hidden := recursiveOperands(cmd.words)
		for _, d := range dirs {
			if d == "" || d == dynWord {
				continue
			}
			abs := d
			if abs == "~" || strings.HasPrefix(abs, "~/") {
				abs = userHome() + abs[1:]
			}
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(ws, abs)
			}
			abs = filepath.Clean(abs)
			if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
				continue
			}
			r, found, err := p.deniedUnder(abs, denies, hidden, p.hiddenSet())
			name := cmdName(cmd.words[0])
			switch {
			case err != nil:
				return fmt.Sprintf("%s reads every file beneath %s, too many to check against the Read deny rules", name, d)
			case found != "":
				return fmt.Sprintf("%s reads every file beneath %s, including %s, which rule Deny: %s covers", name, d, found, r.Raw)
			}
		}
	}
	return ""
}

// hiddenSet returns whether the sandbox hides a path (absolute, clean)
// or a folder holding it from commands; the list is read at the first
// question.
func (p Policy) hiddenSet() func(string) bool {
	if p.Hidden == nil {
		return func(string) bool { return false }
	}
	var list []string
	read := false
	return func(path string) bool {
		if !read {
			list, read = p.Hidden(p.workspace()), true
		}
		return slices.ContainsFunc(list, func(h string) bool { return within(path, h) })
	}
}

// deniedUnder finds a path beneath dir (absolute, clean) that a rule of
// denies matches: rules with a fixed leading directory are checked by
// that directory's existence, the others (**/.env) by a bounded walk,
// which skips hidden entries unless hidden is set.
func (p Policy) deniedUnder(dir string, denies []Rule, hidden bool, skip func(string) bool) (Rule, string, error) {
	ws := p.workspace()
	var walk []Rule
	for _, r := range denies {
		base := staticBase(r.pattern)
		if base == "" {
			walk = append(walk, r)
			continue
		}
		if !filepath.IsAbs(base) {
			base = filepath.Join(ws, base)
		}
		if within(base, dir) && !skip(base) {
			if _, err := os.Lstat(base); err == nil {
				return r, p.relPaths([]string{base})[0], nil
			}
		}
	}
	if len(walk) == 0 {
		return Rule{}, "", nil
	}
	n := 0
	var hit Rule
	var hitPath string
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return nil
		}
		if n++; n > maxReaderWalk {
			return errWalkLimit
		}
		if e.IsDir() && e.Name() == ".git" {
			// Git's objects would spend the budget, and no secret a
			// Read rule names lives there in readable form.
			return filepath.SkipDir
		}
		if !hidden && strings.HasPrefix(e.Name(), ".") {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if skip(path) {
			// The sandbox hides it (and all beneath it) from commands.
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		rel := p.relPaths([]string{path})[0]
		for _, r := range walk {
			if r.matchPath(rel) || (foldCase && r.matchPathFold(rel)) {
				hit, hitPath = r, rel
				return filepath.SkipAll
			}
		}
		return nil
	})
	if errors.Is(err, errWalkLimit) {
		return Rule{}, "", err
	}
	return hit, hitPath, nil
}

// staticBase is the leading part of a path pattern without glob
// characters ("secrets" of secrets/**, "" of **/.env), as a path.
func staticBase(pattern string) string {
	segs := strings.Split(pattern, "/")
	var keep []string
	for _, s := range segs {
		if strings.ContainsAny(s, `*?[{\`) {
			break
		}
		keep = append(keep, s)
	}
	if len(keep) == len(segs) {
		// No glob at all: the pattern is one path.
		return filepath.FromSlash(pattern)
	}
	base := strings.Join(keep, "/")
	if base == "" && strings.HasPrefix(pattern, "/") {
		return "/"
	}
	return filepath.FromSlash(base)
}

// readerValueFlags are the options of recursive readers that take the
// next word as their value.
var readerValueFlags = lazy.Value[map[string]map[string]bool]{Build: func() map[string]map[string]bool {
	return map[string]map[string]bool{
		"grep": set("-e", "-f", "-m", "-A", "-B", "-C", "-d", "-D", "--regexp", "--file", "--max-count",
			"--context", "--after-context", "--before-context", "--include", "--exclude", "--exclude-dir", "--label"),
		"rg": set("-e", "-f", "-g", "-t", "-T", "-m", "-A", "-B", "-C", "-j", "-M", "-r", "-E", "-d",
			"--regexp", "--file", "--glob", "--iglob", "--type", "--type-not", "--max-count", "--context",
			"--after-context", "--before-context", "--threads", "--max-columns", "--replace", "--encoding",
			"--max-depth", "--sort", "--sortr", "--pre", "--pre-glob", "--ignore-file", "--type-add", "--colors", "--hostname-bin"),
		"ag":    set("-G", "-g", "-m", "-A", "-B", "-C", "--file-search-regex", "--ignore", "--max-count", "--depth"),
		"tar":   set("-f", "-C", "-T", "-X", "--file", "--directory", "--files-from", "--exclude-from"),
		"cp":    set("-t", "-S", "--target-directory", "--suffix"),
		"rsync": set("-e", "--rsh", "--exclude", "--include", "--exclude-from", "--include-from", "--filter", "-f"),
		"scp":   set("-P", "-i", "-o", "-F", "-c", "-l", "-S", "-J"),
		"zip":   set("-x", "-i", "-b", "-n", "-t", "-tt"),
		"diff":  set("-x", "-X", "--exclude", "--exclude-from", "-S", "--starting-file"),
	}
}}

// recursiveOperands returns the directories a recursive reader reads
// beneath ("." when it defaults to the working directory), and whether it
// reads hidden files there. A command that is not one returns nothing.
// Option parsing is deliberately rough: a word taken for a directory
// counts only when it is an existing directory.
func recursiveOperands(words []string) (dirs []string, hidden bool) {
	if len(words) == 0 {
		return nil, false
	}
	base := cmdName(words[0])
	args := words[1:]
	flag := func(long []string, short string) bool {
		for _, w := range args {
			if w == "--" {
				break
			}
			for _, l := range long {
				if w == l || strings.HasPrefix(w, l+"=") {
					return true
				}
			}
			if len(w) > 1 && w[0] == '-' && w[1] != '-' && strings.ContainsAny(w[1:], short) {
				return true
			}
		}
		return false
	}
	operands := func() []string {
		withValue := readerValueFlags.Get()[base]
		var out []string
		for i := 0; i < len(args); i++ {
			w := args[i]
			switch {
			case w == "--":
				return append(out, args[i+1:]...)
			case withValue[w]:
				i++ // the option's value
			case !strings.HasPrefix(w, "-") || w == "-":
				out = append(out, w)
			}
		}
		return out
	}
	switch base {
	case "grep", "egrep", "fgrep":
		if !flag([]string{"--recursive", "--dereference-recursive", "--directories=recurse"}, "rR") &&
			!strings.Contains(strings.Join(args, " "), "-d recurse") {
			return nil, false
		}
		ops := operands()
		if !flag([]string{"--regexp", "--file"}, "ef") && len(ops) > 0 {
			ops = ops[1:] // the pattern
		}
		if len(ops) == 0 {
			ops = []string{"."}
		}
		return ops, true
	case "rg", "ag", "ack", "ack-grep":
		if flag([]string{"--files", "--type-list", "--version", "--help"}, "") {
			return nil, false
		}
		ops := operands()
		if !flag([]string{"--regexp", "--file"}, "ef") && len(ops) > 0 {
			ops = ops[1:]
		}
		if len(ops) == 0 {
			ops = []string{"."}
		}
		hidden = base == "ack" || base == "ack-grep" ||
			flag([]string{"--hidden", "--unrestricted", "--all-types", "--no-ignore"}, ".u")
		return ops, hidden
	case "find":
		exec := false
		for _, w := range args {
			if w == "-exec" || w == "-execdir" || w == "-ok" || w == "-okdir" {
				exec = true
			}
		}
		if !exec {
			return nil, false
		}
		var ops []string
		for _, w := range args {
			if strings.HasPrefix(w, "-") || w == "(" || w == "!" {
				break
			}
			ops = append(ops, w)
		}
		if len(ops) == 0 {
			ops = []string{"."}
		}
		return ops, true
	case "tar", "bsdtar", "gtar":
		create := flag([]string{"--create", "--append", "--update"}, "cru")
		if len(args) > 0 && !strings.HasPrefix(args[0], "-") && strings.ContainsAny(args[0], "cru") {
			create = true // old-style tar czf out.tgz .
		}
		if !create {
			return nil, false
		}
		return operands(), true
	case "cp", "rsync", "scp":
		if !flag([]string{"--recursive", "--archive"}, "rRa") {
			return nil, false
		}
		ops := operands()
		if len(ops) > 1 {
			ops = ops[:len(ops)-1] // the destination
		}
		return ops, true
	case "zip":
		if !flag([]string{"--recurse-paths"}, "r") {
			return nil, false
		}
		return operands(), true
	case "diff":
		if !flag([]string{"--recursive"}, "r") {
			return nil, false
		}
		return operands(), true
	}
	return nil, false
}
