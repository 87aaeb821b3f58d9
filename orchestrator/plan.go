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

// SavePlan writes p to <stateDir>/plans/<id>.json, choosing a new id when
// id is empty, and returns the id.
func SavePlan(stateDir, id string, p Plan) (string, error) {
	if stateDir == "" {
		return "", errors.New("save plan: no state directory")
	}
	if err := p.Validate(); err != nil {
		return "", fmt.Errorf("save plan: %w", err)
	}
	if id == "" {
		id = store.NewID("plan-")
	}
	if err := store.WriteFileAtomic(filepath.Join(PlansDir(stateDir), id+".json"), p.JSON(), 0o644); err != nil {
		return "", fmt.Errorf("save plan: %w", err)
	}
	return id, nil
}

// LoadPlan reads a plan given a file path, a saved plan's id, or a unique
// prefix of one. It returns the plan and its id (the file's base name
// without .json when a path was given).
func LoadPlan(stateDir, idOrFile string) (Plan, string, error) {
	ref := strings.TrimSpace(idOrFile)
	if ref == "" {
		return Plan{}, "", errors.New("load plan: no plan id or file given")
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
				return Plan{}, "", err
			}
			path = p
		}
	} else {
		return Plan{}, "", fmt.Errorf("load plan: %s is not a file", ref)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Plan{}, "", fmt.Errorf("load plan: %w", err)
	}
	p, err := ParsePlan(data)
	if err != nil {
		return Plan{}, "", fmt.Errorf("load plan %s: %w", path, err)
	}
	return p, strings.TrimSuffix(filepath.Base(path), ".json"), nil
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
