package events

import "time"

// Goal states saved in GoalState.Status.
const (
	GoalActive  = "active"
	GoalStopped = "stopped"
	// GoalDone and GoalBlocked double as final states.
)

// Reasons a goal stops, in GoalState.Reason.
const (
	ReasonDone      = "done"
	ReasonBlocked   = "blocked"
	ReasonMaxTurns  = "max_turns"
	ReasonCancelled = "cancelled"
	// ReasonPromptBlocked: a UserPromptSubmit hook blocked the goal's
	// prompt before any turn ran.
	ReasonPromptBlocked = "prompt_blocked"
)

// Goal statuses reported through goal_status.
const (
	GoalDone     = "done"
	GoalBlocked  = "blocked"
	GoalContinue = "continue"
)

// GoalReport is one goal_status call.
type GoalReport struct {
	Status   string `json:"status"`
	Summary  string `json:"summary" jsonschema:"What was achieved, or what blocks you"`
	Evidence string `json:"evidence,omitempty" jsonschema:"How you know: test output, files changed, commands run"`
}

// GoalState is the saved progress of a goal, rewritten after every turn so
// a goal survives a restart, and published as GoalUpdate.
type GoalState struct {
	Goal     string `json:"goal"`
	Status   string `json:"status"` // active | done | blocked | stopped
	Reason   string `json:"reason,omitempty"`
	Turns    int    `json:"turns"`
	MaxTurns int    `json:"max_turns"`
	// Last is the newest goal_status report; nil before the first.
	Last *GoalReport `json:"last,omitempty"`
	// BlockedCount counts blocked reports with the same normalised summary
	// (BlockedKey).
	BlockedCount int    `json:"blocked_count,omitempty"`
	BlockedKey   string `json:"blocked_key,omitempty"`
	// Research is the goal's research log, relative to the workspace
	// (.reasonix/research/<session>/log.md), for a research goal.
	Research   string    `json:"research,omitempty"`
	SessionID  string    `json:"session_id,omitempty"`
	Transcript string    `json:"transcript,omitempty"`
	Started    time.Time `json:"started"`
	Updated    time.Time `json:"updated"`
}

// RewindResult says what a rewind did: the turn gone back to, whether the
// conversation was cut back, and the files restored, re-created, removed
// and left alone (ignored or too large).
type RewindResult struct {
	Session      string   `json:"session"`
	To           int      `json:"to"`
	Turns        int      `json:"turns"`
	Conversation bool     `json:"conversation,omitempty"`
	Undone       bool     `json:"undone,omitempty"`
	NoChanges    bool     `json:"no_changes,omitempty"`
	Restored     []string `json:"restored,omitempty"`
	Created      []string `json:"created,omitempty"`
	Removed      []string `json:"removed,omitempty"`
	Kept         []string `json:"kept,omitempty"`
}
