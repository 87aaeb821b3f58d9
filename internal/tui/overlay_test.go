package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/reasonix/reasonix/events"
)

// overlayInside is the text inside the top overlay's border, a row each.
func overlayInside(rows [][]rune) []string {
	var in []string
	for _, r := range rows {
		s := wide(r)
		i, j := strings.Index(s, "║"), strings.LastIndex(s, "║")
		if i < 0 || j <= i {
			continue
		}
		in = append(in, strings.TrimSpace(s[i+len("║"):j]))
	}
	return in
}

// fitError is "" when rows show every word of want, in order, and a
// last row starting with keys; else what is wrong.
func fitError(rows []string, want, keys string) string {
	if len(rows) == 0 {
		return "no overlay"
	}
	var words []string
	for _, r := range rows[:len(rows)-1] {
		words = append(words, strings.Fields(r)...)
	}
	if got := strings.Join(words, " "); got != want {
		return fmt.Sprintf("the overlay reads %q, want %q", got, want)
	}
	if !strings.HasPrefix(rows[len(rows)-1], keys) {
		return fmt.Sprintf("the last row is %q, want %q", rows[len(rows)-1], keys)
	}
	return ""
}

// Every overlay is as high as its text wraps to at the width it is drawn
// at: opened at 120 columns and then made 50 wide, each shows all of its
// text and its keys, and at 120 again it has shrunk back, with no empty
// rows (it kept the height it was opened with, cutting off the end).
// The approval overlay has an end-to-end test of its own
// (TestTUIApprovalOverlayFitsOnResize).
func TestOverlaysFitTheirTextAfterAResize(t *testing.T) {
	long := func(what string) string {
		var w []string
		for i := 1; i <= 16; i++ {
			w = append(w, fmt.Sprintf("%s%02d", what, i))
		}
		return strings.Join(w, " ")
	}
	cases := []struct {
		name       string
		open       func(a *App)
		want, keys string
	}{
		{"confirm", func(a *App) { a.confirm(long("sure"), func() {}) }, long("sure"), "y yes"},
		{"plan", func(a *App) {
			p := events.Plan{Goal: long("goal"), Steps: []events.PlanStep{{ID: "s1", Title: long("step")}}}
			a.showPlan(context.Background(), p, func(planAnswer) {})
		}, "# Plan: " + long("goal") + " ## Steps 1. **" + long("step") + "** `s1`", "a approve"},
		{"tool output", func(a *App) {
			a.keepCall("", events.Tool{Name: "bash", Subject: "true", Result: long("out")})
			a.toolOutput()
		}, "✓ bash true " + long("out"), "1 call(s)"},
		{"question", func(a *App) {
			a.openQuestion(events.Event{Type: events.QuestionRequest, Session: "e-1", Role: "executor",
				Question: &events.Question{ID: "q-1", Text: long("ask"), Choices: []string{long("one"), long("two")}}})
		}, long("ask") + " 1 " + long("one") + " 2 " + long("two") + " answer:", "Enter answers"},
		{"picker", func(a *App) {
			a.pick("pick one", []pickItem{{label: "  " + long("first")}, {label: "  " + long("second")}}, func(string) {})
		}, long("first") + " " + long("second"), "↑/↓ move"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := start(t, Options{})
			size := func(w int) {
				h.sim.SetSize(w, 40)
				h.postEvent(tcell.NewEventResize(w, 40))
				h.app.app.QueueUpdateDraw(func() { h.sim.Clear() })
			}
			size(120)
			h.waitWide("Ask Reasonix")
			h.app.post(func() { tc.open(h.app) })
			check := func(at string, same int) []string {
				t.Helper()
				deadline := time.Now().Add(5 * time.Second)
				for {
					rows := overlayInside(h.cellRows())
					err := fitError(rows, tc.want, tc.keys)
					if err == "" && same > 0 && len(rows) != same {
						err = fmt.Sprintf("%d rows, %d before", len(rows), same)
					}
					if err == "" {
						return rows
					}
					if time.Now().After(deadline) {
						t.Fatalf("%s: %s\n%q", at, err, rows)
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
			wide := check("at 120 columns", 0)
			size(50)
			narrow := check("at 50 columns", 0)
			if len(narrow) <= len(wide) {
				t.Errorf("the overlay did not grow at 50 columns: %d rows, %d at 120", len(narrow), len(wide))
			}
			size(120)
			check("at 120 columns again", len(wide))
		})
	}
}
