package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// TestE2EBalance asks a local server shaped like DeepSeek's balance
// endpoint, beside its /v1 API root, with the configured key.
func TestE2EBalance(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex // the handler runs on the server's goroutines
	var auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != "/user/balance" {
			http.NotFound(w, r)
			return
		}
		mu.Lock()
		auth = r.Header.Get("Authorization")
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"is_available":true,"balance_infos":[{"currency":"CNY","total_balance":"110.00","granted_balance":"10.00","topped_up_balance":"100.00"},{"currency":"USD","total_balance":"3.50","granted_balance":"0.00","topped_up_balance":"3.50"}]}`))
	}))
	t.Cleanup(srv.Close)
	e := newE2E(t)
	env := []string{"DS_KEY=sk-balance-test"}
	for _, v := range e.env {
		if !strings.HasPrefix(v, "REASONIX_MODEL=") && !strings.HasPrefix(v, "REASONIX_API_KEY=") {
			env = append(env, v)
		}
	}
	e.env = env
	e.writeUserConfig(`[[providers]]
name = "deepseek"
base_url = "` + srv.URL + `/v1"
api_key_env = "DS_KEY"
model = "deepseek-chat"

[[providers]]
name = "other"
base_url = "` + srv.URL + `/other/v1"
model = "x"
`)
	r := e.run("", "balance")
	if r.code != 0 {
		t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	for _, want := range []string{"deepseek: balance available for API calls", "110.00 CNY (topped up 100.00, granted 10.00)", "3.50 USD"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("balance lacks %q:\n%s", want, r.stdout)
		}
	}
	mu.Lock()
	got := auth
	mu.Unlock()
	if got != "Bearer sk-balance-test" {
		t.Errorf("Authorization = %q", got)
	}
	r = e.run("", "balance", "--json")
	var b struct {
		Provider  string `json:"provider"`
		Available bool   `json:"available"`
		Accounts  []struct {
			Currency, Total string
		} `json:"accounts"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &b); err != nil || b.Provider != "deepseek" || !b.Available || len(b.Accounts) != 2 || b.Accounts[1].Total != "3.50" {
		t.Errorf("balance --json = %+v, %v\n%s", b, err, r.stdout)
	}
	// A provider without the endpoint says so, exit 1.
	r = e.run("", "balance", "--model", "other")
	if r.code != 1 || !strings.Contains(r.stderr, `provider "other" has no balance endpoint`) {
		t.Errorf("no endpoint: exit %d %s", r.code, r.stderr)
	}
}
