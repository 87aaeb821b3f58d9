package orchestrator

import "strings"

// initName is the built-in /init, the command Claude Code, Codex,
// OpenCode and Crush users type first in a new project: it asks the
// model to write the project's rules file. A custom command, skill or
// MCP prompt of that name wins. Front ends list it among their own
// commands; Commands() lists what the project and user installed.
const initName = "init"

// initPrompt is the turn /init sends; args, when given, say what to
// stress.
func initPrompt(args string) string {
	var b strings.Builder
	b.WriteString(`Study this repository and write its rules file, AGENTS.md at the project root, which every later session reads before it starts.

Read what is there first: the README, the build files (Makefile, go.mod, package.json, pyproject.toml, Cargo.toml and the like), CI configuration, and a few central source files. If AGENTS.md exists, improve it instead of starting over; if only CLAUDE.md exists, improve that file instead of writing a second one.

Write what a capable newcomer could not guess quickly and would get wrong without:
- the commands that build, lint and test the project, including how to run a single test;
- the architecture in a few lines: the main parts, where they live and how they fit;
- the conventions the code follows that differ from the language's defaults;
- anything surprising: generated files, required environment, order-dependent steps.

Keep it short (under about 100 lines), concrete and true to the code: no generic advice, nothing you did not see in the repository. When it is written, say in two or three lines what you put in it.`)
	if a := strings.TrimSpace(args); a != "" {
		b.WriteString("\n\nThe user adds: " + a)
	}
	return b.String()
}
