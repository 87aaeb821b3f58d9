//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/providers/scripted"
)

var (
	escapeOnce sync.Once
	escapeBin  string
	escapeErr  error
)

// hideEscape builds testdata/hideescape, a command that tries every way
// it knows around the mounts that hide files.
func hideEscape(t *testing.T) string {
	t.Helper()
	escapeOnce.Do(func() {
		escapeBin = filepath.Join(filepath.Dir(binPath), "hideescape")
		build := exec.Command("go", "build", "-o", escapeBin, "./testdata/hideescape")
		build.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := build.CombinedOutput(); err != nil {
			escapeErr = fmt.Errorf("build hideescape: %v\n%s", err, out)
		}
	})
	if escapeErr != nil {
		t.Fatal(escapeErr)
	}
	return escapeBin
}

const (
	hideSecret1 = "DB_PASSWORD=hide-secret-one-5c1e"
	hideSecret2 = "NESTED=hide-secret-two-9b7d"
)

// newHideE2E is a workspace with a Read(./.env) deny rule and two .env
// files holding secrets, where the sandbox hides them from commands; it
// skips where it cannot.
func newHideE2E(t *testing.T, turns ...scripted.Turn) *e2e {
	t.Helper()
	needSandbox(t)
	e := newE2E(t, turns...)
	e.write("reasonix.toml", "[permissions]\ndeny = [\"Read(./.env)\"]\n")
	e.write(".env", hideSecret1+"\n")
	e.write("app/.env", hideSecret2+"\n")
	e.write("app/main.go", "package main\n")
	// Whether user namespaces can be made here is the binary's to probe;
	// doctor says.
	if d := e.run("", "doctor"); !strings.Contains(d.stdout, "each command starts with the matching files hidden") {
		t.Skipf("the sandbox cannot hide files here:\n%s", d.stdout)
	}
	return e
}

// lastMessages runs reasonix with args and returns the messages of the
// last request, which hold every tool result.
func (e *e2e) lastMessages(args ...string) string {
	e.t.Helper()
	r := e.run("", args...)
	if r.code != 0 {
		e.t.Fatalf("exit %d\n%s", r.code, r.stderr)
	}
	reqs := e.srv.Requests()
	return string(messagesOf(e.t, reqs[len(reqs)-1]))
}

// TestE2EHiddenFilesResistEscapes runs a hostile program as a bash
// command against hidden .env files: a clone of the workspace's mount
// without the mounts on top (open_tree), unmounting them, the same from
// namespaces of its own, and other processes' views of the file system
// through /proc. Run as root it held every capability in the namespace
// the sandbox made, and read the secrets through the clone; no way may
// show them now.
func TestE2EHiddenFilesResistEscapes(t *testing.T) {
	t.Parallel()
	bin := hideEscape(t)
	if os.Getuid() != 0 {
		t.Log("not root: a command's capabilities vanish when it starts, so this shows only the seccomp half of the defence; the capability half applies to root")
	}
	e := newHideE2E(t,
		scripted.Turn{ToolCalls: []scripted.Call{bashCall("k=nv; " + bin + " .e$k app/.e$k")}},
		scripted.Turn{Text: "done"},
	)
	msgs := e.lastMessages("run", "--yolo", "look around")
	reqs := e.srv.Requests()
	t.Logf("the hostile command's report:\n%s", toolResults(t, reqs[len(reqs)-1])["call_0_0"])
	if strings.Contains(msgs, "hide-secret") {
		t.Fatalf("a hidden secret reached the model")
	}
	if strings.Contains(msgs, "opened device") {
		t.Errorf("a raw device, the kernel log or a console could be opened")
	}
	for _, want := range []string{"escape-done", "tried open_tree", "own user namespace", "/proc/PID/root", "tried the disks"} {
		if !strings.Contains(msgs, want) {
			t.Errorf("the hostile command did not run through (%q missing)", want)
		}
	}
	if e.read(".env") != hideSecret1+"\n" || e.read("app/.env") != hideSecret2+"\n" {
		t.Errorf("a hidden file changed on disk")
	}
}

// keptCapsMask is what a command run by root keeps: CAP_CHOWN,
// CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_FSETID, CAP_KILL, CAP_SETGID,
// CAP_SETUID and CAP_NET_BIND_SERVICE (docs/SPEC.md).
const keptCapsMask = 1<<0 | 1<<1 | 1<<3 | 1<<4 | 1<<5 | 1<<6 | 1<<7 | 1<<10

// capsOf parses the Cap* lines of /proc/PID/status out of text.
func capsOf(t *testing.T, text string) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, line := range strings.Split(text, "\n") {
		// A failed command's result starts with "Error: ".
		name, v, ok := strings.Cut(strings.TrimPrefix(line, "Error: "), ":")
		if !ok || !strings.HasPrefix(name, "Cap") {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		if err != nil {
			t.Fatalf("bad capability line %q", line)
		}
		out[name] = n
	}
	for _, want := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
		if _, ok := out[want]; !ok {
			t.Fatalf("no %s in %q", want, text)
		}
	}
	return out
}

// TestE2ERootCommandsKeepFewCapabilities: a command started by a root
// Reasonix, plainly and with files hidden (in the namespace the sandbox
// makes), holds only the capabilities ordinary work needs, and that work
// still succeeds in a repository owned by another user: writing, making
// folders, chmod and chown. Anyone else's commands hold none.
func TestE2ERootCommandsKeepFewCapabilities(t *testing.T) {
	t.Parallel()
	// In a script: the gate asks a person about chmod and chown, and this
	// run has none; the sandbox is what is tested.
	const work = "grep ^Cap /proc/self/status\necho more >> owned.txt && mkdir -p made/sub && echo new > made/sub/f && chmod 600 owned.txt && chown 1000:1000 made/sub/f && echo work=ok\n"
	for _, hidden := range []bool{false, true} {
		t.Run(fmt.Sprintf("hidden=%v", hidden), func(t *testing.T) {
			t.Parallel()
			turns := []scripted.Turn{{ToolCalls: []scripted.Call{bashCall("sh work.sh")}}, {Text: "done"}}
			var e *e2e
			if hidden {
				e = newHideE2E(t, turns...)
			} else {
				if enforced, _, detail := permission.SandboxStatus(permission.SandboxOptions{}); !enforced {
					t.Skipf("Landlock not enforced here: %s", detail)
				}
				e = newE2E(t, turns...)
			}
			e.write("owned.txt", "owned by someone else\n")
			e.write("work.sh", work)
			if os.Getuid() == 0 {
				// The repository belongs to uid 1000, as a container's
				// bind-mounted checkout does, with no write bit for others.
				err := filepath.WalkDir(e.repo, func(p string, d os.DirEntry, err error) error {
					if err != nil {
						return err
					}
					return os.Lchown(p, 1000, 1000)
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			e.lastMessages("run", "--yolo", "work")
			reqs := e.srv.Requests()
			res := toolResults(t, reqs[len(reqs)-1])["call_0_0"]
			caps := capsOf(t, res)
			if os.Getuid() != 0 {
				t.Log("not root: dropping capabilities applies to root; a command here must hold none")
				for _, k := range []string{"CapPrm", "CapEff", "CapAmb"} {
					if caps[k] != 0 {
						t.Errorf("%s = %x, want none:\n%s", k, caps[k], res)
					}
				}
				return
			}
			for _, k := range []string{"CapPrm", "CapEff", "CapBnd"} {
				if caps[k] != keptCapsMask {
					t.Errorf("%s = %x, want %x (dropped: %x, missing: %x):\n%s", k, caps[k], keptCapsMask,
						caps[k]&^keptCapsMask, keptCapsMask&^caps[k], res)
				}
			}
			if caps["CapAmb"] != 0 || caps["CapInh"]&^keptCapsMask != 0 {
				t.Errorf("ambient %x, inheritable %x:\n%s", caps["CapAmb"], caps["CapInh"], res)
			}
			if !strings.Contains(res, "work=ok") {
				t.Errorf("ordinary work as root in another user's repository failed:\n%s", res)
			}
			if e.read("owned.txt") != "owned by someone else\nmore\n" || e.read("made/sub/f") != "new\n" {
				t.Errorf("the files the command wrote are not on disk")
			}
		})
	}
}

// TestE2EHiddenFilesStayHiddenAcrossCommands: what one command does to
// the workspace does not unhide a file from the next. The first renames
// the folder holding a hidden .env (the hide list used to be walked once
// per run, so app2/.env then read plainly) and moves another such folder
// into the run's temporary folder; while it runs, another program makes
// a .env in a new folder and in an existing one. The second command reads
// all four.
func TestE2EHiddenFilesStayHiddenAcrossCommands(t *testing.T) {
	t.Parallel()
	const (
		movedOut = "SVC_TOKEN=hide-secret-three-4e21"
		late1    = "LATE=hide-secret-four-77aa"
		late2    = "LATE=hide-secret-five-0c3f"
	)
	e := newHideE2E(t,
		// In a script: the gate asks a person about mv, and a hostile
		// model would not ask.
		scripted.Turn{ToolCalls: []scripted.Call{bashCall(`sh move.sh`)}},
		scripted.Turn{ToolCalls: []scripted.Call{bashCall(`k=nv; for f in app2/.e$k "$TMPDIR/svc/.e$k" late/.e$k lib/.e$k; do [ -f $f ] && echo "$f: [$(cat $f)]"; done; echo read-done`)}},
		scripted.Turn{Text: "done"},
	)
	e.write("move.sh", `mv app app2 && mv svc "$TMPDIR/svc"; echo moved=$?; touch moved.mark
i=0; while [ ! -e outside-done.mark ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; echo waited=$i
`)
	e.write("svc/.env", movedOut+"\n")
	e.write("lib/x.go", "package lib\n")
	// Another program (the person's editor, say) writes two .env files
	// while the first command runs.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 400; i++ {
			if _, err := os.Stat(filepath.Join(e.repo, "moved.mark")); err == nil {
				break
			}
			time.Sleep(25 * time.Millisecond)
		}
		os.MkdirAll(filepath.Join(e.repo, "late"), 0o755)
		os.WriteFile(filepath.Join(e.repo, "late", ".env"), []byte(late1+"\n"), 0o644)
		os.WriteFile(filepath.Join(e.repo, "lib", ".env"), []byte(late2+"\n"), 0o644)
		os.WriteFile(filepath.Join(e.repo, "outside-done.mark"), nil, 0o644)
	}()
	e.lastMessages("run", "--yolo", "tidy up")
	<-done
	reqs := e.srv.Requests()
	results := toolResults(t, reqs[len(reqs)-1])
	t.Logf("first command:\n%s\nsecond command:\n%s", results["call_0_0"], results["call_1_0"])
	if !strings.Contains(results["call_0_0"], "moved=0") || strings.Contains(results["call_0_0"], "waited=200") {
		t.Fatalf("the first command did not move the folders, or the other program did not write:\n%s", results["call_0_0"])
	}
	if !strings.Contains(results["call_1_0"], "read-done") || strings.Count(results["call_1_0"], ": []") != 4 {
		t.Errorf("the second command did not read four empty files:\n%s", results["call_1_0"])
	}
	if strings.Contains(results["call_1_0"], "hide-secret") {
		t.Errorf("a hidden secret reached the model")
	}
}
