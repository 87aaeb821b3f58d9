package openai

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/reasonix/reasonix/providers"
)

// Balance asks the provider's account balance endpoint (DeepSeek's GET
// /user/balance, beside the API root) what the account has left.
// Servers without one answer 404, reported as providers.ErrNoBalance.
func (p *Provider) Balance(ctx context.Context) (providers.Balance, error) {
	var b providers.Balance
	if p.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.cfg.Timeout)
		defer cancel()
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodGet, balanceURL(p.url), nil)
	if err != nil {
		return b, fmt.Errorf("%s: build request: %w", p.name, err)
	}
	hreq.Header.Set("Accept", "application/json")
	hreq.Header.Set("User-Agent", "reasonix")
	if p.apiKey != "" {
		hreq.Header.Set("Authorization", "Bearer "+p.apiKey)
	}
	for k, v := range p.cfg.Headers {
		hreq.Header.Set(k, v)
	}
	resp, err := p.client.Do(hreq)
	if err != nil {
		return b, fmt.Errorf("%s: %w", p.name, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return b, fmt.Errorf("%s: read balance: %w", p.name, err)
	}
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return b, fmt.Errorf("%s: %w", p.name, providers.ErrNoBalance)
	case resp.StatusCode != http.StatusOK:
		return b, &StatusError{Provider: p.name, Status: resp.StatusCode, Message: errorMessage(resp.StatusCode, raw)}
	}
	var wire struct {
		IsAvailable  bool `json:"is_available"`
		BalanceInfos []struct {
			Currency        string `json:"currency"`
			TotalBalance    string `json:"total_balance"`
			GrantedBalance  string `json:"granted_balance"`
			ToppedUpBalance string `json:"topped_up_balance"`
		} `json:"balance_infos"`
	}
	if err := json.Unmarshal(raw, &wire); err != nil {
		return b, fmt.Errorf("%s: balance: malformed answer %.200q: %w", p.name, raw, err)
	}
	b.Available = wire.IsAvailable
	for _, i := range wire.BalanceInfos {
		b.Accounts = append(b.Accounts, providers.BalanceAccount{Currency: i.Currency, Total: i.TotalBalance,
			Granted: i.GrantedBalance, ToppedUp: i.ToppedUpBalance})
	}
	return b, nil
}

// balanceURL is the balance endpoint beside the API root: the chat URL
// less /chat/completions and a trailing /v1.
func balanceURL(chat string) string {
	root := strings.TrimSuffix(chat, "/chat/completions")
	root = strings.TrimSuffix(root, "/v1")
	return root + "/user/balance"
}
