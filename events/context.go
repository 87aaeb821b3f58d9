package events

// ContextInfo is how full a session's context window is: the figure the
// status line shows and `/context` prints. Compaction events carry the
// sizes before and after.
type ContextInfo struct {
	// Used is the size in tokens of the newest request (the provider's
	// prompt_tokens when reported, else the estimate); Limit is the
	// model's context window (0: unknown, compaction off).
	Used  int `json:"used"`
	Limit int `json:"limit"`
	// Percent is Used of Limit, rounded down (0 when Limit is 0).
	Percent int `json:"percent"`
	// Parts break Used down (system, rules, skills, tools, history), in
	// estimated tokens scaled to Used; only /context fills them.
	Parts []ContextPart `json:"parts,omitempty"`
	// Compaction only: the estimated request size before and after, and
	// what changed.
	Before int `json:"before,omitempty"`
	After  int `json:"after,omitempty"`
	Pruned int `json:"pruned,omitempty"`
	Folded int `json:"folded,omitempty"`
	// Focus is what a manual compaction was asked to keep (/compact FOCUS).
	Focus string `json:"focus,omitempty"`
	// Archive is the file holding the folded originals ("" without one).
	Archive string `json:"archive,omitempty"`
}

// ContextPart is one part of a request, in estimated tokens.
type ContextPart struct {
	Name   string `json:"name"`
	Tokens int    `json:"tokens"`
}

// Percent is used of limit in whole percent, 0 when limit is unknown.
func Percent(used, limit int) int {
	if limit <= 0 || used <= 0 {
		return 0
	}
	return int(int64(used) * 100 / int64(limit))
}

// ValidationRun is one run of the validation command after a turn that
// changed files.
type ValidationRun struct {
	Command string `json:"command"`
	// Source says where the command came from: "config", "plan" or
	// "detected".
	Source string `json:"source"`
	// Attempt counts the runs of this turn, from 1.
	Attempt int  `json:"attempt"`
	Passed  bool `json:"passed"`
	// ExitCode is the command's exit status (-1 when it did not run).
	ExitCode int `json:"exit_code"`
	// Output is the tail of what it printed.
	Output string `json:"output,omitempty"`
	Millis int64  `json:"ms"`
}
