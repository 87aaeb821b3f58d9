package builtin

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/tools"
)

const (
	// jobBufferSize bounds the output a background job keeps unread; the
	// oldest bytes are dropped first, with a marker saying how many.
	jobBufferSize = 1 << 20
	// jobMaxWait caps job's wait_seconds.
	jobMaxWait = 60 * time.Second
	// jobSettle is how long a job read keeps collecting once new output
	// arrived, so a burst of lines comes back in one read.
	jobSettle = 200 * time.Millisecond
	// jobMaxRunning bounds the jobs one session runs at once: each holds
	// processes and up to jobBufferSize of memory.
	jobMaxRunning = 16
	// jobsKey is where a session's job table lives in its tools.State.
	jobsKey = "jobs"
	// jobReport is how often a running job's new output is reported as
	// a JobUpdate event (its byte count, not its text).
	jobReport = time.Second
)

// errJobsClosed is returned for a job started after its session ended.
var errJobsClosed = errors.New("the session has ended; no new background jobs")

// job is one background command of a session.
type job struct {
	id      string
	command string
	cmd     *exec.Cmd
	out     *jobBuffer
	// done is closed once the shell was waited for; code is its exit code
	// (-1 when killed or never reported) and killed says a kill or the
	// session's end stopped it.
	done   chan struct{}
	code   int
	killed bool
	mu     sync.Mutex
	// publish reports the job's state to front ends (never nil);
	// started is when it began.
	publish func(events.Event)
	started time.Time
}

// event is the job's state as a JobUpdate event.
func (j *job) event(state string) events.Event {
	j.mu.Lock()
	code := j.code
	j.mu.Unlock()
	return events.Event{Type: events.JobUpdate, Job: &events.Job{ID: j.id, Command: j.command, State: state,
		Bytes: j.out.written(), Code: code, Millis: time.Since(j.started).Milliseconds()}}
}

// report publishes the job's output count while it runs, when it grew,
// at most once per jobReport.
func (j *job) report() {
	t := time.NewTicker(jobReport)
	defer t.Stop()
	var last int64
	for {
		select {
		case <-j.done:
			return
		case <-t.C:
			if n := j.out.written(); n != last {
				last = n
				j.publish(j.event(events.JobOutput))
			}
		}
	}
}

// jobTable holds a session's background jobs. Its Close kills every job's
// process group and waits for the goroutines that wait for them; the
// session's State is closed when the session ends (orchestrator), so no
// job outlives its session.
type jobTable struct {
	mu     sync.Mutex
	next   int
	jobs   map[string]*job
	closed bool
	wg     sync.WaitGroup
}

// jobsOf returns the session's job table, creating it on first use.
func jobsOf(env *tools.Env) (*jobTable, error) {
	if env.State == nil {
		return nil, errors.New("this session keeps no state for background jobs")
	}
	t, _ := env.State.LoadOrStore(jobsKey, func() any { return &jobTable{jobs: map[string]*job{}} }).(*jobTable)
	if t == nil {
		return nil, errors.New("no job table")
	}
	return t, nil
}

// startJob starts command in the background and returns its id at once.
func startJob(env *tools.Env, sh shellSpec, command string) (tools.Result, error) {
	t, err := jobsOf(env)
	if err != nil {
		return tools.Result{}, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return tools.Result{}, errJobsClosed
	}
	running := 0
	for _, j := range t.jobs {
		select {
		case <-j.done:
		default:
			running++
		}
	}
	if running >= jobMaxRunning {
		return tools.Result{}, fmt.Errorf("%d background jobs are running, the most one session may; stop one with job (kill: true) first", running)
	}
	j := &job{command: command, out: newJobBuffer(jobBufferSize), done: make(chan struct{}), code: -1,
		publish: env.Publish, started: time.Now()}
	if j.publish == nil {
		j.publish = func(events.Event) {}
	}
	cmd, reap, err := startShell(env, sh, command, j.out)
	if err != nil {
		return tools.Result{}, err
	}
	t.next++
	j.id = "job-" + strconv.Itoa(t.next)
	j.cmd = cmd
	cmd.WaitDelay = bashPipeGrace
	t.jobs[j.id] = j
	j.publish(j.event(events.JobStarted))
	t.wg.Add(2)
	go func() {
		defer t.wg.Done()
		j.report()
	}()
	go func() {
		defer t.wg.Done()
		_ = waitWithDelay(cmd)
		reap.done()
		j.mu.Lock()
		if cmd.ProcessState != nil && !j.killed {
			j.code = cmd.ProcessState.ExitCode()
		}
		killed := j.killed
		j.mu.Unlock()
		close(j.done)
		j.out.wake()
		state := events.JobExited
		if killed {
			state = events.JobKilled
		}
		j.publish(j.event(state))
	}()
	return tools.Result{
		Content: fmt.Sprintf("started %s in the background: %s\nread its output with job {\"job_id\":%q}; stop it with kill: true", j.id, command, j.id),
		Summary: "started " + j.id,
	}, nil
}

// get returns the job with id.
func (t *jobTable) get(id string) (*job, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	j, ok := t.jobs[strings.TrimSpace(id)]
	if !ok {
		ids := make([]string, 0, len(t.jobs))
		for i := 1; i <= t.next; i++ {
			if _, ok := t.jobs["job-"+strconv.Itoa(i)]; ok {
				ids = append(ids, "job-"+strconv.Itoa(i))
			}
		}
		if len(ids) == 0 {
			return nil, fmt.Errorf("no background job %q: this session has started none", id)
		}
		return nil, fmt.Errorf("no background job %q; this session's jobs: %s", id, strings.Join(ids, ", "))
	}
	return j, nil
}

// kill kills j's process group; it reports false when j had already ended.
func (j *job) kill() bool {
	select {
	case <-j.done:
		// The shell ended, but what it left in its group may still run.
		_ = killLeftovers(j.cmd)
		return false
	default:
	}
	j.mu.Lock()
	j.killed = true
	j.mu.Unlock()
	_ = killProcessGroup(j.cmd)
	return true
}

// Close kills every job's process group and waits until each shell was
// waited for. Later starts fail. It is safe to call more than once.
func (t *jobTable) Close() error {
	t.mu.Lock()
	t.closed = true
	jobs := make([]*job, 0, len(t.jobs))
	for _, j := range t.jobs {
		jobs = append(jobs, j)
	}
	t.mu.Unlock()
	for _, j := range jobs {
		j.kill()
	}
	t.wg.Wait()
	return nil
}

// status is the job's state line.
func (j *job) status() (string, bool) {
	select {
	case <-j.done:
	default:
		return "status: running", false
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.killed {
		return "status: killed", true
	}
	return "status: exited, exit code: " + strconv.Itoa(j.code), true
}

// JobTool is the name of the tool that reads and stops background jobs.
const JobTool = "job"

type jobArgs struct {
	JobID       string     `json:"job_id"`
	WaitSeconds seconds    `json:"wait_seconds,omitempty"`
	Kill        tools.Bool `json:"kill,omitempty"`
}

// jobTool reads a background job's new output or, with kill, stops it: one
// tool for both keeps the cached prompt prefix small.
type jobTool struct{}

func (jobTool) Name() string { return JobTool }

// ReadOnly is false: kill stops a process.
func (jobTool) ReadOnly() bool { return false }

func (jobTool) Description() string {
	return "Read a background job's output since the last read, and whether it still runs or its exit code; " +
		"wait_seconds (max 60) first waits for new output or the end. kill: stop it, its whole process group."
}

// Schema is jobSchema (schemas_gen.go), generated from jobArgs.
func (jobTool) Schema() json.RawMessage { return json.RawMessage(jobSchema) }

func decodeJob(raw json.RawMessage) (jobArgs, error) {
	var a jobArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return a, err
	}
	if a.WaitSeconds < 0 {
		return a, errors.New("wait_seconds must not be negative")
	}
	return a, nil
}

func (jobTool) Execute(ctx context.Context, env *tools.Env, raw json.RawMessage) (tools.Result, error) {
	a, err := decodeJob(raw)
	if err != nil {
		return tools.Result{}, err
	}
	t, err := jobsOf(env)
	if err != nil {
		return tools.Result{}, err
	}
	j, err := t.get(a.JobID)
	if err != nil {
		return tools.Result{}, err
	}
	if a.Kill {
		return j.stop(ctx)
	}
	if wait := min(time.Duration(float64(a.WaitSeconds)*float64(time.Second)), jobMaxWait); wait > 0 {
		if err := j.wait(ctx, wait); err != nil {
			return tools.Result{}, err
		}
	}
	// Status first: output read after it is complete when it says ended.
	line, ended := j.status()
	body := env.Redact(j.out.read())
	if body == "" {
		body = "(no new output)\n"
	} else if !strings.HasSuffix(body, "\n") {
		body += "\n"
	}
	summary := j.id + " running"
	if ended {
		summary = j.id + " " + strings.TrimPrefix(line, "status: ")
	}
	return tools.Result{Content: tools.Truncate(body+line, env.Limit()), Summary: summary}, nil
}

// wait returns once j has new unread output (given jobSettle to finish its
// burst) or has ended, after d, or when ctx ends.
func (j *job) wait(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		ch := j.out.changed()
		select {
		case <-j.done:
			return nil
		default:
		}
		if j.out.unread() {
			settle := time.NewTimer(jobSettle)
			defer settle.Stop()
			select {
			case <-j.done:
			case <-settle.C:
			case <-timer.C:
			case <-ctx.Done():
				return ctx.Err()
			}
			return nil
		}
		select {
		case <-ch:
		case <-j.done:
			return nil
		case <-timer.C:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// stop kills j's process group and waits briefly for its end.
func (j *job) stop(ctx context.Context) (tools.Result, error) {
	if !j.kill() {
		line, _ := j.status()
		return tools.Result{Content: j.id + " had already ended; " + line, Summary: j.id + " already ended"}, nil
	}
	select {
	case <-j.done:
	case <-time.After(bashPipeGrace + time.Second):
	case <-ctx.Done():
		return tools.Result{}, ctx.Err()
	}
	return tools.Result{Content: "killed " + j.id + " (" + j.command + ")", Summary: "killed " + j.id}, nil
}

// A job call changes nothing outside its session: reading returns the
// session's own job's output, kill stops only a job the session started
// (whose command the gate already allowed), so the gate never asks.
func (jobTool) Access(raw json.RawMessage) (tools.Access, error) {
	a, err := decodeJob(raw)
	if err != nil {
		return tools.Access{}, err
	}
	if a.Kill {
		return tools.Access{Kind: tools.KindOther, SessionOnly: true, Detail: "kill " + a.JobID}, nil
	}
	return tools.Access{Kind: tools.KindRead, SessionOnly: true, Detail: a.JobID}, nil
}

// jobBuffer keeps the newest n bytes a job wrote and a read cursor, so
// each job read returns what is new since the last one.
type jobBuffer struct {
	mu    sync.Mutex
	n     int
	data  []byte
	total int64 // bytes ever written; data holds the last len(data)
	off   int64 // bytes ever handed out or dropped unread
	ch    chan struct{}
}

func newJobBuffer(n int) *jobBuffer { return &jobBuffer{n: n, ch: make(chan struct{})} }

func (b *jobBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.total += int64(len(p))
	b.data = append(b.data, p...)
	if over := len(b.data) - b.n; over > 0 {
		b.data = append(b.data[:0:0], b.data[over:]...)
	}
	b.signal()
	return len(p), nil
}

// signal wakes every waiter; b.mu is held.
func (b *jobBuffer) signal() {
	close(b.ch)
	b.ch = make(chan struct{})
}

// wake wakes every waiter.
func (b *jobBuffer) wake() {
	b.mu.Lock()
	b.signal()
	b.mu.Unlock()
}

// changed returns a channel closed at the next write.
func (b *jobBuffer) changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.ch
}

// written is the number of bytes ever written.
func (b *jobBuffer) written() int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total
}

// unread reports whether there is output not read yet.
func (b *jobBuffer) unread() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.total > b.off
}

// read returns the output since the last read, led by a marker when
// some of it was dropped before anyone read it.
func (b *jobBuffer) read() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	start := b.total - int64(len(b.data))
	var s strings.Builder
	if b.off < start {
		fmt.Fprintf(&s, "[... %d bytes of output dropped ...]\n", start-b.off)
		b.off = start
	}
	s.Write(b.data[b.off-start:])
	b.off = b.total
	// What was read is not kept: data holds only unread output.
	b.data = b.data[:0]
	return s.String()
}
