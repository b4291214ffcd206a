package main

import (
	"bufio"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"

	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// TestHelp: --help says what the binary is, who runs it, and that a user
// does not; a wrong command line is the usage on stderr and exit 2.
func TestHelp(t *testing.T) {
	var out, errs strings.Builder
	assert.Equal(t, run([]string{"--help"}, nil, &out, &errs), 0)
	assert.Equal(t, errs.String(), "")
	for _, want := range []string{"usage: omega-monitor-sandbox proxy [-api] SOCKET HOST:PORT...",
		"The helper of omega-monitor audit run, which runs it: you never run it\nyourself."} {
		assert.Assert(t, strings.Contains(out.String(), want), "--help lacks %q:\n%s", want, out.String())
	}
	for _, args := range [][]string{nil, {"serve"}, {"proxy", "/tmp/x.sock"}, {"proxy", "-api", "/tmp/x.sock"}, {"read"}, {"read", "a", "b"}, {"forward", "127.0.0.1:3128", "/tmp/x.sock"}} {
		var out, errs strings.Builder
		assert.Equal(t, run(args, nil, &out, &errs), 2, "%q", args)
		assert.Equal(t, out.String(), "", "%q", args)
		assert.Assert(t, strings.HasPrefix(errs.String(), "usage: omega-monitor-sandbox"), "%q: %s", args, errs.String())
	}
}

// TestProxyLifetime: the proxy says it listens once its socket is bound,
// refuses what is not allowed, and ends when its standard input does,
// taking its socket with it.
func TestProxyLifetime(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "api.sock")
	stdinR, stdinW := io.Pipe()
	stdoutR, stdoutW := io.Pipe()
	var errs strings.Builder
	code := make(chan int, 1)
	go func() {
		code <- run([]string{"proxy", sock, "api.example:443"}, stdinR, stdoutW, &errs)
		stdoutW.Close()
	}()
	line, err := bufio.NewReader(stdoutR).ReadString('\n')
	assert.NilError(t, err)
	assert.Equal(t, line, "listening on "+sock+"\n")

	c, err := net.Dial("unix", sock)
	assert.NilError(t, err)
	_, err = io.WriteString(c, "CONNECT other.example:443 HTTP/1.1\r\nHost: other.example:443\r\nConnection: close\r\n\r\n")
	assert.NilError(t, err)
	answer, _ := io.ReadAll(c)
	c.Close()
	assert.Assert(t, strings.HasPrefix(string(answer), "HTTP/1.1 403 Forbidden\r\n"), "%s", answer)

	stdinW.Close()
	assert.Equal(t, <-code, 0)
	assert.Equal(t, errs.String(), "")
	_, err = os.Stat(sock)
	assert.Assert(t, os.IsNotExist(err), "the socket is left: %v", err)
}

// TestProxyRefusesAnotherKindOfProxy: an operator's proxy that is not
// http:// is one line and exit 1, before any socket is made.
func TestProxyRefusesAnotherKindOfProxy(t *testing.T) {
	t.Setenv("HTTPS_PROXY", "socks5://127.0.0.1:1080")
	sock := filepath.Join(t.TempDir(), "api.sock")
	var out, errs strings.Builder
	assert.Equal(t, run([]string{"proxy", sock, "api.example:443"}, strings.NewReader(""), &out, &errs), 1)
	assert.Equal(t, out.String(), "")
	assert.Equal(t, errs.String(), "omega-monitor-sandbox: sandboxnet: the sandbox reaches the API through an http:// proxy only; HTTPS_PROXY is \"socks5://127.0.0.1:1080\"\n")
	_, err := os.Stat(sock)
	assert.Assert(t, os.IsNotExist(err), "a socket was made: %v", err)
}

// TestForwardExitStatus: forward exits as its command did, as a shell
// would say it; a command that cannot start is 127, an address that
// cannot be listened on 1, each with one line.
func TestForwardExitStatus(t *testing.T) {
	testenv.Need(t, "sh")
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	defer taken.Close()
	sock := filepath.Join(t.TempDir(), "api.sock")
	tests := []struct {
		addr  string
		argv  []string
		want  int
		wantE string
	}{
		{"127.0.0.1:0", []string{"sh", "-c", "exit 0"}, 0, ""},
		{"127.0.0.1:0", []string{"sh", "-c", "echo no credit left >&2; exit 3"}, 3, "no credit left\n"},
		{"127.0.0.1:0", []string{"sh", "-c", "kill -TERM $$"}, 143, ""},
		{"127.0.0.1:0", []string{"/nonexistent/claude"}, 127, "omega-monitor-sandbox: fork/exec /nonexistent/claude: no such file or directory\n"},
		{taken.Addr().String(), []string{"sh", "-c", "exit 0"}, 1, "omega-monitor-sandbox: sandboxnet: listen tcp " + taken.Addr().String() + ": bind: address already in use\n"},
	}
	for _, tt := range tests {
		var out, errs strings.Builder
		got := run(append([]string{"forward", tt.addr, sock}, tt.argv...), strings.NewReader(""), &out, &errs)
		if d := cmp.Diff([]any{tt.want, tt.wantE}, []any{got, errs.String()}); d != "" {
			t.Errorf("%q: exit status and stderr (-want +got):\n%s", tt.argv, d)
		}
	}
}
