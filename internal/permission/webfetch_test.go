package permission

import (
	"strings"
	"testing"

	"github.com/reasonix/reasonix/tools"
)

func TestWebFetchDomainRules(t *testing.T) {
	pol, err := ParsePolicy("ask",
		[]string{"WebFetch(domain:docs.example.com)", "web_fetch(domain:*.go.dev)"},
		nil,
		[]string{"WebFetch(domain:evil.example)"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	net := func(u string) tools.Access { return tools.Access{Kind: tools.KindNetwork, URL: u} }
	cases := []struct {
		url  string
		want Decision
	}{
		{"https://docs.example.com/a", Allow},
		{"http://DOCS.example.com:8080/x", Allow},
		{"https://example.com/", Ask},
		{"https://docs.example.com.attacker.io/", Ask},
		{"https://pkg.go.dev/fmt", Allow},
		{"https://go.dev/", Ask},
		{"https://evil.example/steal", Deny},
		{"https://EVIL.example./", Deny},
	}
	for _, c := range cases {
		if got := pol.Decide("web_fetch", false, net(c.url)); got != c.want {
			t.Errorf("%s: %v, want %v", c.url, got, c.want)
		}
	}
	// "Always allow" saves a rule for the host, which then allows it.
	out := pol.Explain("web_fetch", false, net("https://api.example.org/v1?q=1"))
	if len(out.Suggest) != 1 || out.Suggest[0] != "WebFetch(domain:api.example.org)" {
		t.Fatalf("suggest = %q", out.Suggest)
	}
	// domain:* (written in Claude Code settings) is every host.
	star, err := ParsePolicy("deny", []string{"WebFetch(domain:*)"}, nil, nil, nil)
	if err != nil || star.Decide("web_fetch", false, net("https://any.where/")) != Allow {
		t.Errorf("WebFetch(domain:*): %v", err)
	}
	// A bare WebFetch deny refuses every fetch.
	all, _ := ParsePolicy("auto", nil, nil, []string{"WebFetch"}, nil)
	if all.Decide("web_fetch", false, net("https://docs.example.com/")) != Deny {
		t.Error("bare WebFetch deny did not refuse")
	}
}

func TestWebFetchRuleSyntax(t *testing.T) {
	for _, bad := range []string{"WebFetch(example.com)", "WebFetch(domain:)", "WebFetch(domain:a*.com)", "WebFetch(domain:x.com/path)"} {
		if _, err := ParseRule(bad); err == nil || !strings.Contains(err.Error(), bad) {
			t.Errorf("%s: err %v, want an error naming the rule", bad, err)
		}
	}
	if _, err := ParseRule("WebFetch(domain:[::1])"); err != nil {
		t.Errorf("ipv6 host: %v", err)
	}
}
