package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/reasonix/reasonix/events"
)

// maxEndedJobs bounds the finished jobs /jobs still lists.
const maxEndedJobs = 20

// jobState is a background job as the TUI last heard of it.
type jobState struct {
	who   string // "" for the conversation, else the worker's tag
	job   events.Job
	start time.Time
}

// jobEvent keeps a job's newest state; its end is a transcript line.
func (a *App) jobEvent(e events.Event) {
	j := e.Job
	if j == nil {
		return
	}
	key := e.Session + "/" + j.ID
	st := a.bl.jobs[key]
	if st == nil {
		st = &jobState{start: time.Now().Add(-time.Duration(j.Millis) * time.Millisecond)}
		if e.Parent != "" || e.Step != "" {
			st.who = a.workerTag(e)
		}
		a.bl.jobs[key] = st
		a.bl.jobOrder = append(a.bl.jobOrder, key)
	}
	st.job = *j
	if j.Running() {
		return
	}
	a.endStream()
	a.flushThought()
	prefix := ""
	if st.who != "" {
		prefix = "  " + a.th.tag(a.th.tool, escape(st.who)) + " "
	}
	mark, what := a.th.tag(a.th.ok, "■"), a.trf("exited with code %d", 0)
	switch {
	case j.State == events.JobKilled:
		mark, what = a.th.tag(a.th.warn, "■"), a.tr("killed")
	case j.Code != 0:
		mark, what = a.th.tag(a.th.errc, "■"), a.trf("exited with code %d", j.Code)
	}
	a.line(a.trf("%s%s background %s %s [gray]· %s · %s · %s[-]", prefix, mark, escape(j.ID), what,
		escape(oneLine(j.Command, 80)), seconds(time.Duration(j.Millis)*time.Millisecond), bytesText(j.Bytes)))
	a.pruneJobs()
}

// pruneJobs forgets the oldest finished jobs beyond maxEndedJobs.
func (a *App) pruneJobs() {
	ended := 0
	for _, k := range a.bl.jobOrder {
		if !a.bl.jobs[k].job.Running() {
			ended++
		}
	}
	keep := a.bl.jobOrder[:0]
	for _, k := range a.bl.jobOrder {
		if ended > maxEndedJobs && !a.bl.jobs[k].job.Running() {
			delete(a.bl.jobs, k)
			ended--
			continue
		}
		keep = append(keep, k)
	}
	a.bl.jobOrder = keep
}

// runningJobs counts the background jobs still running.
func (a *App) runningJobs() int {
	n := 0
	for _, st := range a.bl.jobs {
		if st.job.Running() {
			n++
		}
	}
	return n
}

// listJobs is /jobs: the background jobs, running ones first.
func (a *App) listJobs() {
	if len(a.bl.jobOrder) == 0 {
		a.note("no background jobs (the model starts one with bash run_in_background; the job tool reads it or, with kill, stops it)")
		return
	}
	var running, ended []string
	now := time.Now()
	for _, k := range a.bl.jobOrder {
		st := a.bl.jobs[k]
		j := st.job
		who := ""
		if st.who != "" {
			who = " " + a.th.tag(a.th.tool, escape(st.who))
		}
		cmd := escape(oneLine(j.Command, 100))
		if j.Running() {
			running = append(running, a.trf("  %s %s [::b]running[::-] %s · %s%s\n      %s",
				a.th.tag(a.th.warn, "●"), escape(j.ID), seconds(now.Sub(st.start)), bytesText(j.Bytes), who, cmd))
			continue
		}
		state := a.th.tag(a.th.ok, a.trf("exited %d", 0))
		switch {
		case j.State == events.JobKilled:
			state = a.th.tag(a.th.warn, a.tr("killed"))
		case j.Code != 0:
			state = a.th.tag(a.th.errc, a.trf("exited %d", j.Code))
		}
		ended = append(ended, a.trf("  [gray]■[-] %s %s after %s · %s%s\n      [gray]%s[-]",
			escape(j.ID), state, seconds(time.Duration(j.Millis)*time.Millisecond), bytesText(j.Bytes), who, cmd))
	}
	var b strings.Builder
	b.WriteString(a.trf("[::b]background jobs[::-] [gray](%d running; they end with their session)[-]", len(running)))
	for _, l := range append(running, ended...) {
		b.WriteString("\n" + l)
	}
	a.line(b.String())
}

// bytesText renders a byte count: "512 B", "3.4 KB", "1.2 MB".
func bytesText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
