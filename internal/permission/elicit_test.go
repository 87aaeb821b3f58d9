package permission

import (
	"context"
	"strings"
	"testing"

	"github.com/reasonix/reasonix/events"
)

// A request for input goes out as an event naming its server and
// session; a bad answer is refused and the request asked again with the
// reason; a good one is checked and delivered; cancelling withdraws it
// and Close declines what waits and everything after.
func TestBrokerElicitation(t *testing.T) {
	fe := &frontEnd{}
	b := NewBroker(fe.Publish)
	form := events.Elicitation{Server: "deploy", Message: "Where to?", Mode: events.ElicitForm,
		Fields: []events.ElicitField{{Name: "env", Type: "string", Required: true, Options: []events.ElicitOption{{Value: "prod"}, {Value: "dev"}}}}}
	type result struct {
		a   events.ElicitAnswer
		err error
	}
	ask := func(ctx context.Context) chan result {
		ch := make(chan result, 1)
		go func() {
			a, err := b.Elicit(ctx, "s-1", form)
			ch <- result{a, err}
		}()
		return ch
	}
	got := ask(context.Background())
	waitFor(t, func() bool { return len(fe.of(events.ElicitationRequest)) == 1 })
	req := fe.of(events.ElicitationRequest)[0]
	id := req.Elicitation.ID
	if req.Session != "s-1" || req.Elicitation.Server != "deploy" || id != "el-1" {
		t.Fatalf("request %+v", req)
	}
	if err := b.AnswerElicitation(id, events.ElicitAnswer{Action: "maybe"}); err == nil {
		t.Fatal("action maybe accepted")
	}
	err := b.AnswerElicitation(id, events.ElicitAnswer{Action: events.ElicitAccept, Content: map[string]any{"env": "staging"}})
	if err == nil || !strings.Contains(err.Error(), `env: "staging" is not one of its choices (prod, dev)`) {
		t.Fatalf("bad value: %v", err)
	}
	reqs := fe.of(events.ElicitationRequest)
	if len(reqs) != 2 || reqs[1].Elicitation.ID != id || !strings.Contains(reqs[1].Elicitation.Error, `"staging" is not one of its choices`) {
		t.Fatalf("not asked again: %+v", reqs)
	}
	if err := b.AnswerElicitation(id, events.ElicitAnswer{Action: events.ElicitAccept, Content: map[string]any{"env": "dev"}}); err != nil {
		t.Fatal(err)
	}
	if r := <-got; r.err != nil || r.a.Action != events.ElicitAccept || r.a.Content["env"] != "dev" {
		t.Fatalf("answer %+v", r)
	}
	if res := fe.of(events.ElicitationResolved); len(res) != 1 || res[0].Elicitation.Action != events.ElicitAccept || res[0].Session != "s-1" {
		t.Fatalf("resolved %+v", res)
	}
	if err := b.AnswerElicitation(id, events.ElicitAnswer{Action: events.ElicitDecline}); err == nil {
		t.Fatal("answered twice")
	}

	ctx, cancel := context.WithCancel(context.Background())
	got = ask(ctx)
	waitFor(t, func() bool { return len(fe.of(events.ElicitationRequest)) == 3 })
	cancel()
	if r := <-got; r.err == nil {
		t.Fatalf("cancelled: %+v", r)
	}
	if res := fe.of(events.ElicitationResolved); len(res) != 2 || res[1].Elicitation.Action != "" {
		t.Fatalf("withdrawn %+v", res)
	}

	got = ask(context.Background())
	waitFor(t, func() bool { return len(fe.of(events.ElicitationRequest)) == 4 })
	b.Close("stdin closed")
	if r := <-got; r.err != nil || r.a.Action != events.ElicitDecline {
		t.Fatalf("closed: %+v", r)
	}
	if a, err := b.Elicit(context.Background(), "", form); err != nil || a.Action != events.ElicitDecline {
		t.Fatalf("after close: %+v %v", a, err)
	}
}
