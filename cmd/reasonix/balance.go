package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/reasonix/reasonix/internal/config"
	"github.com/reasonix/reasonix/providers"
)

// cmdBalance is `reasonix balance [--model REF] [--json]`: the account
// balance of the default provider (or REF's), where the provider has a
// balance endpoint (DeepSeek).
func cmdBalance(ctx context.Context, args []string, io stdio) error {
	fs := flag.NewFlagSet("balance", flag.ContinueOnError)
	fs.SetOutput(io.err)
	asJSON := fs.Bool("json", false, "print JSON")
	model := fs.String("model", "", "provider, model, or provider/model whose account to ask")
	cfgFile := fs.String("config", "", "config file")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError{err}
	}
	if len(pos) > 0 {
		return usagef("balance takes no arguments (use --model to pick a provider)")
	}
	loaded, _, err := loadConfig(*cfgFile)
	if err != nil {
		return err
	}
	pcfgs, err := loaded.Config.ProviderConfigs(os.Getenv)
	if err != nil {
		return usageError{err}
	}
	if len(pcfgs) == 0 {
		return usageError{fmt.Errorf("%s", config.NoProviderHelp(loaded.Home))}
	}
	c, _, err := providers.Resolve(*model, pcfgs, loaded.Config.DefaultModel)
	if err != nil {
		return usageError{err}
	}
	prov, err := providers.New(c)
	if err != nil {
		return usageError{err}
	}
	br, ok := prov.(providers.BalanceReporter)
	if !ok {
		return fmt.Errorf("provider %q (kind %s) has no balance endpoint", c.Name, c.Kind)
	}
	b, err := br.Balance(ctx)
	if errors.Is(err, providers.ErrNoBalance) {
		return fmt.Errorf("provider %q has no balance endpoint (%s answered 404); only some providers, such as DeepSeek, have one", c.Name, c.BaseURL)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(io.out, struct {
			Provider string `json:"provider"`
			providers.Balance
		}{c.Name, b})
	}
	state := "available for API calls"
	if !b.Available {
		state = "NOT available for API calls (top up to go on)"
	}
	fmt.Fprintf(io.out, "%s: balance %s\n", c.Name, state)
	for _, a := range b.Accounts {
		fmt.Fprintf(io.out, "  %s %s", a.Total, a.Currency)
		if a.Granted != "" || a.ToppedUp != "" {
			fmt.Fprintf(io.out, " (topped up %s, granted %s)", orDash(a.ToppedUp), orDash(a.Granted))
		}
		fmt.Fprintln(io.out)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
