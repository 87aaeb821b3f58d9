// Command reasonix is a terminal coding agent that drives OpenAI-compatible
// models through a multi-agent orchestrator. main decides flags, assembly,
// messages and exit codes; everything else lives in libraries.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/term"

	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/internal/text"
)

// version is injected at build time with -ldflags "-X main.version=...".
var version = "dev"

// Exit codes (docs/SPEC.md).
const (
	exitOK          = 0
	exitFailure     = 1 // model or provider failure
	exitUsage       = 2 // usage or config error
	exitInterrupted = 130
)

// usageError marks errors that are the user's to fix (flags, config).
type usageError struct{ err error }

func (u usageError) Error() string { return u.err.Error() }
func (u usageError) Unwrap() error { return u.err }

func usagef(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

type stdio struct {
	in       io.Reader
	out, err io.Writer
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == permission.SandboxHelperArg {
		// The sandbox starts a command through this binary to hide
		// files from it (permission.HiddenReads); it execs the command.
		err := permission.RunSandboxHelper(os.Args[2:])
		fmt.Fprintln(os.Stderr, "reasonix:", err)
		os.Exit(126)
	}
	io := stdio{os.Stdin, os.Stdout, os.Stderr}
	if len(os.Args) > 1 && instant(os.Args[1]) {
		// Nothing to interrupt: skip catching signals, which starts a
		// goroutine locked to a thread of its own.
		os.Exit(dispatch(context.Background(), os.Args[1:], io))
	}
	// What a model, a tool or a server wrote reaches a terminal as text,
	// never as escape sequences driving it (a cleared screen, a carriage
	// return overwriting the command a person is asked about, OSC 52
	// setting the clipboard).
	if term.IsTerminal(int(os.Stdout.Fd())) {
		io.out = text.Printable(os.Stdout)
	}
	if term.IsTerminal(int(os.Stderr.Fd())) {
		io.err = text.Printable(os.Stderr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	caught := make(chan struct{})
	go func() {
		// Signals are caught off the path to the first request: setting
		// up the signal thread costs 0.5-1 ms. The first interrupt cancels
		// in-flight work cleanly; after it, signals are no longer caught,
		// so a second one ends the process at once if something is slow
		// to wind down.
		defer close(caught)
		sigs := make(chan os.Signal, 1)
		signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
		defer signal.Stop(sigs)
		select {
		case <-sigs:
			cancel()
		case <-ctx.Done():
		}
	}()
	code := dispatch(ctx, os.Args[1:], io)
	if ctx.Err() == nil {
		cancel()
		<-caught
	}
	os.Exit(code)
}

// instant reports the commands that print and exit (version, help).
func instant(cmd string) bool {
	switch cmd {
	case "version", "--version", "-v", "help", "--help", "-h":
		return true
	}
	return false
}

const helpText = `reasonix — a terminal coding agent

Usage:
  reasonix [chat] [flags] [PROMPT]
                                   interactive mode (in a terminal; /help inside), PROMPT its first turn:
                                   reasonix "fix the bug" (a prompt of one ASCII word needs chat:
                                   reasonix chat WORD; a near miss of a command says which it meant)
  reasonix -c, --continue [PROMPT] go on with the newest conversation of this project
  reasonix -r, --resume [ID] [PROMPT]
                                   go on with that conversation (a unique prefix will do), or
                                   pick one from a list; with -p PROMPT (-r then with an ID), headless
  reasonix run [flags] PROMPT      run a task headless (PROMPT "-" reads stdin; reasonix -p PROMPT too)
  reasonix plan [flags] PROMPT     research and print a plan (--execute to run it)
  reasonix sessions [--json]       list this project's sessions, newest first
  reasonix fork ID [--at TURN]     start a new session from a session (before turn TURN); of one
                                   changed outside Reasonix, from what Reasonix wrote
                                   (--accept-modified: from the file as it stands)
  reasonix rewind [ID] [--to TURN] [--files-only|--conversation-only] [--undo]
                                   take the conversation and the files back to before a turn
  reasonix acp [--auto|--yolo]     serve an editor over the Agent Client Protocol on stdio
                                   (--mcp-trust / --hooks-trust: trust the project's MCP servers / hooks)
  reasonix serve [--addr A] [--no-open]
                                   a browser UI on a loopback address, behind a token
                                   (--mcp-trust / --hooks-trust: trust the project's MCP servers / hooks)
  reasonix stats [ID] [--json]     tokens, cache hits, cost and cache resets of a session, turn by turn
  reasonix compact [ID] [--focus TEXT]
                                   fold a conversation's earlier work into a digest now
                                   (the newest conversation without ID)
  reasonix replay [ID] [--as-script]
                                   show a saved session again without a model; --as-script prints
                                   a scripted-provider script that makes run repeat its calls
  reasonix diff A B [--json]       compare two sessions turn by turn: tool calls, tokens, cache, cost
  reasonix commands [--json]       list the slash commands (custom commands, skills, MCP prompts) and their source
  reasonix balance [--model REF] [--json]
                                   the provider account's balance (DeepSeek's /user/balance)
  reasonix mcp list                list the MCP servers, their state and tool counts
  reasonix mcp get NAME            show one MCP server's tools, prompts and resources
                                   (--mcp-trust starts a project's untrusted servers for this command)
  reasonix mcp login NAME          sign in to a remote MCP server that asks for OAuth (opens the browser)
  reasonix mcp logout NAME         forget that sign-in
  reasonix models                  list the configured models
  reasonix config                  print the merged config and where each value came from
  reasonix context [--json] [--role NAME]
                                   print the frozen prompt prefix (role prompt, rules files,
                                   environment, tools) part by part with sizes
  reasonix setup [--provider P] [--base-url URL] [--model M] [--name N] [--yes]
                                   add a working provider to ~/.reasonix/config.toml: P is
                                   deepseek, qwen, mimo, openai, openrouter or local; the key is
                                   read from the environment, asked for only when missing, and
                                   the endpoint tested first (--no-test skips; --force starts the
                                   file afresh; --example prints a commented example config)
  reasonix demo [--headless]       watch a scripted session fix a bug in a sample project
                                   (no key, no network)
  reasonix doctor                  report providers, sandbox, permissions, hooks, and what was done
                                   with each Claude Code or OpenCode file found
  reasonix trust [--revoke]        let this project's files name model endpoints, loosen the sandbox,
                                   set auto/yolo or allow calls (held until you trust it)
  reasonix version                 print the version

Run flags:
  --model REF          provider, model, or provider/model
  --config FILE        config file that overrides the project and user files
  --max-steps N        tool-loop step limit
  --output-format F    text (default), json, or stream-json
  --input-format F     text (default), or stream-json: turns, approval answers and
                       interrupts as JSON lines on stdin (needs --output-format stream-json)
  --plan ID|FILE       execute a saved plan
  --goal TEXT          keep working until the goal is reported done
                       (--goal resume continues a saved goal, --goal clear forgets it)
  --yolo / --auto      permission posture for this run
  --hooks-trust        run this project's hooks (reasonix.toml, .claude/settings*.json)
                       without asking; headless runs skip untrusted project hooks
  --mcp-trust          start this project's .mcp.json servers without asking (also chat,
                       acp and serve)
  --continue, -c       add the turn to the newest session of this project (also chat;
                       -c at the top level: reasonix -c -p PROMPT)
  --resume ID, -r ID   add the turn to that session; a unique prefix will do (also chat,
                       where a bare --resume or -r opens the list of conversations)

Exit codes: 0 done, 1 model or provider failure, 2 usage or config error, 130 interrupted.
`

func dispatch(ctx context.Context, args []string, io stdio) int {
	if len(args) == 0 {
		// A person at a terminal gets the interactive front end; a script
		// gets the usage and a usage exit code, as before.
		if !isTerminal(io.in) || !isTerminal(io.out) {
			fmt.Fprint(io.err, helpText)
			return exitUsage
		}
		args = []string{"chat"}
	}
	switch a := args[0]; {
	case a == "--version" || a == "--help" || a == "-h" || a == "-v":
	case strings.HasPrefix(a, "-") || barePrompt(a):
		// "reasonix [chat] [flags] [PROMPT]": reasonix --continue or
		// reasonix "fix the bug", as Claude Code users type them (with its
		// short forms -c and -r); with Claude Code's -p (print), a
		// headless run.
		args = claudeShortFlags(args)
		if i := slices.IndexFunc(args, func(s string) bool { return s == "-p" || s == "--print" }); i >= 0 {
			args = append([]string{"run"}, slices.Delete(slices.Clone(args), i, i+1)...)
		} else {
			args = append([]string{"chat"}, args...)
		}
	}
	var err error
	switch args[0] {
	case "chat":
		err = cmdChat(ctx, args[1:], io)
	case "version", "--version", "-v":
		fmt.Fprintf(io.out, "reasonix %s\n", version)
		return exitOK
	case "help", "--help", "-h":
		fmt.Fprint(io.out, helpText)
		return exitOK
	case "run":
		err = cmdRun(ctx, args[1:], io, false)
	case "plan":
		err = cmdRun(ctx, args[1:], io, true)
	case "models":
		err = cmdModels(args[1:], io)
	case "config":
		err = cmdConfig(args[1:], io)
	case "context":
		err = cmdContext(args[1:], io)
	case "demo":
		err = cmdDemo(ctx, args[1:], io)
	case "setup":
		err = cmdSetup(ctx, args[1:], io)
	case "doctor":
		err = cmdDoctor(args[1:], io)
	case "trust":
		err = cmdTrust(args[1:], io)
	case "sessions":
		err = cmdSessions(args[1:], io)
	case "commands":
		err = cmdCommands(ctx, args[1:], io)
	case "fork":
		err = cmdFork(args[1:], io)
	case "rewind":
		err = cmdRewind(ctx, args[1:], io)
	case "stats":
		err = cmdStats(args[1:], io)
	case "replay":
		err = cmdReplay(args[1:], io)
	case "diff":
		err = cmdDiff(args[1:], io)
	case "balance":
		err = cmdBalance(ctx, args[1:], io)
	case "acp":
		err = cmdACP(ctx, args[1:], io)
	case "serve":
		err = cmdServe(ctx, args[1:], io)
	case "mcp":
		err = cmdMCP(ctx, args[1:], io)
	case "compact":
		err = cmdCompact(ctx, args[1:], io)
	default:
		unknownCommand(io.err, args)
		return exitUsage
	}
	return exitCode(ctx, err, io.err)
}

// claudeShortFlags spells Claude Code's -c and -r as the --continue and
// --resume the chat and run flags know.
func claudeShortFlags(args []string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		switch a {
		case "--":
			return out
		case "-c":
			out[i] = "--continue"
		case "-r":
			out[i] = "--resume"
		}
	}
	return out
}

// exitCode prints err and maps it to the documented exit codes.
func exitCode(ctx context.Context, err error, w io.Writer) int {
	if err == nil {
		return exitOK
	}
	var ue usageError
	switch {
	case errors.Is(err, flag.ErrHelp):
		// -h or --help: the flag set has printed the command's usage.
		return exitOK
	case ctx.Err() != nil || errors.Is(err, context.Canceled):
		fmt.Fprintln(w, "reasonix: interrupted")
		return exitInterrupted
	case errors.As(err, &ue):
		fmt.Fprintf(w, "reasonix: %v\n", err)
		return exitUsage
	default:
		fmt.Fprintf(w, "reasonix: %v\n", err)
		return exitFailure
	}
}
