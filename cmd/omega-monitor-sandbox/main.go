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
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"

	"github.com/omega-monitor/omega-monitor/internal/auditrun/sandboxnet"
	"github.com/omega-monitor/omega-monitor/internal/auditrun/treeread"
)

const usage = `usage: omega-monitor-sandbox proxy [-api] SOCKET HOST:PORT...
       omega-monitor-sandbox forward ADDRESS SOCKET COMMAND...
       omega-monitor-sandbox read DIR

The helper of omega-monitor audit run, which runs it: you never run it
yourself. An auditor inside bubblewrap has no network of its own, and this
is its one way to its API.

  proxy    outside the sandbox: serves an HTTP proxy on the unix socket
           SOCKET that opens a tunnel (CONNECT) or forwards a plain http://
           request to the endpoints HOST:PORT only, and answers 403 to
           anything else; through the http:// proxy that HTTPS_PROXY,
           HTTP_PROXY and NO_PROXY name, if any. With -api, the first line
           of standard input is the agent's API as JSON (its base, the
           addresses the agent calls the proxy by, the credential header):
           a request to those addresses goes to the API with the
           credential added, so that the key stays outside the sandbox.
           Once the socket is bound it prints "listening on SOCKET"; it
           serves until its standard input ends.
  forward  inside the sandbox: listens on ADDRESS (where the agent's
           HTTPS_PROXY points), passes each connection to SOCKET, runs
           COMMAND and exits with its status.
  read     inside the sandbox: an MCP server on standard input and output
           whose tools list, read and search the files under DIR, and
           nothing else: the file tools of an auditor whose agent has none
           but a shell (Codex), which is turned off.

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
	case len(args) >= 4 && args[0] == "proxy" && args[1] == "-api":
		return proxy(args[2], args[3:], true, stdin, stdout, stderr)
	case len(args) >= 3 && args[0] == "proxy" && args[1] != "-api":
		return proxy(args[1], args[2:], false, stdin, stdout, stderr)
	case len(args) == 2 && args[0] == "read":
		return read(args[1], stdin, stdout, stderr)
	case len(args) >= 4 && args[0] == "forward":
		return forward(args[1], args[2], args[3:], stdin, stdout, stderr)
	}
	io.WriteString(stderr, usage)
	return 2
}

// proxy serves the API proxy on sock for the endpoints allow until stdin
// ends: audit run holds a pipe to it, so the proxy ends when audit run
// closes it or dies, whatever killed it. With withAPI, the first line of
// stdin is the API and its credential: a pipe, not the command line or the
// environment, which another process could read.
func proxy(sock string, allow []string, withAPI bool, stdin io.Reader, stdout, stderr io.Writer) int {
	in := bufio.NewReader(stdin)
	var api *sandboxnet.API
	if withAPI {
		line, err := in.ReadBytes('\n')
		if err == nil {
			api = new(sandboxnet.API)
			err = json.Unmarshal(line, api)
		}
		if err != nil {
			fmt.Fprintf(stderr, "omega-monitor-sandbox: the API on standard input: %v\n", err)
			return 1
		}
	}
	p, err := sandboxnet.StartProxy(sock, allow, os.Environ(), api)
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
	io.Copy(io.Discard, in)
	return 0
}

// read serves the tree dir's read-only file tools over MCP on stdin and
// stdout until stdin ends.
func read(dir string, stdin io.Reader, stdout, stderr io.Writer) int {
	if err := treeread.Serve(context.Background(), dir, stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "omega-monitor-sandbox: %v\n", err)
		return 1
	}
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
