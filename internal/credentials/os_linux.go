package credentials

import (
	"os"
	"os/exec"
	"strings"

	"github.com/reasonix/reasonix/internal/lookpath"
)

// secretService is the freedesktop Secret Service (GNOME Keyring, KWallet)
// through libsecret's secret-tool, which reads the secret from stdin.
// secret-tool runs outside the sandbox, so it is never one found on PATH
// inside workspace.
type secretService struct{ workspace string }

func platformStore(workspace string) osStore { return secretService{workspace} }

func (s secretService) available() bool {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		return false
	}
	_, err := s.tool()
	return err == nil
}

func (s secretService) tool() (string, error) { return lookpath.Outside("secret-tool", s.workspace) }

// command is secret-tool with args, or the error of not finding it.
func (s secretService) command(args ...string) (*exec.Cmd, error) {
	p, err := s.tool()
	if err != nil {
		return nil, err
	}
	return exec.Command(p, args...), nil
}

func (secretService) name() string { return "the Secret Service keyring (secret-tool)" }

func (s secretService) get(name string) (string, error) {
	cmd, err := s.command("lookup", "service", Service, "account", name)
	if err != nil {
		return "", err
	}
	out, err := cmd.Output()
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(out), "\n"), nil
}

func (s secretService) set(name, value string) error {
	cmd, err := s.command("store", "--label=Reasonix "+name, "service", Service, "account", name)
	if err != nil {
		return err
	}
	cmd.Stdin = strings.NewReader(value)
	return cmd.Run()
}

func (s secretService) del(name string) error {
	cmd, err := s.command("clear", "service", Service, "account", name)
	if err != nil {
		return err
	}
	return cmd.Run()
}
