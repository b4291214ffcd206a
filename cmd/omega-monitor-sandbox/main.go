// Command omega-monitor-sandbox is the audit sandbox's one way to the
// agent's API: a hidden helper that omega-monitor audit run runs, outside
// bubblewrap as the API proxy and inside as the auditor's forwarder to it
// (package sandboxnet). A user never runs it.
//
// It is a binary of its own so that omega-monitor does not link net/http
// and crypto/tls: they nearly doubled its size and cost every start of it
// about 0.6 ms, and the poll loop starts omega-monitor several times a poll
// for every watched agent.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"github.com/omega-monitor/omega-monitor/internal/auditrun/sandboxnet"
)

const usage = `usage: omega-monitor-sandbox proxy SOCKET HOST:PORT...
       omega-monitor-sandbox forward ADDRESS SOCKET COMMAND...

The helper of omega-monitor audit run, which runs it: you never run it
yourself. An auditor inside bubblewrap has no network of its own, and this
is its one way to its API.

  proxy    outside the sandbox: serves an HTTP proxy on the unix socket
           SOCKET that opens a tunnel (CONNECT) or forwards a plain http://
           request to the endpoints HOST:PORT only, and answers 403 to
           anything else; through the http:// proxy that HTTPS_PROXY,
           HTTP_PROXY and NO_PROXY name, if any. Once the socket is bound it
           prints "listening on SOCKET"; it serves until its standard input
           ends.
  forward  inside the sandbox: listens on ADDRESS (where the agent's
           HTTPS_PROXY points), passes each connection to SOCKET, runs
           COMMAND and exits with its status.

It is apart from omega-monitor so that no start of that one pays for
net/http and TLS.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run runs the verb args name; a failure is one line on stderr.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	switch {
	case len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help" || args[0] == "help"):
		io.WriteString(stdout, usage)
		return 0
	case len(args) >= 3 && args[0] == "proxy":
		return proxy(args[1], args[2:], stdin, stdout, stderr)
	case len(args) >= 4 && args[0] == "forward":
		return forward(args[1], args[2], args[3:], stdin, stdout, stderr)
	}
	io.WriteString(stderr, usage)
	return 2
}

// proxy serves the API proxy on sock for the endpoints allow until stdin
// ends: audit run holds a pipe to it, so the proxy ends when audit run
// closes it or dies, whatever killed it.
func proxy(sock string, allow []string, stdin io.Reader, stdout, stderr io.Writer) int {
	p, err := sandboxnet.StartProxy(sock, allow, os.Environ())
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor-sandbox: %v\n", err)
		return 1
	}
	defer p.Close()
	// The line audit run waits for before it starts an auditor.
	if _, err := fmt.Fprintf(stdout, "listening on %s\n", sock); err != nil {
		fmt.Fprintf(stderr, "omega-monitor-sandbox: %v\n", err)
		return 1
	}
	io.Copy(io.Discard, stdin)
	return 0
}

// forward runs argv with this process's streams behind the forwarder, and
// returns its exit status as a shell would: 128 and the signal that ended
// it, 127 when it could not be started.
func forward(addr, sock string, argv []string, stdin io.Reader, stdout, stderr io.Writer) int {
	f, err := sandboxnet.Forward(addr, sock)
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor-sandbox: %v\n", err)
		return 1
	}
	defer f.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return exit.ExitCode()
	}
	fmt.Fprintf(stderr, "omega-monitor-sandbox: %v\n", err)
	return 127
}
