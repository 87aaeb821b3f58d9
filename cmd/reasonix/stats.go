package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"text/tabwriter"

	"github.com/reasonix/reasonix/agents"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/orchestrator"
	"github.com/reasonix/reasonix/providers"
)

// sessionStats is what `reasonix stats` reports about one session, from
// the request records of its file.
type sessionStats struct {
	Session  string      `json:"session"`
	Title    string      `json:"title,omitempty"`
	Model    string      `json:"model,omitempty"`
	Requests int         `json:"requests"`
	Turns    []turnStats `json:"turns"`
	Total    usageJSON   `json:"total"`
	// Prefixes counts the distinct prefix fingerprints the requests were
	// sent with; Resets lists each deliberate cache reset.
	Prefixes int          `json:"prefixes"`
	Resets   []resetStats `json:"resets"`
}

type turnStats struct {
	Turn     int       `json:"turn"`
	Requests int       `json:"requests"`
	Usage    usageJSON `json:"usage"`
	// Tools lists the tool calls of the turn, in order ("read_file",
	// "bash", ...), for `reasonix diff`.
	Tools []string `json:"tools"`
}

type resetStats struct {
	Request int    `json:"request"` // 1-based
	Turn    int    `json:"turn"`
	Reason  string `json:"reason"`
}

// statsOf summarises a loaded session.
func statsOf(l *store.Loaded) sessionStats {
	st := sessionStats{Session: l.Header.ID, Title: l.Header.Title, Model: l.Header.Model, Requests: len(l.Requests),
		Turns: []turnStats{}, Resets: []resetStats{}}
	if l.Meta.Title != "" {
		st.Title = l.Meta.Title
	}
	if l.Meta.Model != "" {
		st.Model = l.Meta.Model
	}
	var total providers.Usage
	seen := map[string]bool{}
	byTurn := map[int]*turnStats{}
	turn := func(n int) *turnStats {
		if t, ok := byTurn[n]; ok {
			return t
		}
		st.Turns = append(st.Turns, turnStats{Turn: n, Tools: []string{}})
		t := &st.Turns[len(st.Turns)-1]
		byTurn[n] = t
		return t
	}
	// Pointers into st.Turns stay valid only while it does not grow
	// again, so turns are created first.
	for _, r := range l.Requests {
		turn(r.Turn)
	}
	for n := 1; n <= store.Turns(l.Messages); n++ {
		if _, ok := byTurn[n]; !ok {
			turn(n)
		}
	}
	sort.Slice(st.Turns, func(i, j int) bool { return st.Turns[i].Turn < st.Turns[j].Turn })
	for i := range st.Turns {
		byTurn[st.Turns[i].Turn] = &st.Turns[i]
	}
	for i, r := range l.Requests {
		t := byTurn[r.Turn]
		t.Requests++
		u := t.Usage.Usage
		u.Add(r.Usage)
		t.Usage = newUsageJSON(u)
		total.Add(r.Usage)
		if r.Prefix != "" {
			seen[r.Prefix] = true
		}
		if r.Reset != "" {
			st.Resets = append(st.Resets, resetStats{Request: i + 1, Turn: r.Turn, Reason: r.Reset})
		}
	}
	n := 0
	for _, m := range l.Messages {
		if m.Role == providers.RoleUser {
			n++
		}
		if t, ok := byTurn[n]; ok {
			for _, c := range m.ToolCalls {
				t.Tools = append(t.Tools, c.Function.Name)
			}
		}
	}
	st.Total = newUsageJSON(total)
	st.Prefixes = len(seen)
	return st
}

// loadSession finds a session of this project by id or prefix (the
// newest conversation when id is empty) and reads it. These commands only
// show a session: one changed outside Reasonix is shown as it stands,
// after a warning on warn naming the first line that differs.
func loadSession(config, id string, warn io.Writer) (*store.Loaded, error) {
	dir, seals, err := sessionsAndSeals(config)
	if err != nil {
		return nil, err
	}
	path, err := orchestrator.FindSession(dir, id)
	if err != nil {
		return nil, usageError{err}
	}
	l, err := seals.Load(path, store.Refuse)
	var mod *store.ModifiedError
	if errors.As(err, &mod) {
		fmt.Fprintf(warn, "reasonix: warning: %v; shown as it stands: from that line on it may not be what was said or done\n", mod)
		return seals.Load(path, store.AcceptModified)
	}
	return l, err
}

// loadSessionArg parses args with fs and loads the session its one
// optional positional argument names (the newest one without it), with
// the config file the parsed --config names.
func loadSessionArg(fs *flag.FlagSet, args []string, config *string, warn io.Writer) (*store.Loaded, error) {
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return nil, usageError{err}
	}
	if len(pos) > 1 {
		return nil, usagef("%s takes at most one SESSION", fs.Name())
	}
	id := ""
	if len(pos) == 1 {
		id = pos[0]
	}
	return loadSession(*config, id, warn)
}

// cmdStats is `reasonix stats [SESSION] [--json]`.
func cmdStats(args []string, io stdio) error {
	fs := flag.NewFlagSet("stats", flag.ContinueOnError)
	fs.SetOutput(io.err)
	asJSON := fs.Bool("json", false, "print JSON")
	config := fs.String("config", "", "config file")
	l, err := loadSessionArg(fs, args, config, io.err)
	if err != nil {
		return err
	}
	st := statsOf(l)
	if *asJSON {
		return writeJSON(io.out, st)
	}
	printStats(io.out, st)
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func printStats(w io.Writer, st sessionStats) {
	fmt.Fprintf(w, "session %s", st.Session)
	if st.Title != "" {
		fmt.Fprintf(w, "  %s", st.Title)
	}
	fmt.Fprintln(w)
	if st.Model != "" {
		fmt.Fprintf(w, "model   %s\n", st.Model)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "TURN\tREQUESTS\tPROMPT\tCACHE HIT\tCACHE MISS\tHIT RATIO\tOUTPUT\tCOST\t")
	row := func(label string, req int, u usageJSON) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%.1f%%\t%d\t%s\t\n", label, req, u.PromptTokens, u.CacheHitTokens,
			u.CacheMissTokens, 100*u.CacheHitRatio, u.CompletionTokens, costText(u.Usage))
	}
	for _, t := range st.Turns {
		row(fmt.Sprint(t.Turn), t.Requests, t.Usage)
	}
	row("total", st.Requests, st.Total)
	tw.Flush()
	fmt.Fprintf(w, "prefix fingerprints: %d; cache resets: %d\n", st.Prefixes, len(st.Resets))
	for _, r := range st.Resets {
		fmt.Fprintf(w, "  request %d (turn %d): %s\n", r.Request, r.Turn, r.Reason)
	}
}

// costText is a cost for a table cell, "-" when no price was known.
func costText(u providers.Usage) string {
	if u.Currency == "" && u.Cost == 0 {
		return "-"
	}
	return agents.Money(u.Cost, u.Currency)
}
