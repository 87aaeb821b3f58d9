package events

// Hook outcomes (Hook.Outcome).
const (
	HookOK      = "ok"      // exit 0
	HookBlocked = "blocked" // exit 2 or a JSON block decision on a blocking event
	HookWarning = "warning" // another exit code, or exit 2 where nothing can be blocked
	HookTimeout = "timeout" // killed with its process group after its time limit
	HookError   = "error"   // could not be started
	HookSkipped = "skipped" // a project hook nobody trusted
)

// Hook is one hook command's run, published as a HookRun event.
type Hook struct {
	Event   string `json:"event"`
	Matcher string `json:"matcher,omitempty"`
	Command string `json:"command"`
	// Source is the file that defined the hook.
	Source  string `json:"source,omitempty"`
	Tool    string `json:"tool,omitempty"`
	Outcome string `json:"outcome"`
	Exit    int    `json:"exit"`
	// Message is the hook's reason or stderr, clipped.
	Message string `json:"message,omitempty"`
	Millis  int64  `json:"ms,omitempty"`
}
