package permission

import (
	"context"
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

// TestGateWebFetchHeadless: a headless run fetches from a host a rule
// allows, refuses a host no rule names in the ask posture (it is not
// a posture-only ask like a command, which the sandbox confines), and
// lets the auto and yolo postures allow it.
func TestGateWebFetchHeadless(t *testing.T) {
	fetch := fakeTool{name: "web_fetch"}
	for _, tc := range []struct {
		mode      string
		url       string
		allow     bool
		inMessage string
	}{
		{"ask", "https://docs.example.com/a", true, ""},
		{"ask", "https://evil.test/?k=secret", false, "no WebFetch(domain:evil.test) rule allows fetching from evil.test"},
		{"deny", "https://evil.test/", false, "mode deny"},
		{"auto", "https://evil.test/", true, ""},
		{"yolo", "https://evil.test/", true, ""},
	} {
		p, err := ParsePolicy(tc.mode, []string{"WebFetch(domain:docs.example.com)"}, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		g := NewGate(GateOptions{Policy: p})
		v := g.Authorize(context.Background(), tools.Invocation{Tool: fetch, Access: tools.Access{Kind: tools.KindNetwork, URL: tc.url}})
		if v.Allow != tc.allow || !strings.Contains(v.Message, tc.inMessage) {
			t.Errorf("%s %s: allow = %v %q, want %v with %q", tc.mode, tc.url, v.Allow, v.Message, tc.allow, tc.inMessage)
		}
	}
}

// TestWebFetchLocalHosts: a fetch from this machine or a private network
// waits for a person in every posture, unless an allow rule names that
// host (domain:* does not) or the person granted it for the session.
func TestWebFetchLocalHosts(t *testing.T) {
	t.Parallel()
	net := func(u string) tools.Access { return tools.Access{Kind: tools.KindNetwork, URL: u} }
	for _, mode := range []string{"ask", "auto", "yolo"} {
		pol, err := ParsePolicy(mode, []string{"WebFetch(domain:*)", "WebFetch(domain:10.0.0.7)"}, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, u := range []string{"http://127.0.0.1:8080/", "http://localhost/", "http://169.254.169.254/latest/meta-data/",
			"http://[::1]:3000/", "http://192.168.1.1/admin", "http://dev.localhost/"} {
			out := pol.Explain("web_fetch", false, net(u))
			if out.Decision != Ask || !strings.Contains(out.Person, "address") {
				t.Errorf("%s %s: %v %q, want a person asked", mode, u, out.Decision, out.Person)
			}
		}
		if got := pol.Decide("web_fetch", false, net("http://10.0.0.7/x")); got != Allow {
			t.Errorf("%s: a rule naming 10.0.0.7: %v", mode, got)
		}
		if got := pol.Decide("web_fetch", false, net("https://example.com/")); got != Allow {
			t.Errorf("%s: a public host under domain:*: %v", mode, got)
		}
	}
	deny, _ := ParsePolicy("auto", nil, nil, []string{"WebFetch(domain:localhost)"}, nil)
	if got := deny.Decide("web_fetch", false, net("http://localhost/")); got != Deny {
		t.Errorf("a deny rule: %v", got)
	}
}
