package config

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/reasonix/reasonix/internal/store"
)

// ProjectTrustFile, in the Reasonix home, records the projects whose own
// reasonix.toml a person trusted to widen what Reasonix does (HeldKey):
// each workspace with the digest of the settings they reviewed.
const ProjectTrustFile = "trusted-projects.json"

// HeldKey is a setting of a project's reasonix.toml that is not applied
// until a person trusts the project (`reasonix trust`): it would send the
// conversation and the person's API key to another endpoint (providers),
// weaken the sandbox (bash off, network, more writable or readable paths,
// another workspace root) or loosen the permission posture (auto, yolo).
// A checked-out repository must not do any of that by being opened. What
// only narrows (deny and ask rules, a stricter mode, more deny_read) is
// applied at once.
type HeldKey struct {
	File string
	Line int
	Key  string
	Why  string
}

func (h HeldKey) String() string {
	return fmt.Sprintf("%s:%d: %s (%s)", h.File, h.Line, h.Key, h.Why)
}

// heldSetting is a key of the project file's table held back, with its
// value (for the digest) and why.
type heldSetting struct {
	key   string // dotted, as the key index names it
	table string // "" for a top-level key
	name  string
	value any
	why   string
}

// widening lists what raw (a project file's decoded table) sets that an
// untrusted project may not.
func widening(raw map[string]any) []heldSetting {
	var out []heldSetting
	top := func(name, why string) {
		if v, ok := raw[name]; ok {
			out = append(out, heldSetting{key: name, name: name, value: v, why: why})
		}
	}
	sub := func(table, name string, widens func(any) bool, why string) {
		t, _ := raw[table].(map[string]any)
		if v, ok := t[name]; ok && widens(v) {
			out = append(out, heldSetting{key: table + "." + name, table: table, name: name, value: v, why: why})
		}
	}
	always := func(any) bool { return true }
	top("providers", "model endpoints: the conversation and your API key would go there")
	if _, ok := raw["providers"]; ok {
		// Model references that may name those providers.
		top("default_model", "names a model of this file's providers")
		for _, n := range []string{"planner_model", "subagent_model", "subagent_models"} {
			sub("agent", n, always, "names a model of this file's providers")
		}
	}
	sub("sandbox", "bash", func(v any) bool { return v == "off" }, "turns the sandbox off")
	sub("sandbox", "network", func(v any) bool { return v == true }, "lets commands use the network")
	sub("sandbox", "allow_write", nonEmpty, "more paths commands may write")
	sub("sandbox", "allow_read", nonEmpty, "more paths tools may read")
	sub("sandbox", "workspace_root", always, "moves the workspace, where commands may write")
	sub("permissions", "mode", func(v any) bool { return v == "auto" || v == "yolo" || v == "allow" }, "runs calls without asking")
	return out
}

func nonEmpty(v any) bool {
	l, ok := v.([]any)
	return ok && len(l) > 0
}

// digest is what a trust decision is about: the held settings' values.
func digest(held []heldSetting) string {
	m := map[string]any{}
	for _, h := range held {
		m[h.key] = h.value
	}
	b, _ := json.Marshal(m) // map keys are sorted
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

type trustRecords map[string]string // workspace -> digest

// readProjectTrust reads the trust records. A file that cannot be read
// or does not parse (store.BadJSONError) is an error naming it, with
// empty records beside it: nothing is trusted, and the caller must not
// write the empty records back over the file.
func readProjectTrust(home string) (trustRecords, error) {
	var t trustRecords
	if err := store.ReadJSON(filepath.Join(home, ProjectTrustFile), &t); err != nil {
		return trustRecords{}, err // it names the file
	}
	if t == nil {
		t = trustRecords{}
	}
	return t, nil
}

// holdUntrusted removes from raw, the project file's table (data its
// text), the settings an untrusted project may not make, unless the person
// trusted exactly these values for this workspace; it returns what it
// removed, or the mistakes in the file.
func (m *merger) holdUntrusted(path string, data []byte, raw map[string]any, ix keyIndex) ([]HeldKey, []error) {
	held := widening(raw)
	if len(held) == 0 {
		return nil, nil
	}
	ws, _ := filepath.Abs(filepath.Dir(path))
	sum := digest(held)
	recs, err := readProjectTrust(m.home)
	if err != nil {
		m.trustErr = err
	}
	if recs[ws] == sum {
		// Applied, so decoded (and checked) with the rest of the file.
		return nil, nil
	}
	// What is held is still checked, so a mistake in it is reported with
	// its place as anywhere else; only here, where the caller's decode
	// will not see it, so a trusted project's file is decoded once.
	if errs := newMerger(m.env).mergeFile(path, data); len(errs) > 0 {
		return nil, errs
	}
	m.heldDigest = sum
	out := make([]HeldKey, 0, len(held))
	for _, h := range held {
		if h.table == "" {
			delete(raw, h.name)
		} else if t, ok := raw[h.table].(map[string]any); ok {
			delete(t, h.name)
		}
		out = append(out, HeldKey{File: path, Line: heldLine(ix, h.key), Key: h.key, Why: h.why})
	}
	// In the file's order, as a person reads it.
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out, nil
}

// heldLine is the line of a held key; a table array's is its first entry's.
func heldLine(ix keyIndex, key string) int {
	if l := ix.lookup(key); l > 0 {
		return l
	}
	return ix.lookup(key + "[0]")
}

// TrustProject records that the person trusts the project at workspace:
// the settings its project file now makes that an untrusted project may
// not (see [HeldKey]), which it returns, and the looser posture its agent
// files and Claude Code settings may ask for. A later change to those
// settings of the project file needs trusting again.
func TrustProject(home, workspace string) ([]HeldKey, error) {
	return trustProject(home, workspace, "")
}

// TrustProjectAsShown is TrustProject for the settings a person was
// shown, as loaded (Loaded.HeldDigest): when the file changed them since,
// it records nothing and says so, so a change made while the question was
// open is not trusted unseen.
func TrustProjectAsShown(home, workspace, shown string) ([]HeldKey, error) {
	return trustProject(home, workspace, shown)
}

func trustProject(home, workspace, shown string) ([]HeldKey, error) {
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(ws, ProjectFile)
	// Expanded as Load expands it, the workspace's .env behind the
	// environment, so the digest is that of the values Load holds (a
	// mistake in the .env is Load's to report).
	dot, _, _ := readDotEnv(filepath.Join(ws, DotEnvFile))
	held, raw, err := projectHeld(path, withDotEnv(os.Getenv, dot))
	if err != nil {
		return nil, err
	}
	// Recorded even with nothing held: the trust also lets the project's
	// agent files and Claude Code settings loosen the posture.
	sum := digest(held)
	if shown != "" && sum != shown {
		return nil, fmt.Errorf("%s changed while you were asked; nothing was trusted: look at it again", path)
	}
	ix := indexKeys(string(raw))
	t, err := readProjectTrust(home)
	if err != nil {
		return nil, keptAsItIs(err)
	}
	t[ws] = sum
	if err := writeProjectTrust(home, t); err != nil {
		return nil, err
	}
	out := make([]HeldKey, len(held))
	for i, h := range held {
		out[i] = HeldKey{File: path, Line: heldLine(ix, h.key), Key: h.key, Why: h.why}
	}
	return out, nil
}

// ProjectTrusted reports whether a person has trusted the project at
// workspace (`reasonix trust`), whatever its settings are now. When the
// trust file cannot be read it reports false, with the error for the
// caller to show: nothing is trusted then.
func ProjectTrusted(home, workspace string) (bool, error) {
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return false, err
	}
	t, err := readProjectTrust(home)
	_, ok := t[ws]
	return ok, err
}

// UntrustProject forgets the trust recorded for workspace; it reports
// whether there was any.
func UntrustProject(home, workspace string) (bool, error) {
	ws, err := filepath.Abs(workspace)
	if err != nil {
		return false, err
	}
	t, err := readProjectTrust(home)
	if err != nil {
		return false, keptAsItIs(err)
	}
	if _, ok := t[ws]; !ok {
		return false, nil
	}
	delete(t, ws)
	return true, writeProjectTrust(home, t)
}

func projectHeld(path string, env func(string) string) ([]heldSetting, []byte, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, fmt.Errorf("trust: %w", err)
	}
	m := newMerger(env)
	if errs := m.mergeFile(path, data); len(errs) > 0 {
		return nil, nil, errors.Join(errs...)
	}
	var raw map[string]any
	if err := toml.Unmarshal(data, &raw); err != nil {
		return nil, nil, err
	}
	expandTree(raw, env)
	held := widening(raw)
	sort.Slice(held, func(i, j int) bool { return held[i].key < held[j].key })
	return held, data, nil
}

// keptAsItIs says that a change to the trust records was not made
// because the file could not be read (err names it).
func keptAsItIs(err error) error {
	return fmt.Errorf("%w; nothing was recorded and the file is left as it is: fix or remove it", err)
}

func writeProjectTrust(home string, t trustRecords) error {
	if err := store.WriteJSON(filepath.Join(home, ProjectTrustFile), t); err != nil {
		return fmt.Errorf("trust: %w", err)
	}
	return nil
}

// HeldSummary names the held keys in one line.
func HeldSummary(held []HeldKey) string {
	keys := make([]string, len(held))
	for i, h := range held {
		keys[i] = h.Key
	}
	return strings.Join(keys, ", ")
}
