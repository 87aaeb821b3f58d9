package agents

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/reasonix/reasonix/events"
)

// contextOverflow reports whether err is a provider refusing a request
// as longer than the model's context, and the context size the error
// names (0 when it names none). Servers word it differently: OpenAI,
// DeepSeek, vLLM and OpenRouter "maximum context length is N tokens",
// llama.cpp "exceeds the available context size", SGLang "the model's
// context length (N tokens)", DashScope "Range of input length should be
// [1, N]", LM Studio "context length of only N tokens".
func contextOverflow(err error) (int, bool) {
	var sc interface{ StatusCode() int }
	if !errors.As(err, &sc) || (sc.StatusCode() != 400 && sc.StatusCode() != 413) {
		return 0, false
	}
	msg := strings.ToLower(err.Error())
	for _, p := range []struct {
		phrase string
		// comma: the size follows the first comma (a range).
		comma bool
	}{
		{phrase: "maximum context length is"},
		{phrase: "context length of only"},
		{phrase: "model's context length ("},
		{phrase: "range of input length should be [", comma: true},
		{phrase: "exceeds the available context size"},
		{phrase: "context_length_exceeded"},
		{phrase: "prompt is too long"},
	} {
		i := strings.Index(msg, p.phrase)
		if i < 0 {
			continue
		}
		rest := msg[i+len(p.phrase):]
		if p.comma {
			if j := strings.IndexByte(rest, ','); j >= 0 {
				rest = rest[j+1:]
			}
		}
		return leadingNumber(rest), true
	}
	return 0, false
}

// leadingNumber is the integer that starts s after spaces, or 0.
func leadingNumber(s string) int {
	s = strings.TrimLeft(s, " ")
	end := 0
	for end < len(s) && s[end] >= '0' && s[end] <= '9' {
		end++
	}
	n, _ := strconv.Atoi(s[:end])
	return n
}

// recoverOverflow answers a request the provider refused as too long for
// the model's context (limit: the size its error named, 0 when none): the
// window becomes what the provider said (or, unnamed and unknown, the
// size of the refused request), and the history is compacted so the
// request can be sent again. It fails when there was nothing to compact.
func (s *Session) recoverOverflow(ctx context.Context, out *Outcome, limit int) error {
	w, est := s.cfg.ContextWindow, s.estimate()
	switch {
	case limit > 0 && (w <= 0 || limit < w):
		w = limit
	case w <= 0:
		w = est
	}
	s.cfg.ContextWindow = w
	said := "the size of the refused request, ~" + strconv.Itoa(w)
	if limit > 0 {
		said = strconv.Itoa(limit) + ", as its error says"
	}
	s.publish(events.Event{Type: events.Notice, Text: fmt.Sprintf(
		"the provider refused the request as longer than the model's context; compacting to fit a window of %s tokens and sending it again (set context_window = %d for this model to compact before that happens)",
		said, w)})
	s.autoCompact = true
	c, err := s.compact(ctx, out, "", true)
	s.autoCompact = false
	if err != nil {
		return err
	}
	if c.Pruned == 0 && c.Folded == 0 {
		return errors.New("nothing earlier to compact")
	}
	return nil
}
