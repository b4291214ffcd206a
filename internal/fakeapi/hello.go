package fakeapi

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Hello is an HTTPS proxy on 127.0.0.1 that stands in for the internet a
// first run of Claude Code checks before its onboarding: every CONNECT is
// answered by a TLS server of its own, under a certificate its own CA
// signed for the host asked for, and a GET of a path ending in /hello
// (api.anthropic.com/api/hello, platform.claude.com/v1/oauth/hello) is
// answered 200; anything else 404. Claude Code 2.1.332 ignores
// ANTHROPIC_BASE_URL for that check, so without it the onboarding screens
// cannot be reached on a machine with no network.
//
// The agent is pointed at it with HTTPS_PROXY=URL and trusts its CA with
// NODE_EXTRA_CA_CERTS=CAFile (Env). Nothing but the agent started with that
// environment reaches it.
type Hello struct {
	URL    string
	CAFile string

	ln     net.Listener
	ca     *CA
	mu     sync.Mutex
	served []string
	wg     sync.WaitGroup
}

// NewHello starts a Hello proxy, its CA written into a directory of the
// test's; it is stopped when the test ends.
func NewHello(t testing.TB) *Hello {
	t.Helper()
	h, err := startHello(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.close)
	return h
}

// Env is the environment that sends an agent's HTTPS through the proxy
// and makes it trust the proxy's CA.
func (h *Hello) Env() []string {
	return []string{"HTTPS_PROXY=" + h.URL, "https_proxy=" + h.URL, "NODE_EXTRA_CA_CERTS=" + h.CAFile}
}

// Served returns "HOST PATH STATUS" for every request answered so far.
func (h *Hello) Served() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.served...)
}

func startHello(dir string) (*Hello, error) {
	ca, err := NewCA()
	if err != nil {
		return nil, err
	}
	caFile := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(caFile, ca.PEM, 0o600); err != nil {
		return nil, fmt.Errorf("fakeapi: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("fakeapi: %v", err)
	}
	h := &Hello{URL: "http://" + ln.Addr().String(), CAFile: caFile, ln: ln, ca: ca}
	h.wg.Add(1)
	go h.accept()
	return h, nil
}

func (h *Hello) close() {
	h.ln.Close()
	h.wg.Wait()
}

func (h *Hello) accept() {
	defer h.wg.Done()
	for {
		c, err := h.ln.Accept()
		if err != nil {
			return
		}
		go h.tunnel(c)
	}
}

// tunnel reads one CONNECT and serves HTTP over TLS on the connection, as
// the host asked for.
func (h *Hello) tunnel(c net.Conn) {
	defer c.Close()
	c.SetDeadline(time.Now().Add(time.Minute))
	req, err := http.ReadRequest(bufio.NewReader(c))
	if err != nil || req.Method != http.MethodConnect {
		fmt.Fprint(c, "HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
		return
	}
	host, _, err := net.SplitHostPort(req.Host)
	if err != nil {
		host = req.Host
	}
	cert, err := h.ca.Leaf(host)
	if err != nil {
		fmt.Fprint(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")
		return
	}
	fmt.Fprint(c, "HTTP/1.1 200 Connection Established\r\n\r\n")
	tc := tls.Server(c, &tls.Config{Certificates: []tls.Certificate{*cert}, NextProtos: []string{"http/1.1"}})
	srv := &http.Server{Handler: http.HandlerFunc(h.serve), ReadHeaderTimeout: 10 * time.Second}
	srv.Serve(&oneConn{c: tc, done: make(chan struct{})})
}

func (h *Hello) serve(w http.ResponseWriter, r *http.Request) {
	status := http.StatusNotFound
	if r.Method == http.MethodGet && strings.HasSuffix(r.URL.Path, "/hello") {
		status = http.StatusOK
	}
	h.mu.Lock()
	h.served = append(h.served, fmt.Sprintf("%s %s %d", r.Host, r.URL.Path, status))
	h.mu.Unlock()
	if status != http.StatusOK {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, `{"message":"hello"}`)
}

// oneConn is a listener that yields one connection, then blocks until that
// connection is closed: an http.Server serves one tunnel over it.
type oneConn struct {
	c    net.Conn
	once sync.Once
	done chan struct{}
	used bool
}

func (o *oneConn) Accept() (net.Conn, error) {
	if !o.used {
		o.used = true
		return &closeNotify{Conn: o.c, o: o}, nil
	}
	<-o.done
	return nil, errors.New("fakeapi: tunnel closed")
}

func (o *oneConn) Close() error   { o.once.Do(func() { close(o.done) }); return nil }
func (o *oneConn) Addr() net.Addr { return o.c.LocalAddr() }

// closeNotify ends the one-connection listener when its connection closes.
type closeNotify struct {
	net.Conn
	o *oneConn
}

func (c *closeNotify) Close() error {
	err := c.Conn.Close()
	c.o.Close()
	return err
}
