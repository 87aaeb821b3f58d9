package events

// Choices a person may give to an ApprovalRequest. The gate offers a
// subset: a dangerous call is never allowed beyond this one call.
const (
	ChoiceAllow        = "allow"
	ChoiceAllowSession = "allow_session"
	ChoiceAllowAlways  = "allow_always"
	ChoiceDeny         = "deny"
)

// Preview is a structured view of what a writing call would change.
type Preview struct {
	Path      string `json:"path"`
	Operation string `json:"operation"` // create | update | delete | move | patch
	Diff      string `json:"diff,omitempty"`
	Added     int    `json:"added,omitempty"`
	Removed   int    `json:"removed,omitempty"`
}

// Approval is a question to a person about one tool call (on
// ApprovalRequest) and, on ApprovalResolved, how it ended. Front ends
// answer it by ID through their engine's Answer command.
type Approval struct {
	ID string `json:"id"`
	// CallID is the tool call asked about (the ToolStart event's call_id).
	CallID  string `json:"call_id,omitempty"`
	Tool    string `json:"tool"`
	Subject string `json:"subject,omitempty"`
	// Command is the exact shell command line (bash only).
	Command string `json:"command,omitempty"`
	// Reason is the text the model gave before the call.
	Reason string `json:"reason,omitempty"`
	// Impact says what the call would do, in a sentence.
	Impact    string    `json:"impact,omitempty"`
	Dangerous bool      `json:"dangerous,omitempty"`
	Preview   []Preview `json:"preview,omitempty"`
	// Rules are what allow_always would save.
	Rules   []string `json:"rules,omitempty"`
	Choices []string `json:"choices"`
	// Step is the plan step whose worker asks, when a plan runs in
	// parallel: several workers' questions queue in one place.
	Step string `json:"step,omitempty"`
	// Choice is set on ApprovalResolved: the answer taken, or empty when
	// the question was withdrawn (its call was cancelled).
	Choice string `json:"choice,omitempty"`
}

// Offers reports whether choice is one of a's choices.
func (a *Approval) Offers(choice string) bool {
	for _, c := range a.Choices {
		if c == choice {
			return true
		}
	}
	return false
}
