package credentials

import (
	"bytes"
	"fmt"
	"os/exec"
	"strings"
)

// keychain is the macOS keychain through /usr/bin/security. The secret
// goes in on stdin (security -i), never on a command line others can see.
type keychain struct{}

func platformStore(string) osStore { return keychain{} }

func (keychain) available() bool { _, err := exec.LookPath("/usr/bin/security"); return err == nil }
func (keychain) name() string    { return "the macOS keychain" }

func (keychain) get(name string) (string, error) {
	out, err := exec.Command("/usr/bin/security", "find-generic-password", "-s", Service, "-a", name, "-w").Output()
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(out), "\n"), nil
}

func (keychain) set(name, value string) error {
	if strings.ContainsAny(value, "\n\"") || strings.ContainsAny(name, "\n\" ") {
		return fmt.Errorf("the key contains characters the keychain command cannot take")
	}
	cmd := exec.Command("/usr/bin/security", "-i")
	cmd.Stdin = strings.NewReader(fmt.Sprintf("add-generic-password -U -s %s -a %s -w \"%s\"\n", Service, name, value))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

func (keychain) del(name string) error {
	return exec.Command("/usr/bin/security", "delete-generic-password", "-s", Service, "-a", name).Run()
}
