package main

import "testing"

func TestHistoryText(t *testing.T) {
	for _, c := range []struct {
		f        runFlags
		prompt   string
		planOnly bool
		want     string
	}{
		{runFlags{}, "fix it", false, "fix it"},
		{runFlags{}, "add x", true, "/plan add x"},
		{runFlags{goal: "ship it"}, "", false, "/goal ship it"},
		{runFlags{goal: "ship it"}, "carefully", false, "/goal ship it\n\ncarefully"},
		{runFlags{goal: "resume"}, "", false, ""},
		{runFlags{plan: "p-1"}, "", false, ""},
		{runFlags{}, "", false, ""},
	} {
		if got := historyText(c.f, c.prompt, c.planOnly); got != c.want {
			t.Errorf("historyText(%+v, %q, %v) = %q, want %q", c.f, c.prompt, c.planOnly, got, c.want)
		}
	}
}
