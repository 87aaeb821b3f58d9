package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/tools"
)

// NoOneToAsk starts the ask tool's answer in a run no one watches.
const NoOneToAsk = "No one to ask in this run"

type askArgs struct {
	Question string   `json:"question" jsonschema:"Complete and answerable on its own"`
	Choices  []string `json:"choices,omitempty" jsonschema:"The likely answers, when there are a few"`
}

// askTool puts a question to the person running Reasonix.
type askTool struct{}

func (askTool) Name() string { return "ask" }

func (askTool) Description() string {
	return "Ask the user and wait for the answer: when the request is ambiguous in a way that changes the result, " +
		"or before an irreversible choice; not for what the other tools can find out. " +
		"When no one can answer, go on under an assumption you state."
}

func (askTool) Schema() json.RawMessage { return json.RawMessage(askSchema) }

// ReadOnly is true: a question changes nothing (and the planner may ask).
func (askTool) ReadOnly() bool { return true }

func (askTool) Access(json.RawMessage) (tools.Access, error) {
	return tools.Access{Kind: tools.KindOther, SessionOnly: true, Detail: "question"}, nil
}

func (askTool) Execute(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	var a askArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return tools.Result{}, err
	}
	a.Question = strings.TrimSpace(a.Question)
	if a.Question == "" {
		return tools.Result{}, fmt.Errorf("question is empty")
	}
	if env.Asker == nil {
		return noOneToAsk(), nil
	}
	ans, err := env.Asker.Ask(ctx, env, events.Question{Text: a.Question, Choices: a.Choices})
	if errors.Is(err, tools.ErrNoOneToAsk) {
		return noOneToAsk(), nil
	}
	if err != nil {
		return tools.Result{}, fmt.Errorf("question not answered: %w", err)
	}
	return tools.Result{Content: "The user answered: " + ans, Summary: "answered: " + ans}, nil
}

// noOneToAsk is the answer when no person will answer.
func noOneToAsk() tools.Result {
	return tools.Result{
		Content: NoOneToAsk + ": no person can answer. Proceed on a stated assumption: pick the most reasonable answer, " +
			"and begin the part of your reply that depends on it with \"Assumption:\" so the user sees it was not their answer.",
		Summary: "no one to ask; proceeding on a stated assumption",
	}
}
