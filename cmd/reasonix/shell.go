package main

import (
	"fmt"
	"os/exec"

	"github.com/reasonix/reasonix/internal/config"
	"github.com/reasonix/reasonix/tools"
	"github.com/reasonix/reasonix/tools/builtin"
)

// powerShellNames are the executables [tools.shell] prefer looks for, in
// order: PowerShell 7 (pwsh) everywhere, and for "powershell" Windows
// PowerShell (powershell.exe) when there is no pwsh.
func powerShellNames(prefer string) ([]string, bool) {
	switch prefer {
	case "pwsh":
		return []string{"pwsh"}, true
	case "powershell":
		return []string{"pwsh", "powershell"}, true
	}
	return nil, false
}

// preferShell replaces the bash tool of reg with its PowerShell form when
// [tools.shell] prefer names PowerShell (a disabled bash stays disabled).
// A PowerShell that cannot be found is an error naming the key, not a
// quiet fall back to bash: the person asked for PowerShell.
func preferShell(reg *tools.Registry, sh config.Shell, sources map[string]string) error {
	if _, ok := reg.Get("bash"); !ok {
		return nil
	}
	exe, err := powerShellPath(sh, sources)
	if err != nil || exe == "" {
		return err
	}
	reg.Add(builtin.PowerShell(exe))
	return nil
}

// powerShellPath is the PowerShell [tools.shell] asks for: "" when it
// asks for none, an error naming the key when it cannot be found.
func powerShellPath(sh config.Shell, sources map[string]string) (string, error) {
	names, ok := powerShellNames(sh.Prefer)
	if !ok {
		return "", nil
	}
	where := ""
	if src := sources["tools.shell.prefer"]; src != "" {
		where = " (" + src + ")"
	}
	if sh.Path != "" {
		exe, err := exec.LookPath(sh.Path)
		if err != nil {
			return "", usagef("[tools.shell] path = %q%s: %v (it names the PowerShell that prefer = %q runs)", sh.Path, where, err, sh.Prefer)
		}
		return exe, nil
	}
	for _, n := range names {
		if exe, err := exec.LookPath(n); err == nil {
			return exe, nil
		}
	}
	return "", usageError{fmt.Errorf("[tools.shell] prefer = %q%s: no %s found on PATH; install PowerShell 7 (pwsh), set [tools.shell] path to it, or set prefer = \"auto\" to use bash",
		sh.Prefer, where, names[0])}
}
