package sandboxnet

import (
	"bufio"
	"io"
	"net"
	"os/exec"
	"path/filepath"
	"testing"

	"gotest.tools/v3/assert"

	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// TestForward: what a client sends to the forwarder's address reaches the
// unix socket, and the answer comes back; an address already taken is an
// error.
func TestForward(t *testing.T) {
	testenv.Need(t, "bash")
	sock := filepath.Join(t.TempDir(), "api.sock")
	ln, err := net.Listen("unix", sock)
	assert.NilError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			io.WriteString(c, "the socket heard "+line)
			c.Close()
		}
	}()
	// A free port: the forwarder listens on an address the command knows.
	free, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	addr := free.Addr().String()
	free.Close()
	_, port, _ := net.SplitHostPort(addr)

	f, err := Forward(addr, sock)
	assert.NilError(t, err)
	defer f.Close()
	out, err := exec.Command("bash", "-c", `exec 3<>/dev/tcp/127.0.0.1/`+port+`; echo ping >&3; cat <&3`).CombinedOutput()
	assert.NilError(t, err, "%s", out)
	assert.Equal(t, string(out), "the socket heard ping\n")

	// The address is taken now.
	_, err = Forward(addr, sock)
	assert.ErrorContains(t, err, "sandboxnet: listen tcp "+addr)
}
