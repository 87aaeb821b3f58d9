package agents

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/providers"
)

// Compaction keeps a long session inside its model's context window. It is
// the one deliberate reset of the cache-stable prefix: between two
// compactions every request extends the previous one byte for byte.
//
// Before each request the session estimates the request's size (encoded
// bytes / 4, scaled by the ratio of the provider's reported prompt_tokens
// to that estimate). It compacts when the last request's reported prompt
// tokens reached CompactRatio of the window, or when the estimate is over
// the window:
//
//  1. prune: tool results older than the newest ones, past a budget,
//     become a one-line stub;
//  2. fold: if still too big, the assistant and tool messages before the
//     newest turns are replaced by a digest the session's own model writes
//     (one request without tools). User turns stay verbatim (clipped only
//     past a pin budget) and so do earlier digests; the boundary is always
//     the start of a user turn, so no tool result is separated from its
//     call and the newest turns stay whole.
//
// The originals of everything replaced go to Config.OnCompact (the
// coordinator archives them beside the session file).

// DefaultCompactRatio is the share of the window that triggers compaction.
const DefaultCompactRatio = 0.8

// Markers of the messages compaction writes.
const (
	// DigestPrefix starts every digest message.
	DigestPrefix = "[digest of earlier work in this session]\n"
	// FoldedStub stands for the assistant work of a user turn folded into
	// a digest, so user and assistant messages still alternate.
	FoldedStub = "[work on this turn folded into the digest below]"
	// DigestInstruction is the system prompt of the digest request.
	DigestInstruction = "You write the digest of a coding agent's session so it can continue after its older messages are removed. " +
		"Write the digest of the transcript below as terse notes. Keep: the objective, files touched (paths and what changed), " +
		"decisions and their reasons, commands run and their outcome when it matters, open risks and problems, and next steps. " +
		"Keep exact names, paths, numbers and error messages. Do not invent anything; do not address the user."
)

// Compaction is what one compaction changed.
type Compaction struct {
	// BeforeTokens and AfterTokens are the estimated request sizes.
	BeforeTokens, AfterTokens     int
	BeforeMessages, AfterMessages int
	// Pruned counts tool results stubbed; Folded the messages folded into
	// the digest.
	Pruned, Folded int
	// Focus is what a manual compaction was asked to keep.
	Focus string
	// Messages is the new history, whole (system prompt first).
	Messages []providers.Message
	// Archived are the originals of every message replaced or removed.
	Archived []providers.Message
}

// ErrTooBig is wrapped by the error of a request that cannot fit the
// context window even after compaction.
var ErrTooBig = errors.New("request does not fit the context window")

func (s *Session) compactRatio() float64 {
	r := s.cfg.CompactRatio
	if r <= 0 || r > 1 {
		return DefaultCompactRatio
	}
	return r
}

// tokens estimates the tokens of n encoded bytes.
func (s *Session) tokens(n int) int {
	r := s.ratio
	if r <= 0 {
		r = 1
	}
	return int(float64(n)/4*r) + 1
}

// requestBytes is the encoded size of a request over raw.
func (s *Session) requestBytes(raw [][]byte) int {
	n := len(s.toolsJSON) + 64
	for _, m := range raw {
		n += len(m) + 1
	}
	return n
}

func (s *Session) estimate() int { return s.tokens(s.requestBytes(asBytes(s.raw))) }

// observe corrects the estimate with the prompt tokens a provider reported
// for a request of n bytes.
func (s *Session) observe(n int, u *providers.Usage) {
	if u == nil || u.PromptTokens <= 0 || n <= 0 {
		return
	}
	s.lastPrompt = u.PromptTokens
	s.ratio = min(max(float64(u.PromptTokens)/(float64(n)/4), 0.25), 4)
}

// fit makes the next request fit the context window: it compacts when the
// last request reached the compact ratio or the next one would be over
// the window, and fails, naming the culprit, when it still does not fit.
func (s *Session) fit(ctx context.Context, out *Outcome) error {
	w := s.cfg.ContextWindow
	if w <= 0 {
		return nil
	}
	est := s.estimate()
	due := float64(s.lastPrompt) >= s.compactRatio()*float64(w) && est > s.stuckAt
	if due || est > w {
		s.autoCompact = true
		_, err := s.compact(ctx, out, "", false)
		s.autoCompact = false
		if err != nil {
			return err
		}
		est = s.estimate()
	}
	if est <= w {
		return nil
	}
	prefix := s.tokens(len(s.toolsJSON) + 64)
	if len(s.raw) > 0 && s.msgs[0].Role == providers.RoleSystem {
		prefix += s.tokens(len(s.raw[0]))
	}
	big, at := 0, 0
	for i, r := range s.raw {
		if len(r) > big && s.msgs[i].Role != providers.RoleSystem {
			big, at = len(r), i
		}
	}
	if big == 0 || prefix >= s.tokens(big) {
		return fmt.Errorf("session %s: %w: the system prompt and tool schemas are ~%d tokens of a %d-token window", s.cfg.ID, ErrTooBig, prefix, w)
	}
	return fmt.Errorf("session %s: %w: ~%d tokens of a %d-token window; the largest part is message %d (%s, ~%d tokens)",
		s.cfg.ID, ErrTooBig, est, w, at, s.msgs[at].Role, s.tokens(big))
}

// Compact compacts the history now, by hand (/compact, `reasonix
// compact`): old tool results are pruned and everything before the newest
// turns is folded into a digest even when the window is not yet full.
// focus, when set, tells the digest what to keep above all. It returns
// what changed (Folded and Pruned are 0 when there was nothing to fold).
// With no context window known (context_window = 0, an unlisted model)
// it still compacts, taking twice the history's size as the window for
// this compaction alone: asked for by hand, it is wanted whatever the
// window. Call it between turns: a session is not safe for concurrent use.
func (s *Session) Compact(ctx context.Context, focus string) (Compaction, error) {
	if s.cfg.ContextWindow <= 0 {
		s.cfg.ContextWindow = max(2*s.estimate(), 1)
		defer func() { s.cfg.ContextWindow = 0 }()
		s.windowUnknown = true
		defer func() { s.windowUnknown = false }()
	}
	var out Outcome
	c, err := s.compact(ctx, &out, strings.TrimSpace(focus), true)
	if err == nil && c.Folded+c.Pruned > 0 {
		err = s.endStep()
	}
	return c, err
}

// ContextWindow reports how full the window is: the newest request's
// reported prompt tokens (the estimate before the first one, or after a
// compaction), and the parts in estimated tokens scaled to that figure:
// "system" (the whole system prompt), "tools" (their schemas) and
// "history" (everything after the system prompt).
func (s *Session) ContextWindow() events.ContextInfo {
	sys, hist := 0, 0
	for i, r := range s.raw {
		if i == 0 && s.msgs[0].Role == providers.RoleSystem {
			sys = len(r)
			continue
		}
		hist += len(r) + 1
	}
	used := s.lastPrompt
	if used <= 0 {
		used = s.estimate()
	}
	parts := []events.ContextPart{{Name: "system", Tokens: s.tokens(sys)}, {Name: "tools", Tokens: s.tokens(len(s.toolsJSON))},
		{Name: "history", Tokens: s.tokens(hist)}}
	return events.ContextInfo{Used: used, Limit: s.cfg.ContextWindow, Percent: events.Percent(used, s.cfg.ContextWindow), Parts: parts}
}

// compact prunes and folds (see the comment at the top of this file). out,
// when not nil, is charged with the digest request's usage; force folds
// whatever the size (a compaction asked for by hand).
func (s *Session) compact(ctx context.Context, out *Outcome, focus string, force bool) (Compaction, error) {
	w := s.cfg.ContextWindow
	if w <= 0 {
		return Compaction{}, fmt.Errorf("session %s: compact: no context window", s.cfg.ID)
	}
	if s.cfg.BeforeCompact != nil {
		trigger := "manual"
		if s.autoCompact {
			trigger = "auto"
		}
		s.cfg.BeforeCompact(ctx, trigger)
	}
	c := Compaction{BeforeTokens: s.estimate(), BeforeMessages: len(s.msgs), Focus: focus}
	msgs := append([]providers.Message(nil), s.msgs...)
	target := int(s.compactRatio() * float64(w) / 2)

	// 1. Prune old tool results past a budget, newest kept first. The
	// results of the newest assistant message are what the model just
	// asked for: they stay.
	names := map[string]string{}
	lastAsst := -1
	for i, m := range msgs {
		if m.Role == providers.RoleAssistant {
			lastAsst = i
			for _, tc := range m.ToolCalls {
				names[tc.ID] = tc.Function.Name
			}
		}
	}
	budget := w / 4
	kept := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != providers.RoleTool || len(m.Content) <= 256 {
			continue
		}
		t := s.tokens(len(m.Content))
		if i > lastAsst || kept+t <= budget {
			kept += t
			continue
		}
		c.Archived = append(c.Archived, m)
		m.Content = fmt.Sprintf("[output of %s pruned: %d bytes; ask again if needed]", orDefault(names[m.ToolCallID], "tool"), len(m.Content))
		m.Rules = nil // the rules attached to it went with it
		msgs[i] = m
		c.Pruned++
	}
	raw, err := encodeAll(msgs)
	if err != nil {
		return c, err
	}

	// 2. Fold the older assistant and tool messages into a digest.
	if force || s.tokens(s.requestBytes(asBytes(raw))) > target {
		folded, archived, n, err := s.fold(ctx, msgs, out, focus, force)
		if err != nil {
			return c, err
		}
		if n > 0 {
			msgs = folded
			c.Archived = append(c.Archived, archived...)
			c.Folded = n
			if raw, err = encodeAll(msgs); err != nil {
				return c, err
			}
		}
	}
	if c.Pruned == 0 && c.Folded == 0 {
		// Nothing to do: do not try again until the history grows.
		s.stuckAt = c.BeforeTokens
		c.AfterTokens, c.AfterMessages = c.BeforeTokens, c.BeforeMessages
		return c, nil
	}
	s.msgs, s.raw = msgs, raw
	s.lastPrompt, s.stuckAt = 0, 0
	// Rules a pruned or folded result carried are gone: a call reaching
	// their folder attaches them again.
	s.holdNestedRules()
	reason := "compaction"
	if changed, err := s.refreshTools(); err != nil {
		return c, err
	} else if changed != "" {
		reason += "; tools " + changed
		s.publish(events.Event{Type: events.Notice, Text: "the tool list was refreshed at the compaction: " + changed})
	}
	s.resetCache(reason)
	c.Messages, c.AfterMessages = msgs, len(msgs)
	c.AfterTokens = s.estimate()
	archive := ""
	if s.cfg.OnCompact != nil {
		a, err := s.cfg.OnCompact(c)
		if err != nil {
			return c, fmt.Errorf("session %s: compact: %w", s.cfg.ID, err)
		}
		archive = a
	}
	of, limit := fmt.Sprintf("of %d", w), w
	if s.windowUnknown {
		of, limit = "of an unknown window", 0
	}
	s.publish(events.Event{Type: events.Compacted, Text: fmt.Sprintf(
		"compacted the context: ~%d → ~%d tokens %s (%d tool result(s) pruned, %d message(s) folded into a digest; originals archived)",
		c.BeforeTokens, c.AfterTokens, of, c.Pruned, c.Folded),
		Context: &events.ContextInfo{Used: c.AfterTokens, Limit: limit, Percent: events.Percent(c.AfterTokens, limit),
			Before: c.BeforeTokens, After: c.AfterTokens, Pruned: c.Pruned, Folded: c.Folded, Focus: focus, Archive: archive}})
	return c, nil
}

// fold replaces the assistant and tool messages before the newest turns
// with a digest. It returns the new history, the originals it removed or
// clipped, and how many messages it folded (0: nothing to fold).
func (s *Session) fold(ctx context.Context, msgs []providers.Message, out *Outcome, focus string, force bool) ([]providers.Message, []providers.Message, int, error) {
	w := s.cfg.ContextWindow
	start := 0
	if len(msgs) > 0 && msgs[0].Role == providers.RoleSystem {
		start = 1
	}
	// The boundary is the start of a user turn: the oldest whose tail fits
	// the tail budget, never later than the newest turn.
	var users []int
	for i := start; i < len(msgs); i++ {
		if msgs[i].Role == providers.RoleUser {
			users = append(users, i)
		}
	}
	if len(users) == 0 {
		return nil, nil, 0, nil
	}
	tailBudget := int(s.compactRatio() * float64(w) / 4)
	// By hand, only the newest turn stays whole.
	b := users[len(users)-1]
	for k := len(users) - 2; k >= 0 && !force; k-- {
		raw, err := encodeAll(msgs[users[k]:])
		if err != nil {
			return nil, nil, 0, err
		}
		if s.tokens(s.requestBytes(asBytes(raw))) > tailBudget {
			break
		}
		b = users[k]
	}
	var toFold []providers.Message
	for _, m := range msgs[start:b] {
		if m.Role == providers.RoleTool || m.Role == providers.RoleAssistant && !isDigest(m) && m.Content != FoldedStub {
			toFold = append(toFold, m)
		}
	}
	if len(toFold) == 0 {
		return nil, nil, 0, nil
	}
	digest, err := s.digest(ctx, msgs[start:b], out, focus)
	if err != nil {
		return nil, nil, 0, err
	}
	archived := append([]providers.Message(nil), toFold...)

	// User turns are pinned verbatim up to a budget: one turn over a
	// sixteenth of the window, or the oldest once all of them pass a
	// quarter, keep their head only (the whole turn is archived).
	perTurn, total := w*4/16, w*4/4
	pinned := 0
	for _, m := range msgs[start:b] {
		if m.Role == providers.RoleUser {
			pinned += len(m.Content)
		}
	}
	out2 := append([]providers.Message(nil), msgs[:start]...)
	prevUser := false
	for _, m := range msgs[start:b] {
		switch {
		case m.Role == providers.RoleUser:
			if prevUser {
				out2 = append(out2, providers.Message{Role: providers.RoleAssistant, Content: FoldedStub})
			}
			if limit := perTurn; len(m.Content) > limit || pinned > total && len(m.Content) > 400 {
				if len(m.Content) <= limit {
					limit = 400
				}
				archived = append(archived, m)
				pinned -= len(m.Content) - limit
				m.Content = clipHead(m.Content, limit) + fmt.Sprintf("\n[… %d more bytes of this message are in the session archive]", len(m.Content)-limit)
			}
			out2 = append(out2, m)
			prevUser = true
		case isDigest(m):
			out2 = append(out2, m)
			prevUser = false
		}
	}
	out2 = append(out2, providers.Message{Role: providers.RoleAssistant, Content: DigestPrefix + digest + s.restate()})
	out2 = append(out2, msgs[b:]...)
	return out2, archived, len(toFold), nil
}

func isDigest(m providers.Message) bool {
	return m.Role == providers.RoleAssistant && strings.HasPrefix(m.Content, DigestPrefix)
}

// restate is the state that must survive a compaction whatever the digest
// says: the todo list and what Config.Restate adds (the goal).
func (s *Session) restate() string {
	var b strings.Builder
	if todos := s.cfg.Env.Todos(); len(todos) > 0 {
		b.WriteString("\n\nTodo list at compaction:")
		for _, t := range todos {
			fmt.Fprintf(&b, "\n- [%s] %s", t.Status, t.Content)
		}
	}
	if s.cfg.Restate != nil {
		if r := s.cfg.Restate(); r != "" {
			b.WriteString("\n\n" + r)
		}
	}
	return b.String()
}

// digest asks the session's model, without tools, for the digest of
// region.
func (s *Session) digest(ctx context.Context, region []providers.Message, out *Outcome, focus string) (string, error) {
	limit := int(float64(s.cfg.ContextWindow)*0.6*4/max(s.ratio, 0.25)) - len(DigestInstruction)
	var b strings.Builder
	b.WriteString("Transcript to digest:\n")
	for _, m := range region {
		switch {
		case m.Role == providers.RoleUser:
			fmt.Fprintf(&b, "\n## user\n%s\n", m.Content)
		case m.Role == providers.RoleTool:
			fmt.Fprintf(&b, "\n## tool result\n%s\n", clipHead(m.Content, 2000))
		case isDigest(m):
			fmt.Fprintf(&b, "\n## earlier digest\n%s\n", strings.TrimPrefix(m.Content, DigestPrefix))
		case m.Content == FoldedStub:
		default:
			fmt.Fprintf(&b, "\n## assistant\n%s\n", m.Content)
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&b, "(call %s %s)\n", c.Function.Name, clipHead(c.Function.Arguments, 300))
			}
		}
	}
	if focus != "" {
		fmt.Fprintf(&b, "\nThe user asked the digest to focus on: %s\nKeep everything about that in full detail.\n", focus)
	}
	b.WriteString("\nWrite the digest now.")
	body := b.String()
	if limit > 0 && len(body) > limit {
		body = clipHead(body, limit/2) + "\n[… middle of the transcript left out …]\n" + body[len(body)-limit/2:]
	}
	msgs := []providers.Message{{Role: providers.RoleSystem, Content: DigestInstruction}, {Role: providers.RoleUser, Content: body}}
	raw, err := encodeAll(msgs)
	if err != nil {
		return "", err
	}
	ch, err := s.cfg.Provider.Stream(ctx, providers.Request{Model: s.cfg.Model, Messages: msgs, Encoded: raw,
		MaxTokens: s.cfg.MaxTokens, Temperature: s.cfg.Temperature})
	if err != nil {
		return "", fmt.Errorf("compact: digest request: %w", err)
	}
	var text strings.Builder
	var streamErr error
	for c := range ch {
		text.WriteString(c.Text)
		if c.Usage != nil {
			s.usage.Add(*c.Usage)
			if out != nil {
				out.Usage.Add(*c.Usage)
			}
		}
		if c.Err != nil {
			streamErr = c.Err
		}
	}
	if streamErr != nil {
		return "", fmt.Errorf("compact: digest request: %w", streamErr)
	}
	if strings.TrimSpace(text.String()) == "" {
		return "", errors.New("compact: the model wrote an empty digest")
	}
	return strings.TrimSpace(text.String()), nil
}

func encodeAll(msgs []providers.Message) ([]json.RawMessage, error) {
	out := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		r, err := providers.EncodeMessage(m)
		if err != nil {
			return nil, fmt.Errorf("session: encode message: %w", err)
		}
		out[i] = r
	}
	return out, nil
}

func asBytes(raw []json.RawMessage) [][]byte {
	out := make([][]byte, len(raw))
	for i, r := range raw {
		out[i] = r
	}
	return out
}

// clipHead keeps at most n bytes of s, cut at a rune boundary.
func clipHead(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// refreshTools replaces the session's tools with Config.RefreshTools'
// answer when it differs, and says what changed ("" for nothing).
func (s *Session) refreshTools() (string, error) {
	if s.cfg.RefreshTools == nil {
		return "", nil
	}
	next := s.cfg.RefreshTools(s.cfg.Tools)
	if next == nil {
		return "", nil
	}
	tj, err := next.EncodedSpecs()
	if err != nil {
		return "", fmt.Errorf("session %s: encode tool schemas: %w", s.cfg.ID, err)
	}
	cur, err := s.cfg.Tools.EncodedSpecs()
	if err != nil {
		return "", fmt.Errorf("session %s: encode tool schemas: %w", s.cfg.ID, err)
	}
	if bytes.Equal(tj, cur) {
		return "", nil
	}
	var added, removed []string
	for _, n := range next.Names() {
		if _, ok := s.cfg.Tools.Get(n); !ok {
			added = append(added, n)
		}
	}
	for _, n := range s.cfg.Tools.Names() {
		if _, ok := next.Get(n); !ok {
			removed = append(removed, n)
		}
	}
	s.cfg.Tools, s.toolsJSON, s.specs, s.flat = next, tj, next.Specs(), nil
	if s.cfg.FlattenSchemas {
		if err := s.flattenSpecs(); err != nil {
			return "", err
		}
	}
	var parts []string
	if len(added) > 0 {
		parts = append(parts, "added "+strings.Join(added, ", "))
	}
	if len(removed) > 0 {
		parts = append(parts, "removed "+strings.Join(removed, ", "))
	}
	if len(parts) == 0 {
		parts = append(parts, "schemas changed")
	}
	return strings.Join(parts, "; "), nil
}
