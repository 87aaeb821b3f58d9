package events

import (
	"strings"
	"sync"
	"testing"
)

func TestHubReplaysTheBacklogToTheFirstSubscriber(t *testing.T) {
	var h Hub
	h.Publish(Event{Type: Notice, Text: "early"})
	var first, second Recorder
	stop := h.Subscribe(&first)
	h.Subscribe(&second)
	h.Publish(Event{Type: Notice, Text: "later"})
	stop()
	h.Publish(Event{Type: Notice, Text: "after unsubscribe"})

	texts := func(r *Recorder) (out []string) {
		for _, e := range r.Events() {
			out = append(out, e.Text)
		}
		return out
	}
	if got := texts(&first); len(got) != 2 || got[0] != "early" || got[1] != "later" {
		t.Errorf("first subscriber saw %q", got)
	}
	if got := texts(&second); len(got) != 2 || got[0] != "later" || got[1] != "after unsubscribe" {
		t.Errorf("second subscriber saw %q", got)
	}
}

func TestHubIsSafeForConcurrentPublishers(t *testing.T) {
	var h Hub
	var r Recorder
	h.Subscribe(&r)
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 100; j++ {
				h.Publish(Event{Type: TextDelta})
			}
		}()
	}
	wg.Wait()
	if n := len(r.Events()); n != 800 {
		t.Errorf("delivered %d of 800", n)
	}
}

func TestBriefNamesTheSubject(t *testing.T) {
	long := ""
	for i := 0; i < 50; i++ {
		long += "中文"
	}
	for _, c := range []struct {
		tool Tool
		want string
	}{
		{Tool{Name: "bash", Subject: "go test ./...\n  -run X"}, "bash go test ./...   -run X"},
		{Tool{Name: "todo_read"}, "todo_read"},
		{Tool{Name: "read_file", Subject: long}, "read_file " + long[:120] + "…"},
	} {
		if got := c.tool.Brief(); got != c.want {
			t.Errorf("Brief = %q, want %q", got, c.want)
		}
	}
}

func TestPlanValidateReportsEveryProblem(t *testing.T) {
	p := Plan{Steps: []PlanStep{{ID: "a", Title: "x"}, {ID: "a", DependsOn: []string{"b"}}}}
	err := p.Validate()
	if err == nil {
		t.Fatal("invalid plan accepted")
	}
	for _, want := range []string{"goal is empty", "id is used by an earlier step", "title is empty", `depends_on "b"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, err := ParsePlan([]byte(`{"goal":"g","steps":[{"id":"s1","title":"t"}],"extra":1}`)); err == nil {
		t.Error("unknown field accepted")
	}
}
