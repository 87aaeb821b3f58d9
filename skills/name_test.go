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
