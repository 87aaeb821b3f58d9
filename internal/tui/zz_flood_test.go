package tui

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/reasonix/reasonix/events"
)

func TestZZFlood(t *testing.T) {
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
				h.ran <- err
			case <-time.After(5 * time.Second):
				buf := make([]byte, 4<<20)
				t.Fatalf("stuck:\n%s", buf[:runtime.Stack(buf, true)])
			}
			close(stop)
			<-published
		})
	}
}
