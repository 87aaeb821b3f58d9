package events

// Question is what the ask tool puts to a person (on QuestionRequest)
// and, on QuestionResolved, how it ended. Front ends answer it by ID
// through their engine's AnswerQuestion command.
type Question struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	// Choices are suggested answers; a person may still answer freely.
	Choices []string `json:"choices,omitempty"`
	// Answer is set on QuestionResolved; empty when the question was
	// withdrawn (its call was cancelled).
	Answer string `json:"answer,omitempty"`
}
