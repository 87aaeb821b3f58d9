package memory

import (
	"regexp"
	"testing"
)

// TestValidNameMatchesPattern checks the hand-written name check against
// the pattern it replaces, ^[a-z0-9][a-z0-9_-]{0,63}$, on edge cases and
// every short string over a small alphabet.
func TestValidNameMatchesPattern(t *testing.T) {
	re := regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)
	cases := []string{"", "a", "0", "-", "_", "build-command", "a_b", "A", "a.b", "a/b", "../x", "a\n",
		string(make([]byte, 64)), "é"}
	long := "a"
	for len(long) < 70 {
		cases = append(cases, long)
		long += "b"
	}
	alphabet := []byte{'a', '9', '-', '_', 'Z', '.', '\n'}
	var gen func(prefix []byte, n int)
	gen = func(prefix []byte, n int) {
		cases = append(cases, string(prefix))
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			gen(append(prefix, c), n-1)
		}
	}
	gen(nil, 4)
	for _, c := range cases {
		if got, want := validName(c), re.MatchString(c); got != want {
			t.Errorf("validName(%q) = %v, the pattern says %v", c, got, want)
		}
		if err := CheckName(c); (err == nil) != re.MatchString(c) {
			t.Errorf("CheckName(%q) = %v", c, err)
		}
	}
}
