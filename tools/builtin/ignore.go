package builtin

// alwaysSkipped names entries no tool descends into or lists: version control
// internals and vendored JavaScript, which drown every search. .gitignore
// rules are internal/gitignore's.
func alwaysSkipped(name string) bool {
	return name == ".git" || name == "node_modules"
}
