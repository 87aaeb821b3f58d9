//go:build linux

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/providers/scripted"
)

// keyringSecret is the key a Secret Service holds for Reasonix in the
// keyring tests; the commands print it reversed, past the redaction of
// known keys, so only the sandbox can keep it from the model.
const keyringSecret = "sk-keyring-canary-4e8b21"

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

// TestE2EBashCannotReachTheSecretService runs Reasonix inside a D-Bus
// session whose Secret Service (GNOME Keyring, unlocked) holds a
// Reasonix key, and has a bash command ask for it with secret-tool: by
// the address in its environment, by the standard path
// $XDG_RUNTIME_DIR/bus named outright, and with the address unset (the
// libraries' fallback to that path). With [sandbox] network = false
// unix sockets cannot be created at all; with network = true the
// session bus must still be out of reach, or every secret of the
// keyring is.
func TestE2EBashCannotReachTheSecretService(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"dbus-run-session", "dbus-daemon", "gnome-keyring-daemon", "secret-tool"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (Debian: dbus-daemon, gnome-keyring, libsecret-tools): cannot run a Secret Service here", tool)
		}
	}
	if enforced, _, detail := permission.SandboxStatus(permission.SandboxOptions{}); !enforced {
		t.Skipf("Landlock not enforced here: %s", detail)
	}
	for _, network := range []bool{false, true} {
		name := "network off"
		if network {
			name = "network on"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runtimeDir := filepath.Join(t.TempDir(), "run")
			if err := os.Mkdir(runtimeDir, 0o700); err != nil {
				t.Fatal(err)
			}
			bus := filepath.Join(runtimeDir, "bus")
			lookup := "secret-tool lookup service reasonix account DEEPSEEK_API_KEY"
			e := newE2E(t,
				scripted.Turn{ToolCalls: []scripted.Call{
					bashCall(lookup + " | rev; echo probe-inherited"),
					bashCall("DBUS_SESSION_BUS_ADDRESS=unix:path=" + bus + " " + lookup + " | rev; echo probe-named"),
					bashCall("env -u DBUS_SESSION_BUS_ADDRESS XDG_RUNTIME_DIR=" + runtimeDir + " " + lookup + " | rev; echo probe-fallback"),
					// The keyring's own file (unencrypted where it has no
					// password) is on the read deny list.
					bashCall("cat ~/.local/share/keyrings/login.keyring >/dev/null; echo probe-file=$?"),
				}},
				scripted.Turn{Text: "done"},
			)
			e.writeUserConfig("[sandbox]\nnetwork = " + map[bool]string{false: "false", true: "true"}[network] + "\n")
			conf := filepath.Join(t.TempDir(), "session.conf")
			if err := os.WriteFile(conf, []byte(`<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path=`+bus+`</listen>
  <auth>EXTERNAL</auth>
  <standard_session_servicedirs/>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`), 0o644); err != nil {
				t.Fatal(err)
			}
			check, doctor := filepath.Join(t.TempDir(), "lookup"), filepath.Join(t.TempDir(), "doctor")
			// The keyring is unlocked and given the key outside Reasonix,
			// as a person's desktop session would have it.
			script := `echo pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null || exit 90
printf %s "$SECRET" | secret-tool store --label=test service reasonix account DEEPSEEK_API_KEY || exit 91
secret-tool lookup service reasonix account DEEPSEEK_API_KEY > "$CHECK" || exit 92
"$REASONIX" doctor > "$DOCTOR" 2>&1
exec "$REASONIX" run --yolo "look for keys"`
			cmd := exec.Command("dbus-run-session", "--config-file="+conf, "--", "sh", "-c", script)
			cmd.Dir = e.repo
			cmd.Env = append(e.env, "XDG_RUNTIME_DIR="+runtimeDir, "SECRET="+keyringSecret, "CHECK="+check, "DOCTOR="+doctor, "REASONIX="+binPath)
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			done := make(chan error, 1)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() >= 90 && ee.ExitCode() <= 92 {
					t.Skipf("cannot set up an unlocked GNOME Keyring here (exit %d):\n%s", ee.ExitCode(), out.String())
				}
				if err != nil {
					t.Fatalf("%v\n%s", err, out.String())
				}
			case <-time.After(2 * time.Minute):
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("the run did not finish:\n%s", out.String())
			}
			if b, _ := os.ReadFile(check); string(b) != keyringSecret+"\n" && string(b) != keyringSecret {
				t.Fatalf("the keyring did not give the key back outside the sandbox (%q): the test proves nothing", b)
			}
			d, _ := os.ReadFile(doctor)
			want := "in force: unreachable: commands cannot create unix sockets"
			if network {
				want = "in force: each command starts with " + bus + " hidden"
			}
			if !strings.Contains(string(d), "D-Bus session bus (Secret Service) "+want) {
				t.Errorf("doctor does not say %q:\n%s", want, d)
			}
			if _, err := os.Stat(filepath.Join(filepath.Dir(e.repo), ".local/share/keyrings/login.keyring")); err != nil {
				t.Errorf("the keyring file is not where the test looks for it: %v", err)
			}
			reqs := e.srv.Requests()
			results := toolResults(t, reqs[len(reqs)-1])
			for i, probe := range []string{"probe-inherited", "probe-named", "probe-fallback"} {
				res := results["call_0_"+string(rune('0'+i))]
				t.Logf("%s:\n%s", probe, res)
				if !strings.Contains(res, probe) {
					t.Errorf("the command of %s did not run through: %q", probe, res)
				}
				if strings.Contains(res, reverse(keyringSecret)) || strings.Contains(res, keyringSecret) {
					t.Errorf("%s: a bash command read the key from the Secret Service", probe)
				}
			}
			if res := results["call_0_3"]; !strings.Contains(res, "probe-file=1") || !strings.Contains(res, "ermission denied") {
				t.Errorf("a command read the keyring's file: %s", res)
			}
		})
	}
}
