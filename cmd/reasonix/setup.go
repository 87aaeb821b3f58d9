package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/reasonix/reasonix/internal/config"
	"github.com/reasonix/reasonix/internal/credentials"
	"github.com/reasonix/reasonix/providers/openai"
)

// setupFlags are the answers `reasonix setup` can take without asking.
type setupFlags struct {
	provider, baseURL, model, name, keyEnv string
	yes, force, noTest                     bool
}

// cmdSetup writes a working provider into the user config: the preset
// named by --provider (or chosen from a list at a terminal), its key read
// from the environment when it is there and asked for only when it is
// not, the endpoint tested before anything is written. An existing file
// gets the provider added.
func cmdSetup(ctx context.Context, args []string, io stdio) error {
	var f setupFlags
	fs := flag.NewFlagSet("setup", flag.ContinueOnError)
	fs.SetOutput(io.err)
	fs.StringVar(&f.provider, "provider", "", "deepseek, qwen, mimo, openai, openrouter or local")
	fs.StringVar(&f.baseURL, "base-url", "", "endpoint (default: the preset's)")
	fs.StringVar(&f.model, "model", "", "default model (default: the preset's, or the server's first)")
	fs.StringVar(&f.name, "name", "", "provider name in the config (default: the preset's)")
	fs.StringVar(&f.keyEnv, "key-env", "", "environment variable holding the key (default: the preset's)")
	fs.BoolVar(&f.yes, "yes", false, "ask nothing: take the defaults and the key from the environment")
	fs.BoolVar(&f.force, "force", false, "start the config file afresh instead of adding to it")
	fs.BoolVar(&f.noTest, "no-test", false, "write without testing the endpoint")
	example := fs.Bool("example", false, "print a commented example config and write nothing")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError{err}
	}
	if len(pos) > 0 {
		return usagef("setup takes no arguments (did you mean --provider %s?)", pos[0])
	}
	if *example {
		fmt.Fprint(io.out, config.Example())
		return nil
	}
	home, err := config.Home(os.Getenv)
	if err != nil {
		return usageError{err}
	}
	path := filepath.Join(home, config.UserFile)
	s := &setupRun{flags: f, io: io, ask: !f.yes && isTerminal(io.in), in: bufio.NewReader(io.in), getenv: os.Getenv}
	p, err := s.choose(ctx)
	if err != nil {
		return err
	}
	keyWhere := ""
	if p.Key != "" && p.KeyEnv != "" {
		// A pasted key goes to the credential store the config names
		// (credentials_store), not the config file; api_key_env lookups
		// find it there.
		kind, err := config.CredentialsStore(path, os.Getenv)
		var where string
		if err == nil {
			// secret-tool is not looked for on PATH inside the folder
			// setup runs in (credStore).
			wd, _ := os.Getwd()
			where, err = credentials.Open(home, kind, wd).Set(p.KeyEnv, p.Key)
		}
		if err == nil {
			p.Key, keyWhere = "", where
		} else {
			fmt.Fprintf(io.err, "could not store the key (%v); it goes into the config file\n", err)
		}
	}
	if err := config.AddProvider(path, p, f.force); err != nil {
		if errors.Is(err, config.ErrProviderExists) {
			return usagef("%v; pick another --name, or --force to start the file afresh", err)
		}
		return usageError{err}
	}
	key := "no key"
	switch {
	case p.Key != "":
		key = "key saved in the file (private to you)"
	case keyWhere != "":
		key = "key saved in " + keyWhere
	case p.KeyEnv != "":
		key = "key from $" + p.KeyEnv
	}
	fmt.Fprintf(io.out, "wrote %s: provider %s, model %s, %s\n", path, p.Name, p.Default, key)
	if p.KeyEnv != "" && p.Key == "" && keyWhere == "" && s.getenv(p.KeyEnv) == "" {
		fmt.Fprintf(io.out, "export %s before you start reasonix.\n", p.KeyEnv)
	}
	fmt.Fprintln(io.out, `next: reasonix (interactive) or reasonix run "explain this project"`)
	return nil
}

// setupRun is one setup conversation: flags first, questions only for
// what is still missing and only at a terminal.
type setupRun struct {
	flags  setupFlags
	io     stdio
	ask    bool
	in     *bufio.Reader
	getenv func(string) string
}

func (s *setupRun) choose(ctx context.Context) (config.NewProvider, error) {
	pre, err := s.preset()
	if err != nil {
		return config.NewProvider{}, err
	}
	p := config.NewProvider{Name: orDefault(s.flags.name, pre.Name), BaseURL: pre.BaseURL, KeyEnv: pre.KeyEnv,
		Models: slices.Clone(pre.Models), Default: pre.Default, ContextWindow: pre.ContextWindow}
	if s.flags.keyEnv != "" {
		p.KeyEnv = s.flags.keyEnv
	}
	switch {
	case s.flags.baseURL != "":
		p.BaseURL = s.flags.baseURL
	case pre.Name == "local" && s.ask:
		p.BaseURL = orDefault(s.line(fmt.Sprintf("Base URL of the server [%s]: ", pre.BaseURL)), pre.BaseURL)
	}
	key := ""
	if p.KeyEnv != "" {
		key = s.getenv(p.KeyEnv)
		switch {
		case key != "":
			fmt.Fprintf(s.io.err, "using the key in $%s\n", p.KeyEnv)
		case s.ask:
			if pre.SignUp != "" {
				fmt.Fprintf(s.io.err, "$%s is not set. Get a key at %s\n", p.KeyEnv, pre.SignUp)
			}
			key = s.secret(fmt.Sprintf("Paste the key (kept in your credential store, or a private file; empty: export $%s later): ", p.KeyEnv))
			p.Key = key
		}
	}
	if s.flags.model != "" {
		p.Default = s.flags.model
		if !slices.Contains(p.Models, p.Default) {
			p.Models = append([]string{p.Default}, p.Models...)
		}
	}
	if s.flags.noTest || (p.KeyEnv != "" && key == "") {
		if p.Default == "" {
			return p, usagef("give --model: %s has no default model and was not asked for its list", p.Name)
		}
		return p, nil
	}
	fmt.Fprintf(s.io.err, "testing %s … ", p.BaseURL)
	models, windows, err := openai.ProbeWindows(ctx, p.BaseURL, key, p.Default)
	if err != nil {
		fmt.Fprintln(s.io.err, "failed")
		if s.ask && s.yesNo(fmt.Sprintf("%v\nWrite the config anyway? [y/N] ", err)) {
			if p.Default == "" {
				return p, usagef("give --model: the server could not be asked for its models")
			}
			return p, nil
		}
		return p, fmt.Errorf("setup: %w (nothing written; --no-test writes without testing)", err)
	}
	fmt.Fprintln(s.io.err, "ok")
	if p.Default == "" && len(models) > 0 {
		// A local server: offer what it serves.
		p.Default = models[0]
		if s.ask && len(models) > 1 {
			for i, m := range models {
				fmt.Fprintf(s.io.err, "  %d) %s\n", i+1, m)
			}
			if n, err := strconv.Atoi(s.line("Model [1]: ")); err == nil && n >= 1 && n <= len(models) {
				p.Default = models[n-1]
			}
		}
		p.Models = []string{p.Default}
	}
	if p.Default == "" {
		return p, usagef("give --model: %s lists no models", p.BaseURL)
	}
	if len(models) > 0 && !slices.Contains(models, p.Default) {
		fmt.Fprintf(s.io.err, "note: %s does not list %s; check the model name if requests fail\n", p.BaseURL, p.Default)
	}
	if p.ContextWindow == 0 && windows[p.Default] > 0 {
		// A self-hosted server says how long a context it serves; without
		// it nothing would be compacted on its own.
		p.ContextWindow = windows[p.Default]
		fmt.Fprintf(s.io.err, "context window of %s: %d tokens, as the server lists it\n", p.Default, p.ContextWindow)
	}
	return p, nil
}

// preset is the preset --provider names; without it, the one the person
// picks, or the first whose key is in the environment.
func (s *setupRun) preset() (config.Preset, error) {
	all := config.Presets()
	names := make([]string, len(all))
	for i, p := range all {
		names[i] = p.Name
	}
	if s.flags.provider != "" {
		if p, ok := config.FindPreset(s.flags.provider); ok {
			return p, nil
		}
		return config.Preset{}, usagef("--provider %q: want one of %s", s.flags.provider, strings.Join(names, ", "))
	}
	def := -1
	for i, p := range all {
		if p.KeyEnv != "" && s.getenv(p.KeyEnv) != "" {
			def = i
			break
		}
	}
	if !s.ask {
		if def < 0 {
			return config.Preset{}, usagef("setup needs --provider (one of %s): no key of theirs is in the environment", strings.Join(names, ", "))
		}
		return all[def], nil
	}
	fmt.Fprintln(s.io.err, "Which provider?")
	for i, p := range all {
		mark := ""
		if p.KeyEnv != "" && s.getenv(p.KeyEnv) != "" {
			mark = " (key found in $" + p.KeyEnv + ")"
		}
		fmt.Fprintf(s.io.err, "  %d) %s%s\n", i+1, p.Label, mark)
	}
	if def < 0 {
		def = 0
	}
	for {
		a := s.line(fmt.Sprintf("Provider [%d]: ", def+1))
		if a == "" {
			return all[def], nil
		}
		if n, err := strconv.Atoi(a); err == nil && n >= 1 && n <= len(all) {
			return all[n-1], nil
		}
		if p, ok := config.FindPreset(a); ok {
			return p, nil
		}
	}
}

func (s *setupRun) line(prompt string) string {
	fmt.Fprint(s.io.err, prompt)
	l, _ := s.in.ReadString('\n')
	return strings.TrimSpace(l)
}

func (s *setupRun) yesNo(prompt string) bool {
	a := strings.ToLower(s.line(prompt))
	return a == "y" || a == "yes"
}

// secret reads a key without echoing it at a terminal.
func (s *setupRun) secret(prompt string) string {
	if f, ok := s.io.in.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(s.io.err, prompt)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(s.io.err)
		if err == nil {
			return strings.TrimSpace(string(b))
		}
	}
	return s.line(prompt)
}
