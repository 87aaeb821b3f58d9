package skills

import "testing"

func TestValidName(t *testing.T) {
	for name, want := range map[string]bool{
		"a": true, "deploy": true, "code-review": true, "a1-b2-c3": true, "9": true,
		"": false, "-a": false, "a-": false, "a--b": false, "A": false, "a_b": false, "a b": false, "-": false,
	} {
		if got := validName(name); got != want {
			t.Errorf("validName(%q) = %v, want %v", name, got, want)
		}
	}
}

func TestSlug(t *testing.T) {
	for in, want := range map[string]string{
		"Agent Development": "agent-development", "Bad_Name": "bad-name", "  PDF  tools ": "pdf-tools",
		"a--b": "a-b", "代码审查": "", "v2 API": "v2-api",
	} {
		if got := Slug(in); got != want {
			t.Errorf("Slug(%q) = %q, want %q", in, got, want)
		}
	}
}
