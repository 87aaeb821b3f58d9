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

// QuestionSkipped is the answer a front end gives when the person
// dismisses a question: the model goes on under an assumption it labels.
const QuestionSkipped = `(the user chose not to answer; proceed on an assumption you state, beginning that part of your reply with "Assumption:")`
