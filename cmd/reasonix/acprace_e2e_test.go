//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/reasonix/reasonix/providers/scripted"
)

// fsEditor is an ACP client that offers fs/read_text_file and
// fs/write_text_file and serves them as an editor does: by path, through
// whatever symlinks the path holds when it gets the request.
type fsEditor struct {
	mu     sync.Mutex
	reads  []string
	writes []string
	// buffer, when set, is an unsaved buffer's text the editor gives
	// instead of the disk's.
	buffer string
}

func (c *fsEditor) ReadTextFile(_ context.Context, p sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	b, err := os.ReadFile(p.Path)
	if err != nil {
		return sdk.ReadTextFileResponse{}, err
	}
	if c.buffer != "" {
		b = []byte(c.buffer)
	}
	c.mu.Lock()
	c.reads = append(c.reads, string(b))
	c.mu.Unlock()
	return sdk.ReadTextFileResponse{Content: string(b)}, nil
}
func (c *fsEditor) WriteTextFile(_ context.Context, p sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	c.mu.Lock()
	c.writes = append(c.writes, p.Path)
	c.mu.Unlock()
	return sdk.WriteTextFileResponse{}, os.WriteFile(p.Path, []byte(p.Content), 0o644)
}
func (c *fsEditor) RequestPermission(_ context.Context, p sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return sdk.RequestPermissionResponse{Outcome: sdk.NewRequestPermissionOutcomeSelected(p.Options[0].OptionId)}, nil
}
func (c *fsEditor) SessionUpdate(context.Context, sdk.SessionNotification) error { return nil }
func (c *fsEditor) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, errors.New("not offered")
}
func (c *fsEditor) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, errors.New("not offered")
}
func (c *fsEditor) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, errors.New("not offered")
}
func (c *fsEditor) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, errors.New("not offered")
}
func (c *fsEditor) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, errors.New("not offered")
}

// TestE2ERedTeamACPEditorFilesRace: with an editor that offers its file
// system, the file tools read through it and hand it what they wrote. A
// confined background job swapping a folder for a symlink to a denied
// folder must not get the editor to read or write there.
func TestE2ERedTeamACPEditorFilesRace(t *testing.T) {
	e, ssh := swapRace(t)
	const n = 300
	var reads, writes []scripted.Call
	for i := 0; i < n; i++ {
		reads = append(reads, call("read_file", map[string]any{"path": "d/" + strings.Repeat("./", i) + "id_rsa"}))
		writes = append(writes, call("write_file", map[string]any{"path": fmt.Sprintf("d/w%d", i), "content": "x\n"}))
	}
	e = withScript(t, e,
		scripted.Turn{ToolCalls: []scripted.Call{call("bash", map[string]any{"command": "python3 swap.py " + ssh, "run_in_background": true})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("job", map[string]any{"job_id": "job-1", "wait_seconds": 1})}},
		scripted.Turn{ToolCalls: reads},
		scripted.Turn{ToolCalls: writes},
		scripted.Turn{Text: "done"},
	)
	ed := &fsEditor{}
	promptWithEditor(t, e, ed)
	reqs := e.srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("requests = %d", len(reqs))
	}
	leaks := 0
	for _, v := range toolResults(t, reqs[3]) {
		if strings.Contains(v, canarySecret) {
			leaks++
		}
	}
	ed.mu.Lock()
	defer ed.mu.Unlock()
	outside, _ := filepath.Glob(filepath.Join(ssh, "w*"))
	t.Logf("editor reads %d, writes %d; leaked reads %d, files written outside %d", len(ed.reads), len(ed.writes), leaks, len(outside))
	if leaks > 0 || len(outside) > 0 {
		t.Errorf("through the editor: %d reads of the denied key, %d files written in the denied folder", leaks, len(outside))
	}
}

// promptWithEditor runs `reasonix acp --yolo` in e's repository with ed
// as its editor, offering its file system, and sends one prompt.
func promptWithEditor(t *testing.T, e *e2e, ed *fsEditor) {
	t.Helper()
	cmd := exec.Command(binPath, "acp", "--yolo")
	cmd.Dir, cmd.Env = e.repo, e.env
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	conn := sdk.NewClientSideConnection(ed, in, out)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if _, err := conn.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber,
		ClientCapabilities: sdk.ClientCapabilities{Fs: sdk.FileSystemCapabilities{ReadTextFile: true, WriteTextFile: true}}}); err != nil {
		t.Fatal(err)
	}
	s, err := conn.NewSession(ctx, sdk.NewSessionRequest{Cwd: e.repo, McpServers: []sdk.McpServer{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Prompt(ctx, sdk.PromptRequest{SessionId: s.SessionId, Prompt: []sdk.ContentBlock{sdk.TextBlock("tidy up")}}); err != nil {
		t.Fatal(err)
	}
}

// TestE2EACPEditorFilesWhileQuiet: with no confined command running, the
// file tools still read the editor's buffer (unsaved text included) and
// hand it what they wrote.
func TestE2EACPEditorFilesWhileQuiet(t *testing.T) {
	needSandbox(t)
	t.Parallel()
	e := newE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{call("read_file", map[string]any{"path": "a.txt"})}},
		scripted.Turn{ToolCalls: []scripted.Call{call("write_file", map[string]any{"path": "b.txt", "content": "new\n"})}},
		scripted.Turn{Text: "done"},
	)
	e.write("a.txt", "on disk\n")
	ed := &fsEditor{buffer: "UNSAVED-BUFFER\n"}
	promptWithEditor(t, e, ed)
	reqs := e.srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("requests = %d", len(reqs))
	}
	if got := toolResults(t, reqs[1])["call_0_0"]; !strings.Contains(got, "UNSAVED-BUFFER") {
		t.Errorf("read_file did not read the editor's buffer: %s", got)
	}
	ed.mu.Lock()
	defer ed.mu.Unlock()
	if len(ed.writes) != 1 || !strings.HasSuffix(ed.writes[0], "b.txt") {
		t.Errorf("the editor was handed %v, want b.txt", ed.writes)
	}
}
