package orchestrator

import (
	"context"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/store"
	"github.com/reasonix/reasonix/providers/scripted"
)

// TestEngineSetModelAndEffort: a switched model and effort reach the next
// request with the history intact, the request is recorded as a cache
// reset, and both are saved in the session, so a resume keeps them.
func TestEngineSetModelAndEffort(t *testing.T) {
	h := newHarness(t, []scripted.Turn{
		{Match: "FIRST", Text: "one"},
		{Match: "SECOND", ToolCalls: []scripted.Call{call(TaskTool, map[string]any{"agent": "explore", "description": "look", "prompt": "SUBTASK look around"})}},
		{Match: "SUBTASK", Text: "found nothing"},
		{Match: "found nothing", Text: "two"},
	})
	hub := &events.Hub{}
	h.coord.rt.Sink = hub
	eng, err := NewEngine(h.coord, hub, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := eng.Send(ctx, "FIRST"); err != nil {
		t.Fatal(err)
	}
	if got := eng.Model(); !strings.HasSuffix(got, "/exec-model") {
		t.Errorf("Model() = %q before the switch", got)
	}
	key, err := eng.SetModel("other-model")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(key, "/other-model") || eng.Model() != key {
		t.Errorf("SetModel = %q, Model() = %q", key, eng.Model())
	}
	if err := eng.SetEffort("high"); err != nil {
		t.Fatal(err)
	}
	if err := eng.SetEffort("extreme"); err == nil {
		t.Error("an unknown effort was accepted")
	}
	if _, err := eng.SetModel("bad-model"); err == nil {
		t.Error("an unknown model was accepted")
	}
	path := eng.conversation().w.path
	// Saved before the next turn: quitting now keeps the choice.
	l, err := store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(l.Meta.Model, "/other-model") || l.Meta.Effort != "high" {
		t.Errorf("saved meta = model %q effort %q", l.Meta.Model, l.Meta.Effort)
	}
	if err := eng.Send(ctx, "SECOND"); err != nil {
		t.Fatal(err)
	}
	var second *recProvider
	for _, p := range h.used() {
		for _, r := range p.requests() {
			if r.Model == "other-model" && strings.Contains(p.firstUser(), "FIRST") {
				second = p
			}
		}
	}
	if sub := h.session("SUBTASK"); sub.requests()[0].Model != "other-model" {
		t.Errorf("the subagent started after the switch ran on %q", sub.requests()[0].Model)
	}
	if second == nil {
		t.Fatal("no request went to other-model")
	}
	req := second.requests()[0]
	if req.Effort != "high" || len(req.Messages) < 4 || req.Messages[1].Content != "FIRST" {
		t.Errorf("request after the switch: effort %q, messages %+v", req.Effort, req.Messages)
	}
	eng.Close()
	l, err = store.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(l.Requests); n != 3 || !strings.Contains(l.Requests[1].Reset, "model switched") || l.Requests[2].Reset != "" {
		t.Errorf("request records = %+v, want the second (only) marked as a cache reset", l.Requests)
	}
	if u, n, err := eng.SavedUsage(); err != nil || n != 3 {
		t.Errorf("SavedUsage = %+v, %d, %v; want the 3 recorded requests", u, n, err)
	}
	cv, err := h.coord.Resume(path, "")
	if err != nil {
		t.Fatal(err)
	}
	defer cv.Close()
	if !strings.HasSuffix(cv.w.key(), "/other-model") || cv.w.effortLevel() != "high" || cv.w.Effort() != "high" {
		t.Errorf("resumed: model %q effort %q", cv.w.key(), cv.w.effortLevel())
	}
}

// TestEngineSetModelBeforeTheFirstTurn: a switch before any turn is the
// model of the first request and of the new session file's header, and
// /new keeps the run's choice.
func TestEngineSetModelBeforeTheFirstTurn(t *testing.T) {
	h := newHarness(t, []scripted.Turn{{Match: "FIRST", Text: "one"}, {Match: "AFTER-NEW", Text: "two"}})
	hub := &events.Hub{}
	h.coord.rt.Sink = hub
	eng, err := NewEngine(h.coord, hub, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	if _, err := eng.SetModel("other-model"); err != nil {
		t.Fatal(err)
	}
	if err := eng.Send(context.Background(), "FIRST"); err != nil {
		t.Fatal(err)
	}
	if got := h.session("FIRST").requests()[0].Model; got != "other-model" {
		t.Errorf("first request model = %q", got)
	}
	l, err := store.Load(eng.conversation().w.path)
	if err != nil {
		t.Fatal(err)
	}
	if l.Header.Model != "other-model" {
		t.Errorf("header model = %q", l.Header.Model)
	}
	if err := eng.NewConversation(); err != nil {
		t.Fatal(err)
	}
	if err := eng.Send(context.Background(), "AFTER-NEW"); err != nil {
		t.Fatal(err)
	}
	if got := h.session("AFTER-NEW").requests()[0].Model; got != "other-model" {
		t.Errorf("after /new the request went to %q", got)
	}
}

// A worker whose tools include no task tool has no pin: switching or
// borrowing its model must not reach for one.
func TestNilModelPinIsInert(t *testing.T) {
	var p *modelPin
	p.set("deepseek/deepseek-chat")
	if got := p.get(); got != "" {
		t.Fatalf("a nil pin holds %q", got)
	}
}
