package tui

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gdamore/tcell/v2"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/benchtest"
)

// TestTUIBench prints the figures issue 14 asks for, under `make bench`
// (REASONIX_BENCH=1): keypress-to-frame and chunk-to-frame latency at the
// default frame pacing, and the time of one frame, all with a
// 10,000-line Markdown transcript on a 120x40 screen. Timings are not
// asserted: the machine varies.
func TestTUIBench(t *testing.T) {
	if os.Getenv("REASONIX_BENCH") == "" {
		t.Skip("figures only: set REASONIX_BENCH=1 (make bench)")
	}
	h := start(t, Options{Frame: defaultFrame})
	h.sim.SetSize(120, 40)

	var mu sync.Mutex
	var drawStart time.Time
	var frameTimes []time.Duration
	frames := make(chan time.Time, 4096)
	var rendered atomic.Int64 // the newest chunk a batch has rendered
	var drawnSeq atomic.Int64 // rendered as of the last frame
	h.app.app.SetBeforeDrawFunc(func(s tcell.Screen) bool {
		h.app.beforeDraw(s)
		mu.Lock()
		drawStart = time.Now()
		mu.Unlock()
		return false
	})
	h.app.app.SetAfterDrawFunc(func(tcell.Screen) {
		now := time.Now()
		mu.Lock()
		frameTimes = append(frameTimes, now.Sub(drawStart))
		mu.Unlock()
		drawnSeq.Store(rendered.Load())
		select {
		case frames <- now:
		default:
		}
	})

	// A 10,000-line answer: prose, lists and highlighted code.
	var doc strings.Builder
	for i := 0; doc.Len() == 0 || strings.Count(doc.String(), "\n") < 10000; i++ {
		fmt.Fprintf(&doc, "## Section %d\n\nSome **bold** prose with `code` and a [link](https://example.com/%d).\n\n- item one\n- item two\n\n```go\nfunc f%d(x int) string { return fmt.Sprint(x) } // comment\n```\n\n", i, i, i)
	}
	fill := time.Now()
	// A folded thought first, so Ctrl-T below has a block to expand.
	h.app.Publish(events.Event{Type: events.ReasoningDelta, Role: "executor", Text: "Think first."})
	text := doc.String()
	for len(text) > 0 {
		n := min(len(text), 4000)
		h.app.Publish(events.Event{Type: events.TextDelta, Role: "executor", Text: text[:n]})
		text = text[n:]
	}
	h.app.Publish(events.Event{Type: events.TextDelta, Role: "executor", Text: "LAST LINE OF THE FILL\n"})
	h.waitFor("LAST LINE OF THE FILL")
	fillTime := time.Since(fill)
	var lines int
	h.app.app.QueueUpdate(func() { lines = h.app.transcript.GetOriginalLineCount() })

	drain := func() {
		for {
			select {
			case <-frames:
			default:
				return
			}
		}
	}
	nextFrame := func() time.Time {
		select {
		case f := <-frames:
			return f
		case <-time.After(5 * time.Second):
			t.Fatal("no frame")
		}
		return time.Time{}
	}

	// Keypress to frame: a typed character until the frame showing it.
	var keys []time.Duration
	for range 60 {
		time.Sleep(20 * time.Millisecond)
		drain()
		t0 := time.Now()
		h.sim.InjectKey(tcell.KeyRune, 'x', tcell.ModNone)
		keys = append(keys, nextFrame().Sub(t0))
	}

	// Chunk to frame: a stream of small deltas every 5 ms; each chunk's
	// latency is from its Publish to the first frame that drew it.
	const chunks = 300
	sent := make([]time.Time, chunks+1)
	lat := make([]time.Duration, 0, chunks)
	done := make(chan struct{})
	go func() {
		defer close(done)
		seen := int64(0)
		for len(lat) < chunks {
			select {
			case f := <-frames:
				upto := drawnSeq.Load()
				for s := seen + 1; s <= upto; s++ {
					lat = append(lat, f.Sub(sent[s]))
				}
				seen = max(seen, upto)
			case <-time.After(5 * time.Second):
				return
			}
		}
	}()
	drain()
	for i := 1; i <= chunks; i++ {
		sent[i] = time.Now()
		seq := int64(i)
		h.app.Publish(events.Event{Type: events.TextDelta, Role: "executor", Text: "word "})
		h.app.post(func() { rendered.Store(seq) })
		time.Sleep(5 * time.Millisecond)
	}
	<-done

	// Frame time: full redraws with the transcript scrolled to its end.
	mu.Lock()
	frameTimes = frameTimes[:0]
	mu.Unlock()
	for range 40 {
		h.sim.InjectKey(keyPump, 0, tcell.ModNone)
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(50 * time.Millisecond)
	mu.Lock()
	ft := append([]time.Duration(nil), frameTimes...)
	mu.Unlock()

	// Ctrl-T rebuilds the whole transcript once (blocks expand or
	// collapse): keypress to frame.
	var toggles []time.Duration
	for range 6 {
		time.Sleep(20 * time.Millisecond)
		drain()
		t0 := time.Now()
		h.sim.InjectKey(tcell.KeyCtrlT, 0, tcell.ModNone)
		toggles = append(toggles, nextFrame().Sub(t0))
	}

	fmt.Printf("tui: %d-line transcript rendered from Markdown in %.0f ms\n", lines, benchtest.Ms(fillTime))
	fmt.Printf("tui: keypress-to-frame %.1f ms median, %.1f ms p95 (target < 16 ms)\n", benchtest.Ms(pct(keys, 50)), benchtest.Ms(pct(keys, 95)))
	fmt.Printf("tui: chunk-to-frame %.1f ms median, %.1f ms p95 over %d streamed chunks (target < 16 ms)\n", benchtest.Ms(pct(lat, 50)), benchtest.Ms(pct(lat, 95)), len(lat))
	fmt.Printf("tui: Ctrl-T (expand or collapse every block, the transcript rebuilt) %.1f ms median to its frame\n", benchtest.Ms(pct(toggles, 50)))
	fmt.Printf("tui: frame time %.2f ms median, %.2f ms p95 with a %d-line transcript at 120x40\n", benchtest.Ms(pct(ft, 50)), benchtest.Ms(pct(ft, 95)), lines)
}

func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, len(s)*p/100)]
}
