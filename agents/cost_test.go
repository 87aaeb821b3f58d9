package agents

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/providers"
)

// TestBudgetSharedAndEstimated: the budget is shared by sessions; a
// session's first request is estimated from its prompt at the miss price,
// later ones from the previous request's cost.
func TestBudgetSharedAndEstimated(t *testing.T) {
	price := &providers.Price{InputMiss: 1e6 / 1000.0, Currency: "USD"} // 1 USD per 1000 prompt tokens
	budget := &Budget{Limit: 0.5}
	fp := &fakeProvider{}
	// A 4000-byte system prompt is ~1000 tokens: about 1 USD, over the
	// budget before anything was spent.
	s, err := New(Config{Provider: fp, System: strings.Repeat("x", 4000), Price: price, Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Send(context.Background(), "hi")
	var be *BudgetError
	if !errors.As(err, &be) || len(fp.reqs) != 0 {
		t.Fatalf("err = %v, requests %d: want a budget stop before the first request", err, len(fp.reqs))
	}
	if !strings.Contains(be.Error(), "0.5000 USD budget") {
		t.Errorf("message: %s", be.Error())
	}

	// A small session fits; its cost (10 prompt tokens at 1 USD per 1000,
	// from the fake's usage) is charged to the shared budget.
	small, _ := New(Config{Provider: fp, System: "s", Price: price, Budget: budget})
	if _, err := small.Send(context.Background(), "hi"); err != nil {
		t.Fatal(err)
	}
	if got := budget.Spent(); got < 0.0099 || got > 0.0101 {
		t.Errorf("spent = %v, want 0.01", got)
	}
	if u := small.Usage(); u.Cost < 0.0099 || u.Currency != "USD" {
		t.Errorf("session usage = %+v", u)
	}
}
