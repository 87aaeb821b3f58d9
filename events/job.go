package events

// Job states, as a [JobUpdate] event reports them.
const (
	// JobStarted: bash started the command in the background.
	JobStarted = "started"
	// JobOutput: the job wrote more output (Bytes is its total so far);
	// published at most about once a second per job.
	JobOutput = "output"
	// JobExited: the command ended by itself (Code is its exit code).
	JobExited = "exited"
	// JobKilled: the job tool (kill), or the end of its session, stopped it.
	JobKilled = "killed"
)

// Job is a background job's state (JobUpdate): a command bash started
// with run_in_background, read and stopped with the job tool.
// Ids are per session ("job-1"); Event.Session says whose.
type Job struct {
	ID      string `json:"id"`
	Command string `json:"command"`
	State   string `json:"state"`
	// Bytes is everything the job has written so far, read or not.
	Bytes int64 `json:"bytes"`
	// Code is the exit code once State is JobExited (-1 when unknown).
	Code int `json:"exit_code"`
	// Millis is how long the job has run.
	Millis int64 `json:"ms,omitempty"`
}

// Running reports whether the job is still running.
func (j Job) Running() bool { return j.State == JobStarted || j.State == JobOutput }
