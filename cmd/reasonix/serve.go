package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/reasonix/reasonix/events"
	"github.com/reasonix/reasonix/internal/permission"
	"github.com/reasonix/reasonix/internal/web"
	"github.com/reasonix/reasonix/tools"
)

// cmdServe is `reasonix serve`: the engine with a browser UI on a local
// address, behind a random token printed as part of the URL.
func cmdServe(ctx context.Context, args []string, io stdio) error {
	var f runFlags
	var addr string
	var allowRemote, noOpen bool
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(io.err)
	fs.StringVar(&addr, "addr", "127.0.0.1:0", "address to listen on (port 0 picks a free one)")
	fs.BoolVar(&allowRemote, "allow-remote", false, "allow an address other than loopback")
	fs.BoolVar(&noOpen, "no-open", false, "do not open the page in a browser")
	f.sessionFlags(fs)
	fs.BoolVar(&f.hooksTrust, "hooks-trust", false, "run this project's hooks without asking")
	fs.BoolVar(&f.mcpTrust, "mcp-trust", false, "start the MCP servers of this project's .mcp.json without asking")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return usageError{err}
	}
	if len(pos) > 0 {
		return usagef("serve takes no prompt: type it in the page")
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--addr %q: %v (want HOST:PORT, e.g. 127.0.0.1:8080)", addr, err)
	}
	if !loopback(host) && !allowRemote {
		return usagef("--addr %s is reachable from other machines: anyone who gets the token could run commands with your permissions, and plain http shows it to the network. Use a loopback address, or add --allow-remote if you mean it", addr)
	}
	hub := &events.Hub{}
	broker := permission.NewBroker(hub.Publish)
	defer broker.Close("the server stopped")
	questions := tools.NewQuestions(hub.Publish)
	h := &serveHost{engines: engines{hub: hub, broker: broker}, questions: questions}
	srv, err := web.New(h, web.Options{Version: version})
	if err != nil {
		return err
	}
	unsubscribe := hub.Subscribe(srv)
	defer unsubscribe()
	a, err := assemble(assembleOptions{flags: f, sink: hub, stderr: io.err, approver: broker, planApprover: srv.PlanApprover(), askMCPTrust: true,
		asker: questions, elicitor: broker})
	if err != nil {
		return err
	}
	defer a.Close()
	h.app = a
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return usagef("listen on %s: %v", addr, err)
	}
	url := fmt.Sprintf("http://%s/?token=%s", ln.Addr(), srv.Token())
	fmt.Fprintf(io.out, "Reasonix is serving %s\n", url)
	if !loopback(host) {
		fmt.Fprintln(io.err, "warning: this address is reachable from other machines; the token travels unencrypted over http")
	}
	hs := &http.Server{Handler: srv.Handler(), ReadHeaderTimeout: 10 * time.Second}
	var wg sync.WaitGroup
	defer wg.Wait()
	if !noOpen {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := openBrowser(ctx, url); err != nil {
				fmt.Fprintf(io.err, "reasonix: could not open a browser (%v); open the URL above\n", err)
			}
		}()
	}
	served := make(chan error, 1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		served <- hs.Serve(ln)
	}()
	select {
	case err = <-served:
	case <-ctx.Done():
	}
	srv.Close() // ends the event streams and the running turns
	shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = hs.Shutdown(shut)
	if errors.Is(err, http.ErrServerClosed) {
		err = nil
	}
	return err
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// openBrowser opens url with $BROWSER (a command; "none" or empty opens
// nothing), else the platform's opener, and waits for it.
func openBrowser(ctx context.Context, url string) error {
	var name string
	var args []string
	if b, set := os.LookupEnv("BROWSER"); set {
		b = strings.TrimSpace(b)
		if b == "" || b == "none" || b == "false" {
			return nil
		}
		name = b
	} else {
		switch runtime.GOOS {
		case "darwin":
			name = "open"
		case "windows":
			name, args = "rundll32", []string{"url.dll,FileProtocolHandler"}
		default:
			name = "xdg-open"
		}
	}
	cmd := exec.CommandContext(ctx, name, append(args, url)...)
	return cmd.Run()
}

// serveHost opens the page's sessions as engines on the one coordinator,
// and answers the questions of no session (the trust questions asked at
// start-up) through the same broker and question queue the engines use.
type serveHost struct {
	engines
	questions *tools.Questions
}

func (h *serveHost) Answer(id, choice, reason string) error {
	return h.broker.Answer(id, choice, reason)
}
func (h *serveHost) AnswerQuestion(id, answer string) error { return h.questions.Answer(id, answer) }
func (h *serveHost) AnswerElicitation(id string, a events.ElicitAnswer) error {
	return h.broker.AnswerElicitation(id, a)
}

func (h *serveHost) Open() (web.Engine, error)            { return h.open() }
func (h *serveHost) Resume(id string) (web.Engine, error) { return h.resume(id) }
