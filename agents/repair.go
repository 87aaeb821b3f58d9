package agents

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/repair"
	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/tools"
)

// finishLength is the finish reason of an answer cut by the output token
// limit.
const finishLength = "length"

// continueCut is the user turn that asks a model cut off by the output
// limit to go on (once per Send).
const continueCut = "Your last answer was cut off at the output token limit (finish_reason=length). " +
	"Continue from where it stopped. If you were calling a tool, send the whole call again as a tool call, " +
	"with shorter arguments if they were long."

// repairTurn fixes what the model got wrong in a freshly streamed
// assistant message, before it joins the history: the history holds, and
// the next request sends, the repaired message, so the prefix stays
// byte-stable. In order: argument JSON cut short is closed when the
// result validates; when the message has no tool calls, calls written as
// markup or JSON in the answer (or, failing that, in the reasoning) are
// recovered and their markup removed from the answer.
func (s *Session) repairTurn(msg *providers.Message) {
	for i := range msg.ToolCalls {
		c := &msg.ToolCalls[i]
		args := c.Function.Arguments
		if strings.TrimSpace(args) == "" || json.Valid([]byte(args)) {
			continue
		}
		fixed, ok := repair.CloseJSON(args)
		if !ok || s.checkArgs(c.Function.Name, fixed) != nil {
			continue
		}
		// Closing only braces loses nothing. Closing a string or
		// dropping a half-written member may: when the output limit cut
		// the answer, that value is surely incomplete (a file's content,
		// a path), so the call is refused and the model told instead.
		lossless := strings.HasPrefix(fixed, args) && strings.Trim(fixed[len(args):], "}] \n") == ""
		if !lossless && s.finish == finishLength {
			continue
		}
		c.Function.Arguments = fixed
		s.publish(events.Event{Type: events.Notice, Text: fmt.Sprintf("repaired the cut-off arguments of %s", c.Function.Name)})
	}
	if len(msg.ToolCalls) > 0 {
		return
	}
	calls, visible := repair.Scavenge(msg.Content, s.acceptCall)
	where := "the answer"
	if len(calls) > 0 {
		msg.Content = visible
	} else if r := msg.ReasoningContent; r != "" {
		// Reasoning is thinking: a call there counts only when the model
		// gave no answer, ended on tool_calls, or wrote explicit markup.
		if _, held := repair.Holdback(r, 0); held || strings.TrimSpace(msg.Content) == "" || s.finish == "tool_calls" {
			calls, _ = repair.Scavenge(r, s.acceptCall)
			where = "the reasoning"
		}
	}
	for i, c := range calls {
		msg.ToolCalls = append(msg.ToolCalls, providers.ToolCall{
			ID: fmt.Sprintf("call_%d_%d", len(s.msgs), i), Type: "function",
			Function: providers.FunctionCall{Name: c.Name, Arguments: c.Arguments},
		})
	}
	if len(calls) > 0 {
		s.publish(events.Event{Type: events.Notice, Text: fmt.Sprintf("recovered %d tool call(s) written in %s", len(calls), where)})
	}
}

// acceptCall keeps a recovered call only when it names a tool of this
// session and its arguments validate against the advertised schema.
func (s *Session) acceptCall(name, args string) bool {
	if _, ok := s.cfg.Tools.Get(name); !ok {
		return false
	}
	return s.checkArgs(name, args) == nil
}

// checkArgs validates args against the schema the model was shown.
func (s *Session) checkArgs(name, args string) error {
	for _, sp := range s.specs {
		if sp.Name == name {
			return repair.Validate(sp.Parameters, args)
		}
	}
	return fmt.Errorf("unknown tool %q", name)
}

// badArgs is the result for a call whose arguments are not valid JSON:
// when the output limit cut them, the model is told so and why.
func (s *Session) badArgs(c providers.ToolCall) tools.Result {
	if s.finish == finishLength {
		return tools.Result{IsError: true, Summary: "arguments cut off", Content: fmt.Sprintf(
			"Error: the arguments of %s were cut off after %d bytes: your answer reached the output token limit "+
				"(finish_reason=length) before the call was complete, so it did not run. Send the call again; "+
				"if an argument is long (a whole file), split the work into smaller calls.",
			c.Function.Name, len(c.Function.Arguments))}
	}
	return tools.Result{IsError: true, Content: fmt.Sprintf("Error: the arguments of %s are not valid JSON (%q); resend the call with a JSON object matching its schema",
		c.Function.Name, text.Clip(c.Function.Arguments, 200))}
}

// admit runs the storm breaker over the calls of one message, in order;
// it returns the result of each call that must not run (nil for the
// others).
func (s *Session) admit(calls []providers.ToolCall) []*callResult {
	out := make([]*callResult, len(calls))
	for i, c := range calls {
		if s.storm.Admit(c.Function.Name, c.Function.Arguments, s.readOnly(c)) {
			continue
		}
		out[i] = &callResult{res: tools.Result{IsError: true, Summary: "repeated call not run", Content: fmt.Sprintf(
			"Error: not run: this exact %s call already ran %d times and nothing has changed since. "+
				"Its result is above; repeating it will not change it. Change approach: use what you have, try different "+
				"arguments or another tool, or say what is blocking you.", c.Function.Name, repair.DefaultLimit)}}
	}
	return out
}

// showText publishes the streamed answer up to any tool markup, which is
// held back (it may become a recovered call); flushText publishes the
// rest of the answer once it is repaired.
func (s *Session) showText(full string) {
	if s.held {
		return
	}
	show, held := repair.Holdback(full, s.shown)
	s.held = held
	if show > s.shown {
		s.publish(events.Event{Type: events.TextDelta, Text: full[s.shown:show]})
		s.shown = show
	}
}

// flushText publishes what showText held back of the original answer,
// now that final is the answer to keep (the original less recovered
// markup).
func (s *Session) flushText(original, final string) {
	shown := original[:s.shown]
	if strings.HasPrefix(final, shown) && len(final) > len(shown) {
		s.publish(events.Event{Type: events.TextDelta, Text: final[len(shown):]})
	}
	s.shown, s.held = 0, false
}

// publishBlocked shows a call the storm breaker did not run.
func (s *Session) publishBlocked(c providers.ToolCall, r callResult) {
	info := &events.Tool{CallID: c.ID, Name: c.Function.Name}
	if json.Valid([]byte(c.Function.Arguments)) {
		info.Args = json.RawMessage(c.Function.Arguments)
		if t, ok := s.cfg.Tools.Get(c.Function.Name); ok {
			if acc, err := tools.Describe(t, info.Args); err == nil {
				info.Kind, info.Subject = string(acc.Kind), acc.Subject()
			}
		}
	}
	s.publish(events.Event{Type: events.ToolStart, Tool: info})
	end := *info
	end.Result, end.IsError, end.Summary = r.res.Content, true, r.res.Summary
	s.publish(events.Event{Type: events.ToolEnd, Tool: &end})
}

// recordArgs is a call's arguments as a JSON value for its CallRecord:
// arguments that are not valid JSON (cut off, malformed) are kept as a
// JSON string, so records still encode (--output-format json).
func recordArgs(args string) json.RawMessage {
	if json.Valid([]byte(args)) {
		return json.RawMessage(args)
	}
	b, _ := json.Marshal(args)
	return b
}
