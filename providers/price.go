package providers

import (
	"context"
	"errors"
	"net/url"
	"strings"
)

// Price is what a model charges, per million tokens, in Currency: prompt
// tokens served from the provider's prefix cache (InputHit), the other
// prompt tokens (InputMiss) and completion tokens (Output).
type Price struct {
	InputHit  float64 `json:"input_hit"`
	InputMiss float64 `json:"input_miss"`
	Output    float64 `json:"output"`
	Currency  string  `json:"currency,omitempty"`
}

// Cost is the price of u. Prompt tokens the provider did not split into
// hits and misses are charged as misses.
func (p Price) Cost(u Usage) float64 {
	hit, miss := u.CacheHitTokens, u.CacheMissTokens
	if hit+miss == 0 {
		miss = u.PromptTokens
	}
	return (float64(hit)*p.InputHit + float64(miss)*p.InputMiss + float64(u.CompletionTokens)*p.Output) / 1e6
}

// Priced is a provider that knows what its models cost. Providers built
// from a Config implement it through Config.PriceFor.
type Priced interface {
	PriceFor(model string) (Price, bool)
}

// PriceOf is the price of model served by p, and whether it is known.
func PriceOf(p Provider, model string) (Price, bool) {
	if pp, ok := p.(Priced); ok {
		return pp.PriceFor(model)
	}
	return Price{}, false
}

// PriceFor is the price of model under c: the model's own entry in
// ModelPrices, else the provider's Price, else DeepSeek's published price
// when the provider is DeepSeek's own API.
func (c Config) PriceFor(model string) (Price, bool) {
	var p Price
	switch mp, ok := c.ModelPrices[model]; {
	case ok:
		p = mp
	case c.Price != nil:
		p = *c.Price
	default:
		d, ok := deepSeekPrice(c.BaseURL, model)
		if !ok {
			return Price{}, false
		}
		p = d
	}
	if p.Currency == "" {
		p.Currency = "USD"
	}
	return p, true
}

// deepSeekPrices are DeepSeek's published prices in USD per million
// tokens (api-docs.deepseek.com, "Models & Pricing"); deepseek-chat and
// deepseek-reasoner are aliases of the flash model. Prices change: a
// configured price always wins.
func deepSeekPrices(model string) (Price, bool) {
	switch model {
	case "deepseek-v4-flash", "deepseek-chat", "deepseek-reasoner":
		return Price{InputHit: 0.0028, InputMiss: 0.14, Output: 0.28}, true
	case "deepseek-v4-pro":
		return Price{InputHit: 0.003625, InputMiss: 0.435, Output: 0.87}, true
	}
	return Price{}, false
}

func deepSeekPrice(baseURL, model string) (Price, bool) {
	u, err := url.Parse(baseURL)
	if err != nil || !strings.HasSuffix(strings.ToLower(u.Hostname()), "deepseek.com") {
		return Price{}, false
	}
	p, ok := deepSeekPrices(strings.ToLower(model))
	p.Currency = "USD"
	return p, ok
}

// CacheHitRatio is the share of prompt tokens served from the cache, 0
// when nothing was reported.
func (u Usage) CacheHitRatio() float64 {
	total := u.CacheHitTokens + u.CacheMissTokens
	if total == 0 {
		return 0
	}
	return float64(u.CacheHitTokens) / float64(total)
}

// Flattener is a provider that says whether its models get deep tool
// schemas flattened. Providers built from a Config implement it.
type Flattener interface {
	FlattensSchemas() bool
}

// FlattensSchemas reports whether p's models get flattened schemas.
func FlattensSchemas(p Provider) bool {
	f, ok := p.(Flattener)
	return ok && f.FlattensSchemas()
}

// Flattens is the flatten_schemas setting of c: as configured, else on
// for DeepSeek's own API, whose models lose arguments nested deep.
func (c Config) Flattens() bool {
	if c.FlattenSchemas != nil {
		return *c.FlattenSchemas
	}
	u, err := url.Parse(c.BaseURL)
	return err == nil && strings.HasSuffix(strings.ToLower(u.Hostname()), "deepseek.com")
}

// ErrNoBalance says a provider has no balance endpoint.
var ErrNoBalance = errors.New("this provider has no balance endpoint")

// Balance is what an account has left, per currency.
type Balance struct {
	// Available says whether the balance allows API calls.
	Available bool             `json:"available"`
	Accounts  []BalanceAccount `json:"accounts"`
}

// BalanceAccount is the balance in one currency, as the provider writes
// the amounts.
type BalanceAccount struct {
	Currency string `json:"currency"`
	Total    string `json:"total"`
	Granted  string `json:"granted,omitempty"`
	ToppedUp string `json:"topped_up,omitempty"`
}

// BalanceReporter is a provider that can report its account balance.
type BalanceReporter interface {
	Balance(ctx context.Context) (Balance, error)
}
