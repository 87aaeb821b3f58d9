package main

import (
	"flag"
	"fmt"
	"os"
	"sync"

	"github.com/reasonix/reasonix/internal/config"
)

// cmdTrust is `reasonix trust [--revoke]`: the person, having read this
// project's reasonix.toml and Claude Code settings files, lets them make
// the settings an untrusted project may not (config.HeldKey); --revoke
// forgets that.
func cmdTrust(args []string, io stdio) error {
	fs := flag.NewFlagSet("trust", flag.ContinueOnError)
	fs.SetOutput(io.err)
	revoke := fs.Bool("revoke", false, "forget this project's trust")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if fs.NArg() > 0 {
		return usagef("trust takes no arguments; run it in the project's folder")
	}
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	home, err := config.Home(os.Getenv)
	if err != nil {
		return usageError{err}
	}
	if *revoke {
		had, err := config.UntrustProject(home, wd)
		if err != nil {
			return err
		}
		if had {
			fmt.Fprintf(io.out, "%s is no longer trusted: its providers, sandbox and posture settings and its allow rules are held again (the rules you allowed always stay yours)\n", wd)
		} else {
			fmt.Fprintf(io.out, "%s was not trusted\n", wd)
		}
		return nil
	}
	held, err := config.TrustProject(home, wd)
	if err != nil {
		return usageError{err}
	}
	if len(held) == 0 {
		fmt.Fprintf(io.out, "trusted %s: its agent files and .claude/settings.json may now set a looser posture; it sets nothing else that needs trust\n", wd)
		return nil
	}
	fmt.Fprintf(io.out, "trusted %s; these settings now apply (a change to them needs trusting again):\n", wd)
	for _, h := range held {
		fmt.Fprintf(io.out, "  %s\n", h)
	}
	return nil
}

// trustFileNotice says that a trust record could not be read (a corrupt
// file, named with its place by the error) and what follows: the run
// trusts nothing in it, and nothing is written over it.
func trustFileNotice(err error) string {
	return fmt.Sprintf("%v; nothing recorded in it is trusted this run, and it is not rewritten: fix or remove the file", err)
}

// projectTrust is config.ProjectTrusted for one run: read once, and a
// trust file that cannot be read is said once through notify (unless
// config.Load said it already), the project counting as untrusted.
func projectTrust(loaded *config.Loaded, workspace string, notify func(string)) func() bool {
	return sync.OnceValue(func() bool {
		ok, err := config.ProjectTrusted(loaded.Home, workspace)
		if err != nil && loaded.TrustErr == nil && notify != nil {
			notify(trustFileNotice(err))
		}
		return ok
	})
}
