package main

import (
	"context"
	"flag"
	"fmt"
)

// cmdCompact is `reasonix compact [SESSION] [--focus TEXT]`: compact a
// saved conversation now (the newest one without an id), as /compact does
// in the TUI. The session's own model writes the digest; the originals go
// to the archive beside the session file.
func cmdCompact(ctx context.Context, args []string, io stdio) error {
	fs := flag.NewFlagSet("compact", flag.ContinueOnError)
	fs.SetOutput(io.err)
	var f runFlags
	fs.StringVar(&f.config, "config", "", "config file")
	fs.StringVar(&f.model, "model", "", "model to write the digest with (default: the session's)")
	focus := fs.String("focus", "", "what the digest must keep above all")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError{err}
	}
	if len(pos) > 1 {
		return usagef("compact takes at most one session id (reasonix sessions lists them)")
	}
	f.cont = len(pos) == 0
	if len(pos) == 1 {
		f.resume = pos[0]
	}
	r := newTextRenderer(io.out, io.err)
	app, err := assemble(assembleOptions{flags: f, sink: r, stderr: io.err})
	if err != nil {
		return err
	}
	defer app.Close()
	cv, err := openResumed(app, f)
	if err != nil {
		return err
	}
	defer cv.Close()
	c, err := cv.Compact(ctx, *focus)
	if err != nil {
		return fmt.Errorf("compact %s: %w", cv.ID(), err)
	}
	if c.Folded+c.Pruned == 0 {
		fmt.Fprintf(io.err, "nothing to compact in %s: it has no earlier work to fold (~%d tokens)\n", cv.ID(), c.BeforeTokens)
		return nil
	}
	fmt.Fprintf(io.out, "compacted %s: ~%d → ~%d tokens, %d → %d messages (%d tool result(s) pruned, %d message(s) folded)\n",
		cv.ID(), c.BeforeTokens, c.AfterTokens, c.BeforeMessages, c.AfterMessages, c.Pruned, c.Folded)
	return nil
}
