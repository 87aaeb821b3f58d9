package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/reasonix/reasonix/internal/checkpoint"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/orchestrator"
	"github.com/reasonix/reasonix/providers"
)

// sessionsDir is this project's session folder; reading it needs no model.
func sessionsDir(configFile string) (string, error) {
	dir, _, err := sessionsAndSeals(configFile)
	return dir, err
}

// sessionsAndSeals is this project's session folder and the seals of its
// files, kept in the Reasonix home (see store.Seals).
func sessionsAndSeals(configFile string) (string, *store.Seals, error) {
	loaded, wd, err := loadConfig(configFile)
	if err != nil {
		return "", nil, err
	}
	dir := filepath.Join(workspaceOf(loaded, wd), ".reasonix", "sessions")
	return dir, store.NewSeals(loaded.Home, dir), nil
}

// explainModified turns a session file changed outside Reasonix into a
// usage error (exit 2) that says how to go on; other errors pass.
func explainModified(err error) error {
	var m *store.ModifiedError
	if !errors.As(err, &m) {
		return err
	}
	return usageError{fmt.Errorf("%w\n  Reasonix does not send on as yours what it did not write. "+
		"To go on from what Reasonix wrote before line %d, in a new session (this file stays as it is for you to look at): reasonix fork %s\n"+
		"  To take the file as it stands, changes included, as your own: reasonix fork %s --accept-modified",
		err, m.Line, m.ID, m.ID)}
}

// explainPlanModified turns a saved plan or plan progress file changed
// outside Reasonix into a usage error (exit 2) that says how to go on;
// other errors pass.
func explainPlanModified(err error, ref string, resume bool) error {
	var m *store.ModifiedError
	if !errors.As(err, &m) {
		return err
	}
	again := "reasonix run --plan " + ref
	if resume {
		again += " --resume"
	}
	why := "Reasonix does not run what it did not write as an approved plan: each step becomes a worker's prompt."
	if m.What != "plan" {
		why = "Reasonix does not trust progress it did not write: it decides which steps run again."
		if resume {
			why += " Without --resume the plan runs from the start."
		}
	}
	return usageError{fmt.Errorf("%w\n  %s Look at the file (reasonix plan show %s).\n"+
		"  To take it as it stands, changes included, as your own: %s --accept-modified",
		err, why, ref, again)}
}

// cmdSessions is `reasonix sessions [--json] [--all]`.
func cmdSessions(args []string, io stdio) error {
	fs := flag.NewFlagSet("sessions", flag.ContinueOnError)
	fs.SetOutput(io.err)
	asJSON := fs.Bool("json", false, "print a JSON array")
	all := fs.Bool("all", false, "include subagent sessions")
	config := fs.String("config", "", "config file")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usagef("sessions takes no arguments")
	}
	dir, err := sessionsDir(*config)
	if err != nil {
		return err
	}
	list, notices, err := store.List(dir, *all)
	if err != nil {
		return err
	}
	for _, n := range notices {
		fmt.Fprintln(io.err, "reasonix: skipped "+n)
	}
	if *asJSON {
		if list == nil {
			list = []store.Summary{}
		}
		enc := json.NewEncoder(io.out)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	if len(list) == 0 {
		fmt.Fprintln(io.err, "no sessions in this project yet")
		return nil
	}
	tw := tabwriter.NewWriter(io.out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tAGE\tTURNS\tTOKENS\tMODEL\tTITLE")
	now := time.Now()
	for _, s := range list {
		title := s.Title
		if s.Goal != "" {
			title = fmt.Sprintf("[goal %s] %s", s.GoalStatus, title)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", s.ID, age(now.Sub(s.Updated)), s.Turns, tokens(s.Usage), s.Model, title)
	}
	return tw.Flush()
}

func age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "now"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}

func tokens(u providers.Usage) string {
	n := u.PromptTokens + u.CompletionTokens
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return fmt.Sprint(n)
}

// cmdFork is `reasonix fork ID [--at TURN] [--accept-modified]`: a new
// session holding the conversation as it stood before turn TURN (all of
// it without --at). The original is untouched. It is the way on from a
// session changed outside Reasonix: what Reasonix wrote, or with
// --accept-modified the file as it stands.
func cmdFork(args []string, io stdio) error {
	fs := flag.NewFlagSet("fork", flag.ContinueOnError)
	fs.SetOutput(io.err)
	at := fs.Int("at", 0, "fork before this user turn (1 is the first)")
	accept := fs.Bool("accept-modified", false, "fork a session changed outside Reasonix as it stands, taking the changes as your own")
	config := fs.String("config", "", "config file")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError{err}
	}
	if len(pos) != 1 {
		return usagef("fork needs one session id (reasonix sessions lists them)")
	}
	dir, seals, err := sessionsAndSeals(*config)
	if err != nil {
		return err
	}
	path, err := store.Find(dir, pos[0])
	if err != nil {
		return usageError{err}
	}
	// A session changed outside Reasonix forks as far as Reasonix wrote
	// it, or as it stands when the person takes the changes as theirs.
	mode := store.KeepSealed
	if *accept {
		mode = store.AcceptModified
	}
	rep, err := seals.Fork(path, *at, mode)
	if errors.Is(err, store.ErrForkInput) {
		return usageError{err}
	}
	if err != nil {
		return err
	}
	for _, n := range rep.Notices {
		fmt.Fprintln(io.err, "reasonix: fork: "+n)
	}
	fmt.Fprintln(io.out, rep.ID)
	fmt.Fprintf(io.err, "forked %s into %s (%d turn(s)); continue it with: reasonix run --resume %s PROMPT\n", rep.From, rep.ID, rep.Turns, shortPrefix(rep.ID))
	return nil
}

// shortPrefix is an id prefix that is usually unique: the part before its
// random suffix plus a few characters of it.
func shortPrefix(id string) string {
	if i := strings.LastIndexByte(id, '-'); i >= 0 && len(id) > i+7 {
		return id[:i+7]
	}
	return id
}

// resumePath resolves --continue / --resume for a command, or "".
func resumePath(a *app, cont bool, resume string) (string, error) {
	if !cont && resume == "" {
		return "", nil
	}
	if cont && resume != "" {
		return "", usagef("--continue and --resume are alternatives; give one")
	}
	path, err := a.coord.FindSession(resume)
	if err != nil {
		return "", usageError{err}
	}
	return path, nil
}

// resumeConversation reopens the session at path, mapping a damaged file
// to a usage error (exit 2): the file is left as it is.
func resumeConversation(a *app, path, model string) (*orchestrator.Conversation, error) {
	cv, err := a.coord.Resume(path, model)
	if err != nil {
		return nil, explainModified(usageError{fmt.Errorf("resume: %w", err)})
	}
	return cv, nil
}

// checkpointOpener opens the workspace's checkpoint store on first use,
// so runs that change nothing never touch it.
func checkpointOpener(workspace, home string) func() (*checkpoint.Store, error) {
	return sync.OnceValues(func() (*checkpoint.Store, error) {
		return checkpoint.Open(workspace, checkpoint.Options{Home: home})
	})
}

// cmdRewind is `reasonix rewind [ID] [--to TURN] [--files-only|
// --conversation-only] [--undo]`.
func cmdRewind(ctx context.Context, args []string, io stdio) error {
	fs := flag.NewFlagSet("rewind", flag.ContinueOnError)
	fs.SetOutput(io.err)
	to := fs.Int("to", 0, "go back to just before this user turn (default: the last turn)")
	filesOnly := fs.Bool("files-only", false, "restore the files only")
	convOnly := fs.Bool("conversation-only", false, "cut the conversation back only")
	undo := fs.Bool("undo", false, "undo the newest rewind")
	config := fs.String("config", "", "config file")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError{err}
	}
	if len(pos) > 1 {
		return usagef("rewind takes at most one session id")
	}
	if *filesOnly && *convOnly {
		return usagef("--files-only and --conversation-only are alternatives")
	}
	if *undo && (*to != 0 || *filesOnly || *convOnly) {
		return usagef("--undo takes no other flag")
	}
	loaded, wd, err := loadConfig(*config)
	if err != nil {
		return err
	}
	ws := workspaceOf(loaded, wd)
	id := ""
	if len(pos) == 1 {
		id = pos[0]
	}
	dir := filepath.Join(ws, ".reasonix", "sessions")
	path, err := orchestrator.FindSession(dir, id)
	if err != nil {
		return usageError{err}
	}
	rep, err := orchestrator.Rewind(ctx, orchestrator.RewindOptions{Path: path, To: *to, Undo: *undo,
		Files: *filesOnly, Conversation: *convOnly, Checkpoints: checkpointOpener(ws, loaded.Home),
		Seals: store.NewSeals(loaded.Home, dir)})
	if rep == nil && err != nil {
		return explainModified(usageError{err})
	}
	printRewind(io, rep)
	if err != nil {
		return fmt.Errorf("rewind: %w", err)
	}
	return nil
}

func printRewind(io stdio, rep *orchestrator.RewindReport) {
	switch {
	case rep.Undone:
		fmt.Fprintf(io.err, "undid the rewind of %s to turn %d\n", rep.Session, rep.To)
	case rep.Conversation:
		fmt.Fprintf(io.err, "rewound %s to just before turn %d of %d\n", rep.Session, rep.To, rep.Turns)
	default:
		fmt.Fprintf(io.err, "restored the files of %s to just before turn %d of %d\n", rep.Session, rep.To, rep.Turns)
	}
	if rep.NoChanges {
		fmt.Fprintln(io.err, "no file changed since then; nothing to restore")
	}
	if f := rep.Files; f != nil {
		for _, l := range []struct {
			what  string
			paths []string
		}{{"restored", f.Restored}, {"created", f.Created}, {"removed", f.Removed}, {"kept (ignored or too large)", f.Kept}} {
			for _, p := range l.paths {
				fmt.Fprintf(io.out, "%s %s\n", l.what, p)
			}
		}
		if f.Undo != "" && !rep.Undone {
			fmt.Fprintln(io.err, "undo it with: reasonix rewind --undo")
		}
	}
}
