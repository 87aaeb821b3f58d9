package tools

import (
	"slices"
	"strings"
	"testing"
)

func TestSecretsRedact(t *testing.T) {
	s := NewSecrets(nil, []string{"sk-short", "sk-short-and-longer-key", "tiny", ""})
	got := s.Redact("a sk-short-and-longer-key b sk-short c tiny")
	if want := "a [REDACTED] b [REDACTED] c tiny"; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
	var none *Secrets
	if got := none.Redact("sk-short"); got != "sk-short" {
		t.Errorf("nil Secrets changed text: %q", got)
	}
	if got := (&Env{}).Redact("x"); got != "x" {
		t.Errorf("Env without secrets: %q", got)
	}
}

func TestSecretsEnviron(t *testing.T) {
	environ := []string{
		"PATH=/usr/bin", "HOME=/home/u", "REASONIX_API_KEY=sk-reasonix-1",
		"deepseek_api_key=sk-deepseek-1", "COPY=prefix-sk-deepseek-1", "EMPTY=", "NOEQUALS",
		"=C:=C:\\work", "REASONIX_MODEL=m",
	}
	s := NewSecrets([]string{"DEEPSEEK_API_KEY", " "}, []string{"sk-deepseek-1"})
	got := s.Environ(environ)
	want := []string{"PATH=/usr/bin", "HOME=/home/u", "EMPTY=", "NOEQUALS", "=C:=C:\\work", "REASONIX_MODEL=m"}
	if !slices.Equal(got, want) {
		t.Errorf("Environ = %q, want %q", got, want)
	}
	var none *Secrets
	got = none.Environ(environ)
	if slices.ContainsFunc(got, func(kv string) bool { return strings.HasPrefix(kv, "REASONIX_API_KEY=") }) || len(got) != len(environ)-1 {
		t.Errorf("nil Secrets: %q", got)
	}
	if got := none.Environ(nil); got == nil {
		t.Error("Environ returned nil: exec.Cmd would inherit the whole environment")
	}
}
