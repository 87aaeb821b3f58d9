package tui

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/reasonix/reasonix/events"
)

// TestPumpDoesNotOutliveRun is the race between Run returning and the pump
// handing over a batch: the pump has taken a batch and tview's event loop
// is gone (here it never ran) before done closes. tview's QueueUpdateDraw
// would wait for that loop forever; the pump must give the batch up.
func TestPumpDoesNotOutliveRun(t *testing.T) {
	a := New(Options{Screen: tcell.NewSimulationScreen("UTF-8"), Frame: time.Millisecond})
	ran := false
	a.post(func() { ran = true })
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		a.pump()
	}()
	// Wait until the pump has taken the batch, then a little longer so it
	// is past any check of done and waiting on the UI goroutine.
	deadline := time.Now().Add(5 * time.Second)
	for {
		a.mu.Lock()
		taken := len(a.queue) == 0
		a.mu.Unlock()
		if taken {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the pump never took the batch")
		}
		time.Sleep(time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	close(a.done)
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		t.Fatal("the pump is still blocked handing a batch to a UI loop that has ended")
	}
	if ran {
		t.Error("a batch ran without a UI loop")
	}
}

// TestQuitWhilePumping quits, by a key and by stopping tview, while a
// session streams deltas and the status line ticks, many times over: each
// time Run must return, which it does only after the pump has exited
// (goleak in TestMain checks nothing else is left behind). The stream is
// paced like a fast model: a flood would only measure how long the UI
// goroutine takes to render an unbounded backlog.
func TestQuitWhilePumping(t *testing.T) {
	for i := range 20 {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			h := start(t, Options{})
			h.app.busy.Store(true)
			stop := make(chan struct{})
			published := make(chan struct{})
			go func() {
				defer close(published)
				for n := 0; ; n++ {
					select {
					case <-stop:
						return
					default:
					}
					h.app.Publish(events.Event{Type: events.TextDelta, Session: "e-1", Text: fmt.Sprintf("delta %d ", n)})
					if n%20 == 19 {
						time.Sleep(time.Millisecond)
					}
				}
			}()
			time.Sleep(time.Duration(i%5) * time.Millisecond)
			if i%2 == 0 {
				h.key(tcell.KeyCtrlD)
			} else {
				h.app.app.Stop()
			}
			select {
			case err := <-h.ran:
				h.ran <- err // for the harness's cleanup
			case <-time.After(5 * time.Second):
				buf := make([]byte, 1<<20)
				t.Fatalf("Run did not return after a quit while the pump was busy:\n%s", buf[:runtime.Stack(buf, true)])
			}
			close(stop)
			<-published
		})
	}
}

// TestPumpRunsBatchesInOrder checks the handover keeps the order of posts
// and redraws after each batch.
func TestPumpRunsBatchesInOrder(t *testing.T) {
	h := start(t, Options{})
	got := make(chan int, 100)
	for i := range 100 {
		h.app.post(func() { got <- i })
		if i%10 == 0 {
			time.Sleep(2 * time.Millisecond)
		}
	}
	for i := range 100 {
		select {
		case n := <-got:
			if n != i {
				t.Fatalf("closure %d ran in place %d", n, i)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("closure %d never ran", i)
		}
	}
	h.app.post(func() { h.app.line("[::b]after the batches[::-]") })
	h.waitFor("after the batches")
}
