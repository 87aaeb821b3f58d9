package builtin

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/bluekeyes/go-gitdiff/gitdiff"

	"github.com/reasonix/reasonix/tools"
)

// Each built-in tool describes its own calls (tools.Describer) from the
// same argument struct and decoder its Execute uses, so the gate, path
// confinement and front ends see exactly the paths and command the tool
// will act on. They live together here so one read shows every tool's
// access at a glance.

func (readFileTool) Access(raw json.RawMessage) (tools.Access, error) {
	var a readArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return tools.Access{}, err
	}
	p, err := a.get()
	if err != nil {
		return tools.Access{}, err
	}
	return tools.Access{Kind: tools.KindRead, Reads: []string{p}}, nil
}

func (writeFileTool) Access(raw json.RawMessage) (tools.Access, error) {
	var a writeArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return tools.Access{}, err
	}
	return writeAccess(a.pathArg)
}

func (editFileTool) Access(raw json.RawMessage) (tools.Access, error) {
	var a editArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return tools.Access{}, err
	}
	return writeAccess(a.pathArg)
}

func (multiEditTool) Access(raw json.RawMessage) (tools.Access, error) {
	var a multiEditArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return tools.Access{}, err
	}
	return writeAccess(a.pathArg)
}

func writeAccess(pa pathArg) (tools.Access, error) {
	p, err := pa.get()
	if err != nil {
		return tools.Access{}, err
	}
	return tools.Access{Kind: tools.KindWrite, Writes: []string{p}}, nil
}

// Access lists both ends of a move as written: the source disappears.
func (moveFileTool) Access(raw json.RawMessage) (tools.Access, error) {
	var a moveArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return tools.Access{}, err
	}
	if strings.TrimSpace(a.Source) == "" || strings.TrimSpace(a.Destination) == "" {
		return tools.Access{}, errors.New("source and destination are both required")
	}
	return tools.Access{Kind: tools.KindWrite, Writes: []string{a.Source, a.Destination}}, nil
}

// Access lists every file the patch names, parsed exactly as the patch is
// applied (the same normalisation, parser and a/ b/ stripping), so a
// rename, copy or deletion header names its files here too.
func (patchTool) Access(raw json.RawMessage) (tools.Access, error) {
	var a patchArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return tools.Access{}, err
	}
	paths, err := patchTargets(a.Patch)
	if err != nil {
		return tools.Access{}, err
	}
	return tools.Access{Kind: tools.KindWrite, Writes: paths}, nil
}

// patchTargets lists the files a patch reads or writes, in order, once
// each, as patcher.load will resolve them.
func patchTargets(patch string) ([]string, error) {
	text := normalizePatch(patch)
	if strings.TrimSpace(text) == "" {
		return nil, errors.New("missing required argument \"patch\"")
	}
	files, _, err := gitdiff.Parse(strings.NewReader(text))
	if err != nil {
		return nil, fmt.Errorf("cannot parse the patch: %v", err)
	}
	if len(files) == 0 {
		return nil, errors.New("the patch contains no file changes")
	}
	strip := sectionPrefixes(text)
	if len(strip) != len(files) {
		strip = nil
	}
	var out []string
	seen := map[string]bool{}
	for i, f := range files {
		for _, name := range []string{f.OldName, f.NewName} {
			if name == "" || name == "/dev/null" {
				continue
			}
			if strip != nil && strip[i] {
				if j := strings.IndexByte(name, '/'); j > 0 && (name[:j] == "a" || name[:j] == "b") {
					name = name[j+1:]
				}
			}
			if !seen[name] {
				seen[name] = true
				out = append(out, name)
			}
		}
	}
	return out, nil
}

func (t bashTool) Access(raw json.RawMessage) (tools.Access, error) {
	var a bashArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return tools.Access{}, err
	}
	acc := tools.Access{Kind: tools.KindExecute, Command: a.Command}
	if t.pwsh != "" {
		acc.Shell = tools.ShellPowerShell
	}
	return acc, nil
}

func (globTool) Access(raw json.RawMessage) (tools.Access, error) {
	var a globArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return tools.Access{}, err
	}
	return tools.Access{Kind: tools.KindRead, Reads: []string{dirOrRoot(a.Path)}, Detail: a.Pattern}, nil
}

func (*grepTool) Access(raw json.RawMessage) (tools.Access, error) {
	var a grepArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return tools.Access{}, err
	}
	return tools.Access{Kind: tools.KindRead, Reads: []string{dirOrRoot(a.Path)}, Detail: a.Pattern}, nil
}

func (lsTool) Access(raw json.RawMessage) (tools.Access, error) {
	var a lsArgs
	if err := tools.DecodeStrict(raw, &a); err != nil {
		return tools.Access{}, err
	}
	return tools.Access{Kind: tools.KindRead, Reads: []string{dirOrRoot(a.Path)}}, nil
}

// dirOrRoot is a search tool's directory: the workspace when none is given.
func dirOrRoot(p string) string {
	if strings.TrimSpace(p) == "" {
		return "."
	}
	return p
}

// The todo tools change only the session's own list.
func (todoWriteTool) Access(json.RawMessage) (tools.Access, error) {
	return tools.Access{Kind: tools.KindOther, SessionOnly: true, Detail: "todo list"}, nil
}

func (todoReadTool) Access(json.RawMessage) (tools.Access, error) {
	return tools.Access{Kind: tools.KindRead, SessionOnly: true, Detail: "todo list"}, nil
}
