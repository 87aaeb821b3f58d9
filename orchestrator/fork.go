package orchestrator

import "github.com/reasonix/reasonix/internal/store"

// ResumeFork forks the session saved at path (see store.Seals.Fork: what
// Reasonix wrote of it, or with accept the file as it stands) and makes
// the fork the conversation: the way on from a session changed outside
// Reasonix. The load's notices are published. Call it between turns.
func (e *Engine) ResumeFork(path string, accept bool) (*store.ForkReport, error) {
	mode := store.KeepSealed
	if accept {
		mode = store.AcceptModified
	}
	rep, err := e.c.seals.Fork(path, 0, mode)
	if err != nil {
		return nil, err
	}
	if err := e.Resume(rep.Path, ""); err != nil {
		return rep, err
	}
	return rep, nil
}
