package hooks

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/reasonix/reasonix/internal/store"
)

// TrustFile is the file under the Reasonix home that remembers which
// project hook sets a person trusted.
const TrustFile = "trusted-hooks.json"

// Fingerprint identifies a set of project hooks: any change to an event,
// matcher, command, timeout or defining file gives another fingerprint, so
// a changed set is asked about again.
func Fingerprint(hooks []Hook) string {
	lines := make([]string, 0, len(hooks))
	for _, h := range hooks {
		if !h.Project {
			continue
		}
		lines = append(lines, strings.Join([]string{h.Event, h.Matcher, h.Command, timeoutOf(h).String(), filepath.Base(h.Source)}, "\x00"))
	}
	sort.Strings(lines)
	sum := sha256.Sum256([]byte(strings.Join(lines, "\n")))
	return hex.EncodeToString(sum[:])
}

// trustRecords maps a workspace key (the hash of its absolute path) to the
// fingerprint of the hook set trusted there.
type trustRecords map[string]string

func workspaceKey(workspace string) string {
	abs, err := filepath.Abs(workspace)
	if err != nil {
		abs = workspace
	}
	sum := sha256.Sum256([]byte(abs))
	return hex.EncodeToString(sum[:16])
}

func readTrust(home string) (trustRecords, error) {
	recs := trustRecords{}
	if err := store.ReadJSON(filepath.Join(home, TrustFile), &recs); err != nil {
		return nil, fmt.Errorf("hooks trust: %w", err)
	}
	return recs, nil
}

// Trusted reports whether a person trusted exactly this project hook set
// for workspace before. A trust file that cannot be read (a corrupt one
// names its place) trusts nothing, and the error says why.
func Trusted(home, workspace string, hooks []Hook) (bool, error) {
	recs, err := readTrust(home)
	return err == nil && recs[workspaceKey(workspace)] == Fingerprint(hooks), err
}

// RememberTrust records that a person trusted this project hook set for
// workspace. It records nothing over a trust file that cannot be read:
// that would drop every other workspace's trust.
func RememberTrust(home, workspace string, hooks []Hook) error {
	recs, err := readTrust(home)
	if err != nil {
		return err
	}
	recs[workspaceKey(workspace)] = Fingerprint(hooks)
	if err := store.WriteJSON(filepath.Join(home, TrustFile), recs); err != nil {
		return fmt.Errorf("hooks: remember trust: %w", err)
	}
	return nil
}

// Describe is a one-line description of a hook for lists (/hooks, doctor).
func (h Hook) Describe() string {
	var b strings.Builder
	b.WriteString(h.Event)
	if h.Matcher != "" {
		fmt.Fprintf(&b, " [%s]", h.Matcher)
	}
	fmt.Fprintf(&b, ": %s", h.Command)
	if h.Timeout > 0 {
		fmt.Fprintf(&b, " (timeout %s)", h.Timeout)
	}
	return b.String()
}
