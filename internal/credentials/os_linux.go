package credentials

import (
	"os"
	"os/exec"
	"strings"
)

// secretService is the freedesktop Secret Service (GNOME Keyring, KWallet)
// through libsecret's secret-tool, which reads the secret from stdin.
type secretService struct{}

func platformStore() osStore { return secretService{} }

func (secretService) available() bool {
	if os.Getenv("DBUS_SESSION_BUS_ADDRESS") == "" {
		return false
	}
	_, err := exec.LookPath("secret-tool")
	return err == nil
}

func (secretService) name() string { return "the Secret Service keyring (secret-tool)" }

func (secretService) get(name string) (string, error) {
	out, err := exec.Command("secret-tool", "lookup", "service", Service, "account", name).Output()
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(out), "\n"), nil
}

func (secretService) set(name, value string) error {
	cmd := exec.Command("secret-tool", "store", "--label=Reasonix "+name, "service", Service, "account", name)
	cmd.Stdin = strings.NewReader(value)
	return cmd.Run()
}

func (secretService) del(name string) error {
	return exec.Command("secret-tool", "clear", "service", Service, "account", name).Run()
}
