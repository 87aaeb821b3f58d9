package builtin

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp/syntax"
	"strconv"
	"strings"
	"unicode"

	"github.com/reasonix/reasonix/internal/lookpath"
)

// rgSearch finds with ripgrep, when it is installed and the request is
// one where ripgrep provably finds what the native search would, the
// files that match req, relative to its root; ok is false otherwise and
// the caller searches natively. Ripgrep is told to ignore exactly what
// the native walker ignores, to read everything as raw bytes, and to
// search binary files; the pattern is re-spelled from the parsed RE2
// tree so Rust's regex engine sees the same character sets Go does.
//
// Ripgrep runs outside the sandbox and opens paths by name, so a
// confined command swapping a folder for a symlink meanwhile could make
// it read a file the guard refuses: only the names it finds are used,
// and each file is then read and searched again natively (nofollow.go),
// which also drops binary files. It gets no environment: nothing in it
// is for ripgrep, and the API key is in it.
func rgSearch(ctx context.Context, req *grepRequest) ([]string, bool) {
	if req.isFile || req.spec.m.multiline || req.glob != "" {
		return nil, false
	}
	if strings.HasPrefix(req.startRel, "..") {
		return nil, false
	}
	pat, ok := rustPattern(req.spec.m.tree)
	if !ok || len(pat) > 32<<10 {
		return nil, false
	}
	if req.startRel != "" && parentHasIgnore(req.root) {
		return nil, false
	}
	bin, err := lookpath.Outside("rg", req.avoid...)
	if err != nil {
		return nil, false
	}
	args := []string{"--no-config", "--null", "--no-heading", "--with-filename", "--color", "never",
		"--hidden", "-g", "!.git", "-g", "!node_modules",
		"--no-ignore-global", "--no-ignore-exclude", "--no-ignore-dot", "--no-require-git",
		"--text", "--encoding", "none", "--path-separator", "/",
		"--max-filesize", strconv.Itoa(maxSearchSize)}
	if req.startRel == "" {
		// The native walk reads no ignore file above the workspace root.
		args = append(args, "--no-ignore-parent")
	}
	for _, g := range req.typeGlobs {
		args = append(args, "--type-add", "reasonix:"+g)
	}
	if len(req.typeGlobs) > 0 {
		args = append(args, "-t", "reasonix")
	}
	args = append(args, "-l")
	target := "."
	if req.startRel != "" {
		target = filepath.FromSlash(req.startRel)
	}
	args = append(args, "-e", pat, "--", target)

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(runCtx, bin, args...)
	cmd.Dir = req.root
	cmd.Env = []string{}
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, false
	}
	if err := cmd.Start(); err != nil {
		return nil, false
	}
	// Ripgrep's output comes in no fixed order, so a cut-off prefix is not
	// the native answer's prefix. Past the cap (of names: a search that
	// lists that much finds far more to show) it is killed and the native
	// search, which stops at the same cap in path order, answers instead.
	var stdout bytes.Buffer
	over := false
	if req.maxBytes > 0 {
		_, _ = io.Copy(&stdout, io.LimitReader(pipe, int64(req.maxBytes)+1))
		over = stdout.Len() > req.maxBytes
	} else {
		_, _ = io.Copy(&stdout, pipe)
	}
	if over {
		cancel()
	}
	err = cmd.Wait()
	if over || ctx.Err() != nil {
		return nil, false
	}
	if err != nil {
		// Exit status 1 means no match; anything else (a bad pattern, an
		// unreadable file) is left to the native search to report or skip.
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
			return nil, false
		}
	}
	var rels []string
	for _, p := range strings.Split(stdout.String(), "\x00") {
		if p != "" {
			rels = append(rels, cleanRgPath(p))
		}
	}
	return rels, true
}

// parentHasIgnore reports whether a directory above root holds a .gitignore:
// ripgrep would honour it when searching a subdirectory and the native
// walker would not.
func parentHasIgnore(root string) bool {
	for d := filepath.Dir(root); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(filepath.Join(d, ".gitignore")); err == nil {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

func cleanRgPath(p string) string { return strings.TrimPrefix(p, "./") }

// rustPattern spells an RE2 tree in Rust regex syntax with the same meaning.
// It refuses constructs that could match an invalid UTF-8 byte: Go reads such
// a byte as U+FFFD and Rust never matches it, so the engines would disagree.
func rustPattern(re *syntax.Regexp) (string, bool) {
	var b strings.Builder
	if !writeRust(&b, re) {
		return "", false
	}
	return b.String(), true
}

func writeRust(b *strings.Builder, re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpEmptyMatch:
		b.WriteString("(?:)")
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			b.WriteString("(?i:")
		}
		for _, r := range re.Rune {
			writeRustRune(b, r)
		}
		if re.Flags&syntax.FoldCase != 0 {
			b.WriteString(")")
		}
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return false
		}
		b.WriteString("[")
		for i := 0; i < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			if lo <= unicode.ReplacementChar && unicode.ReplacementChar <= hi {
				return false
			}
			writeRustRune(b, lo)
			if hi != lo {
				b.WriteString("-")
				writeRustRune(b, hi)
			}
		}
		b.WriteString("]")
	case syntax.OpBeginLine:
		b.WriteString("(?m:^)")
	case syntax.OpEndLine:
		b.WriteString("(?m:$)")
	case syntax.OpWordBoundary:
		b.WriteString(`(?-u:\b)`)
	case syntax.OpNoWordBoundary:
		b.WriteString(`(?-u:\B)`)
	case syntax.OpCapture:
		return writeRustGroup(b, re.Sub[0])
	case syntax.OpStar, syntax.OpPlus, syntax.OpQuest, syntax.OpRepeat:
		if !writeRustGroup(b, re.Sub[0]) {
			return false
		}
		switch re.Op {
		case syntax.OpStar:
			b.WriteString("*")
		case syntax.OpPlus:
			b.WriteString("+")
		case syntax.OpQuest:
			b.WriteString("?")
		default:
			if re.Max < 0 {
				fmt.Fprintf(b, "{%d,}", re.Min)
			} else {
				fmt.Fprintf(b, "{%d,%d}", re.Min, re.Max)
			}
		}
		if re.Flags&syntax.NonGreedy != 0 {
			b.WriteString("?")
		}
	case syntax.OpConcat:
		for _, s := range re.Sub {
			if !writeRustGroup(b, s) {
				return false
			}
		}
	case syntax.OpAlternate:
		b.WriteString("(?:")
		for i, s := range re.Sub {
			if i > 0 {
				b.WriteString("|")
			}
			if !writeRust(b, s) {
				return false
			}
		}
		b.WriteString(")")
	default:
		// Any-char (matches U+FFFD), text anchors, no-match.
		return false
	}
	return true
}

func writeRustGroup(b *strings.Builder, re *syntax.Regexp) bool {
	b.WriteString("(?:")
	ok := writeRust(b, re)
	b.WriteString(")")
	return ok
}

func writeRustRune(b *strings.Builder, r rune) {
	if r < 0x80 && (r == '_' || r == ' ' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
		b.WriteRune(r)
		return
	}
	fmt.Fprintf(b, `\x{%X}`, r)
}
