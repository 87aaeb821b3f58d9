package orchestrator

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/store"
)

// Plan and PlanStep are the planner's structured answer; they live in
// events so front ends render them without importing the coordinator.
type (
	Plan     = events.Plan
	PlanStep = events.PlanStep
)

// ParsePlan decodes and validates a plan.
func ParsePlan(data []byte) (Plan, error) { return events.ParsePlan(data) }

// PlansDir is where saved plans of a state directory live.
func PlansDir(stateDir string) string { return filepath.Join(stateDir, "plans") }

// planSeals are the seals of a state directory's saved plans, kept in
// the Reasonix home (see store.FileSeals); nil without a home.
func planSeals(home, stateDir string) *store.FileSeals {
	return store.NewFileSeals(home, PlansDir(stateDir), "plan")
}

// SavePlan writes p to <stateDir>/plans/<id>.json, choosing a new id when
// id is empty, and returns the id. With a home the file is sealed there
// (see store.FileSeals): a plan's steps become workers' prompts, so
// LoadPlan refuses one that something else rewrote.
func SavePlan(home, stateDir, id string, p Plan) (string, error) {
	if stateDir == "" {
		return "", errors.New("save plan: no state directory")
	}
	if err := p.Validate(); err != nil {
		return "", fmt.Errorf("save plan: %w", err)
	}
	if id == "" {
		id = store.NewID("plan-")
	}
	if err := planSeals(home, stateDir).Write(filepath.Join(PlansDir(stateDir), id+".json"), p.JSON(), 0o644); err != nil {
		return "", fmt.Errorf("save plan: %w", err)
	}
	return id, nil
}

// LoadPlan reads a plan given a file path, a saved plan's id, or a unique
// prefix of one. It returns the plan, its id (the file's base name
// without .json when a path was given) and a notice, when there is one
// to give. A saved plan (a file in the plans folder) is checked against
// its seal when home is set: one that is not what Reasonix last wrote is
// a *store.ModifiedError unless mode is store.AcceptModified. A file
// elsewhere is one the person named: it has no seal.
func LoadPlan(home, stateDir, idOrFile string, mode store.LoadMode) (Plan, string, string, error) {
	ref := strings.TrimSpace(idOrFile)
	if ref == "" {
		return Plan{}, "", "", errors.New("load plan: no plan id or file given")
	}
	path := ""
	if st, err := os.Stat(ref); err == nil && st.Mode().IsRegular() {
		path = ref
	} else if stateDir != "" {
		dir := PlansDir(stateDir)
		exact := filepath.Join(dir, ref+".json")
		if !strings.ContainsRune(ref, os.PathSeparator) && fileExists(exact) {
			path = exact
		} else {
			p, err := planByPrefix(dir, ref)
			if err != nil {
				return Plan{}, "", "", err
			}
			path = p
		}
	} else {
		return Plan{}, "", "", fmt.Errorf("load plan: %s is not a file", ref)
	}
	var seals *store.FileSeals
	if stateDir != "" && sameDir(filepath.Dir(path), PlansDir(stateDir)) {
		seals = planSeals(home, stateDir)
	}
	data, notice, err := seals.Read(path, mode)
	if err != nil {
		var mod *store.ModifiedError
		if errors.As(err, &mod) {
			return Plan{}, "", "", err
		}
		return Plan{}, "", "", fmt.Errorf("load plan: %w", err)
	}
	p, err := ParsePlan(data)
	if err != nil {
		return Plan{}, "", "", fmt.Errorf("load plan %s: %w", path, err)
	}
	return p, strings.TrimSuffix(filepath.Base(path), ".json"), notice, nil
}

func planByPrefix(dir, prefix string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("load plan: no file or saved plan named %q", prefix)
		}
		return "", fmt.Errorf("load plan: %w", err)
	}
	var hits []string
	for _, e := range entries {
		n := e.Name()
		if !e.IsDir() && strings.HasSuffix(n, ".json") && !strings.HasPrefix(n, ".") && strings.HasPrefix(n, prefix) {
			hits = append(hits, strings.TrimSuffix(n, ".json"))
		}
	}
	sort.Strings(hits)
	switch len(hits) {
	case 0:
		return "", fmt.Errorf("load plan: no file or saved plan named %q", prefix)
	case 1:
		return filepath.Join(dir, hits[0]+".json"), nil
	default:
		return "", fmt.Errorf("load plan: %q matches %d saved plans (%s); give more of the id", prefix, len(hits), strings.Join(hits, ", "))
	}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// sameDir reports whether a and b are one folder, however each is
// spelt (relative, through a symlink).
func sameDir(a, b string) bool {
	ra, err1 := filepath.EvalSymlinks(a)
	rb, err2 := filepath.EvalSymlinks(b)
	if err1 != nil || err2 != nil {
		ra, _ = filepath.Abs(a)
		rb, _ = filepath.Abs(b)
	}
	return ra == rb
}
