package builtin

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/tools"
)

// fakePwsh writes a pwsh stand-in that prints its arguments one per line
// and two variables, so a test sees exactly how the tool called it.
func fakePwsh(t *testing.T) string {
	t.Helper()
	skipOnWindows(t)
	p := filepath.Join(t.TempDir(), "pwsh")
	script := "#!/bin/sh\nfor a in \"$@\"; do printf 'arg:%s\\n' \"$a\"; done\n" +
		"printf 'secret:%s\\n' \"$MY_SECRET_KEY\"\nprintf 'telemetry:%s\\n' \"$POWERSHELL_TELEMETRY_OPTOUT\"\nprintf 'cwd:%s\\n' \"$PWD\"\nexit 4\n"
	if err := os.WriteFile(p, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPowerShellToolRunsPwsh(t *testing.T) {
	exe := fakePwsh(t)
	t.Setenv("MY_SECRET_KEY", "do-not-leak-this")
	dir := t.TempDir()
	env := tools.NewEnv(dir)
	env.Secrets = tools.NewSecrets([]string{"MY_SECRET_KEY"}, nil)
	env.Shell = "/bin/should-not-be-used"
	tool := PowerShell(exe)
	if tool.Name() != "bash" {
		t.Errorf("name %q: the tool keeps its name", tool.Name())
	}
	if d := tool.Description(); !strings.Contains(d, "PowerShell") || strings.Contains(d, "bash -c") {
		t.Errorf("description does not say PowerShell: %s", d)
	}
	if d := (bashTool{}).Description(); strings.Contains(d, "PowerShell") {
		t.Errorf("the bash description mentions PowerShell: %s", d)
	}
	line := `Get-ChildItem | Where-Object { $_.Name -like "*.go" }; echo 'a b'`
	args, _ := json.Marshal(map[string]string{"command": line})
	acc, err := tools.Describe(tool, args)
	if err != nil || acc.Shell != tools.ShellPowerShell || acc.Command != line || acc.Kind != tools.KindExecute {
		t.Fatalf("access %+v %v", acc, err)
	}
	if acc, _ := tools.Describe(bashTool{}, args); acc.Shell != "" {
		t.Errorf("a bash call describes itself as %q", acc.Shell)
	}
	res, err := runTool(t, tool, env, string(args))
	if err != nil {
		t.Fatal(err)
	}
	want := "arg:-NoProfile\narg:-NonInteractive\narg:-Command\narg:" + line + "\nsecret:\ntelemetry:1\ncwd:" + dir + "\n"
	if !strings.HasPrefix(res.Content, want) {
		t.Errorf("output\n%s\nwant it to start with\n%s", res.Content, want)
	}
	if !res.IsError || res.Summary != "exit code 4" {
		t.Errorf("exit status not reported: %v %q", res.IsError, res.Summary)
	}

	// A background job runs in PowerShell too.
	defer env.State.Close()
	bg, _ := json.Marshal(map[string]any{"command": "Start-Sleep 0", "run_in_background": true})
	res, err = runTool(t, tool, env, string(bg))
	if err != nil {
		t.Fatal(err)
	}
	var out string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		r, _ := runTool(t, jobTool{}, env, `{"job_id":"job-1"}`)
		out += r.Content
		if strings.Contains(out, "status: exited") {
			break
		}
	}
	if !strings.Contains(out, "arg:-Command\narg:Start-Sleep 0") {
		t.Errorf("job output %q", out)
	}
}

// TestPowerShellReal runs a real pwsh when one is installed.
func TestPowerShellReal(t *testing.T) {
	exe, err := exec.LookPath("pwsh")
	if err != nil {
		t.Skip("pwsh is not installed (PowerShell 7); the fake pwsh test covers how it is called")
	}
	dir := t.TempDir()
	env := tools.NewEnv(dir)
	res, err := runTool(t, PowerShell(exe), env, `{"command":"$x = 'po' + 'wer'; Write-Output \"$x-shell\"; exit 3"}`)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Content, "power-shell") || res.Summary != "exit code 3" {
		t.Errorf("got %q (%s)", res.Content, res.Summary)
	}
}
