package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/internal/text"
	"github.com/reasonix/reasonix/providers"
	"github.com/reasonix/reasonix/providers/scripted"
	"github.com/reasonix/reasonix/tools"
)

// cmdReplay is `reasonix replay [--as-script] [SESSION]`: a saved session
// shown again without a model, or turned into a scripted-provider script
// that makes `run` repeat the same calls.
func cmdReplay(args []string, io stdio) error {
	fs := flag.NewFlagSet("replay", flag.ContinueOnError)
	fs.SetOutput(io.err)
	asScript := fs.Bool("as-script", false, "print a scripted-provider script (JSON) instead")
	config := fs.String("config", "", "config file")
	l, err := loadSessionArg(fs, args, config, io.err)
	if err != nil {
		return err
	}
	if *asScript {
		return writeJSON(io.out, scriptOf(l))
	}
	reg, err := runTools(nil, nil, "", "")
	if err != nil {
		return err
	}
	replay(io.out, l, reg)
	return nil
}

// scriptOf turns a session into a script: one turn per assistant message
// (text, reasoning, tool calls with their ids and arguments as sent), with
// the usage its request recorded when the records line up.
func scriptOf(l *store.Loaded) *scripted.Script {
	s := &scripted.Script{Turns: []scripted.Turn{}}
	var usage []providers.Usage
	for _, r := range l.Requests {
		usage = append(usage, r.Usage)
	}
	n := 0
	for _, m := range l.Messages {
		if m.Role != providers.RoleAssistant {
			continue
		}
		t := scripted.Turn{Text: m.Content, Reasoning: m.ReasoningContent}
		for _, c := range m.ToolCalls {
			t.ToolCalls = append(t.ToolCalls, scripted.Call{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		if n < len(usage) && len(usage) == countAssistant(l.Messages) && usage[n] != (providers.Usage{}) {
			u := usage[n]
			u.Cost, u.Currency = 0, "" // the script replays tokens; prices are the config's
			t.Usage = &u
		}
		s.Turns = append(s.Turns, t)
		n++
	}
	return s
}

func countAssistant(msgs []providers.Message) int {
	n := 0
	for _, m := range msgs {
		if m.Role == providers.RoleAssistant {
			n++
		}
	}
	return n
}

// replay prints a session as a transcript: each user turn, the answer,
// and one line per tool call with the first line of its result.
func replay(w io.Writer, l *store.Loaded, reg *tools.Registry) {
	title := l.Header.Title
	if l.Meta.Title != "" {
		title = l.Meta.Title
	}
	fmt.Fprintf(w, "session %s  %s\n", l.Header.ID, title)
	if m := firstNonEmpty(l.Meta.Model, l.Header.Model); m != "" {
		fmt.Fprintf(w, "model   %s\n", m)
	}
	calls := map[string]providers.ToolCall{}
	turn := 0
	for _, m := range l.Messages {
		switch m.Role {
		case providers.RoleUser:
			turn++
			fmt.Fprintf(w, "\n── turn %d ──\n> %s\n", turn, strings.ReplaceAll(strings.TrimSpace(m.Content), "\n", "\n> "))
		case providers.RoleAssistant:
			if r := strings.TrimSpace(m.ReasoningContent); r != "" {
				fmt.Fprintf(w, "  ✻ %s\n", text.Clip(text.OneLine(r), 160))
			}
			if c := strings.TrimSpace(m.Content); c != "" {
				fmt.Fprintln(w, c)
			}
			for _, c := range m.ToolCalls {
				calls[c.ID] = c
				fmt.Fprintf(w, "  → %s\n", callLine(reg, c))
			}
		case providers.RoleTool:
			first, _, _ := strings.Cut(strings.TrimSpace(m.Content), "\n")
			mark := "✓"
			if strings.HasPrefix(first, "Error") {
				mark = "✗"
			}
			name := calls[m.ToolCallID].Function.Name
			fmt.Fprintf(w, "    %s %s%s\n", mark, prefixName(name), text.Clip(first, 160))
		}
	}
	st := statsOf(l)
	if st.Requests > 0 {
		fmt.Fprintf(w, "\n%d request(s); %s\n", st.Requests, usageLine(st.Total.Usage))
	}
}

func prefixName(name string) string {
	if name == "" {
		return ""
	}
	return name + ": "
}

// callLine names a call the way the live output does: the tool and the
// subject it describes, when the tool is known here.
func callLine(reg *tools.Registry, c providers.ToolCall) string {
	if t, ok := reg.Get(c.Function.Name); ok && json.Valid([]byte(c.Function.Arguments)) {
		if acc, err := tools.Describe(t, json.RawMessage(c.Function.Arguments)); err == nil {
			if s := acc.Subject(); s != "" {
				return c.Function.Name + " " + text.Clip(text.OneLine(s), 120)
			}
		}
	}
	return c.Function.Name + " " + text.Clip(c.Function.Arguments, 120)
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// cmdDiff is `reasonix diff A B [--json]`: two sessions side by side,
// turn by turn: tool calls, tokens, cache hits, cost.
func cmdDiff(args []string, io stdio) error {
	fs := flag.NewFlagSet("diff", flag.ContinueOnError)
	fs.SetOutput(io.err)
	asJSON := fs.Bool("json", false, "print JSON")
	config := fs.String("config", "", "config file")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError{err}
	}
	if len(pos) != 2 {
		return usagef("diff needs two sessions: reasonix diff A B")
	}
	var st [2]sessionStats
	for i, id := range pos {
		l, err := loadSession(*config, id, io.err)
		if err != nil {
			return err
		}
		st[i] = statsOf(l)
	}
	if *asJSON {
		return writeJSON(io.out, map[string]sessionStats{"a": st[0], "b": st[1]})
	}
	printDiff(io.out, st[0], st[1])
	return nil
}

func printDiff(w io.Writer, a, b sessionStats) {
	fmt.Fprintf(w, "A  %s  %s  %s\nB  %s  %s  %s\n", a.Session, a.Model, a.Title, b.Session, b.Model, b.Title)
	turns := max(len(a.Turns), len(b.Turns))
	side := func(st sessionStats, i int) (turnStats, bool) {
		if i < len(st.Turns) {
			return st.Turns[i], true
		}
		return turnStats{}, false
	}
	for i := range turns {
		ta, okA := side(a, i)
		tb, okB := side(b, i)
		fmt.Fprintf(w, "\nturn %d\n", i+1)
		row := func(label string, f func(turnStats) string) {
			va, vb := "-", "-"
			if okA {
				va = f(ta)
			}
			if okB {
				vb = f(tb)
			}
			same := " "
			if va != vb {
				same = "≠"
			}
			fmt.Fprintf(w, " %s %-7s A: %s\n   %-7s B: %s\n", same, label, va, "", vb)
		}
		row("tools", func(t turnStats) string {
			if len(t.Tools) == 0 {
				return "(none)"
			}
			return strings.Join(t.Tools, ", ")
		})
		row("tokens", func(t turnStats) string { return tokenText(t.Usage) })
		row("cost", func(t turnStats) string { return costText(t.Usage.Usage) })
	}
	fmt.Fprintf(w, "\ntotal\n   A: %d request(s), %s, %s\n   B: %d request(s), %s, %s\n",
		a.Requests, tokenText(a.Total), costText(a.Total.Usage), b.Requests, tokenText(b.Total), costText(b.Total.Usage))
}

func tokenText(u usageJSON) string {
	return fmt.Sprintf("%d in (%d cached, %.1f%% hit), %d out", u.PromptTokens, u.CacheHitTokens, 100*u.CacheHitRatio, u.CompletionTokens)
}
