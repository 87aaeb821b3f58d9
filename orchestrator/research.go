package orchestrator

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/reasonix/reasonix/internal/lazy"
	"github.com/reasonix/reasonix/internal/store"
)

// researchLogBytes bounds how much of a research log a continuation turn
// carries: its newest part, where the next step is.
const researchLogBytes = 8 << 10

// researchWords mark a goal that reads as long-horizon research,
// debugging or optimisation, which gets a research log unless --simple.
// It compiles on first use, not at every start of the binary.
var researchWords = lazy.Value[*regexp.Regexp]{Build: func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)\b(research|investigate|investigation|root cause|debug|diagnose|figure out why|find out why|why (is|does|do)|optimi[sz]e|speed up|make .* faster|profile|benchmark|reduce (latency|memory)|flaky|intermittent)`)
}}

// goalMode takes the --research and --simple flags off a goal's text and
// says whether it runs as a research goal: asked for, or reading like one
// and not forced simple.
func goalMode(text string) (string, bool) {
	research, simple := false, false
	for {
		f, rest, _ := strings.Cut(strings.TrimSpace(text), " ")
		switch f {
		case "--research":
			research = true
		case "--simple":
			simple = true
		default:
			text = strings.TrimSpace(text)
			return text, research || (!simple && researchWords.Get().MatchString(text))
		}
		text = rest
	}
}

// startResearchLog creates the research log of a goal run in session id
// and returns its workspace-relative path. The log lives in the project,
// so the model keeps it with its ordinary file tools.
func (c *Coordinator) startResearchLog(id, goal string) (string, error) {
	if c.rt.StateDir == "" {
		return "", errors.New("a research goal needs a state directory for its log")
	}
	abs := filepath.Join(c.rt.StateDir, "research", id, "log.md")
	rel := abs
	if r, err := filepath.Rel(c.rt.Workspace, abs); err == nil && !strings.HasPrefix(r, "..") {
		rel = filepath.ToSlash(r)
	}
	if _, err := os.Stat(abs); err == nil {
		return rel, nil
	}
	head := fmt.Sprintf("# Research log\n\nGoal: %s\nStarted: %s\n\n## Hypotheses\n\n## Experiments and results\n\n## Next step\n\n",
		strings.TrimSpace(goal), time.Now().UTC().Format(time.RFC3339))
	if err := store.WriteFileAtomic(abs, []byte(head), 0o644); err != nil {
		return "", fmt.Errorf("research log: %w", err)
	}
	return rel, nil
}

// researchNote is what a research goal's user turn adds: how to keep the
// log and, re-read from disk at every turn, the log itself. It rides in
// the user turn, never in the cached prefix.
func (c *Coordinator) researchNote(st *GoalState, first bool) string {
	if st.Research == "" {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n\nThis is a research goal. Keep its log at %s: hypotheses, each experiment you run and its result, and the next step. "+
		"Update it before every goal_status call; it is how you pick up where you left off.", st.Research)
	if first {
		b.WriteString(" Work in small experiments: one hypothesis at a time, with evidence.")
	}
	p := st.Research
	if !filepath.IsAbs(p) {
		p = filepath.Join(c.rt.Workspace, filepath.FromSlash(p))
	}
	data, err := os.ReadFile(p)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		b.WriteString("\n\nThe log is missing; start it again.")
	case err != nil:
		fmt.Fprintf(&b, "\n\nThe log could not be read: %v", err)
	default:
		log := string(data)
		if len(log) > researchLogBytes {
			cut := len(log) - researchLogBytes
			for cut < len(log) && !utf8.RuneStart(log[cut]) {
				cut++
			}
			log = "[... earlier entries cut ...]\n" + log[cut:]
		}
		fmt.Fprintf(&b, "\n\nResearch log as it stands:\n<research-log>\n%s\n</research-log>", strings.TrimRight(log, "\n"))
	}
	return b.String()
}
