package auditrun

import (
	"bufio"
	"cmp"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// An auditor inside bubblewrap has no network of its own (--unshare-net):
// its only way out is an HTTP proxy that audit run serves outside the
// sandbox on a unix socket, which connects to the agent's API endpoints and
// to nothing else. Inside, this program runs first (NetVerb): it listens on
// the loopback address the agent's HTTPS_PROXY and HTTP_PROXY name, passes
// each connection to the socket, and runs the agent. Claude Code, Codex and
// Gemini CLI each send their API requests through HTTPS_PROXY (a CONNECT
// tunnel) or, to a plain http:// base URL, through HTTP_PROXY.

// NetVerb is the hidden command of the program named Config.Self that runs
// first inside the sandbox: see ServeNet.
const NetVerb = "audit-sandbox-net"

// Inside the sandbox: where the agent finds the proxy, and where the
// proxy's socket is bound.
const (
	sandboxProxy  = "127.0.0.1:3128"
	sandboxSocket = "/run/omega-audit/api.sock"
)

// proxyEnv are the variables that name a proxy. The sandbox sets the first
// four to its own and drops the rest: a NO_PROXY would only send the agent
// to a network it does not have.
var proxyEnv = []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy",
	"ALL_PROXY", "all_proxy", "NO_PROXY", "no_proxy"}

// withProxy returns env with the proxy variables naming the sandbox's.
func withProxy(env []string) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return slices.Contains(proxyEnv, name)
	})
	for _, name := range proxyEnv[:4] {
		out = append(out, name+"=http://"+sandboxProxy)
	}
	return out
}

// ServeNet runs inside the sandbox, as NetVerb: args are the proxy's socket
// and then the auditor's command line. It listens on the sandbox's proxy
// address, passes each connection to the socket, runs the auditor with its
// standard streams, and returns its exit status.
func ServeNet(args []string, stderr io.Writer) int {
	if len(args) < 2 {
		fmt.Fprintf(stderr, "auditrun: usage: %s SOCKET COMMAND...\n", NetVerb)
		return 2
	}
	sock, argv := args[0], args[1:]
	ln, err := net.Listen("tcp", sandboxProxy)
	if err != nil {
		fmt.Fprintf(stderr, "auditrun: %v\n", err)
		return 1
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("unix", sock)
				if err != nil {
					return
				}
				defer up.Close()
				splice(c, up)
			}()
		}
	}()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
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
	fmt.Fprintf(stderr, "auditrun: %v\n", err)
	return 127
}

// splice copies a to b and b to a until both are done, passing on each
// side's end of writing.
func splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
}

// An apiProxy is the sandbox's way out: an HTTP proxy on a unix socket that
// tunnels (CONNECT) or forwards (a plain http:// request) to the allowed
// endpoints only, and answers 403 to anything else.
type apiProxy struct {
	allow   []string // host:port, the host in lower case
	via     upstream // the operator's own proxy to them, if any
	dir     *os.File // the socket's directory, open while the socket is
	srv     *http.Server
	forward *httputil.ReverseProxy
}

// dialTimeout bounds one connection to the API.
const dialTimeout = 30 * time.Second

// startAPIProxy serves the proxy on the unix socket api.sock in dir: to
// the endpoints allow, through the proxy via names for each, if any.
func startAPIProxy(dir string, allow []string, via upstream) (*apiProxy, error) {
	// A socket's path is at most 107 bytes, and a run's directory under a
	// state home can be longer: the socket is made through the open
	// directory's descriptor, which the kernel resolves as the directory.
	d, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("auditrun: the API proxy: %w", err)
	}
	ln, err := net.Listen("unix", fmt.Sprintf("/proc/self/fd/%d/api.sock", d.Fd()))
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("auditrun: the API proxy: %w", err)
	}
	quiet := log.New(io.Discard, "", 0)
	p := &apiProxy{allow: allow, via: via, dir: d}
	p.forward = &httputil.ReverseProxy{
		// The request is already absolute (http://host:port/path): it
		// goes where it says, once ServeHTTP has allowed that.
		Rewrite: func(*httputil.ProxyRequest) {},
		Transport: &http.Transport{
			Proxy:       func(r *http.Request) (*url.URL, error) { return via.proxy(r.URL.Scheme, r.URL.Hostname()), nil },
			DialContext: (&net.Dialer{Timeout: dialTimeout}).DialContext,
			// A kept connection the API has just closed fails a POST,
			// which is not retried: the agent would see a 502 and send
			// its turn again. One connection a request.
			DisableKeepAlives: true,
		},
		FlushInterval: -1, // the API streams its answer
		ErrorLog:      quiet,
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: time.Minute, ErrorLog: quiet}
	go p.srv.Serve(ln)
	return p, nil
}

// Close stops the proxy and removes its socket.
func (p *apiProxy) Close() error {
	err := p.srv.Close()
	p.dir.Close()
	return err
}

func (p *apiProxy) allowed(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	return err == nil && slices.Contains(p.allow, net.JoinHostPort(strings.ToLower(host), port))
}

func (p *apiProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	const refused = "omega-monitor: the audit sandbox reaches only the agent's API\n"
	if r.Method != http.MethodConnect {
		target := r.URL.Host
		if r.URL.Port() == "" {
			target = net.JoinHostPort(r.URL.Hostname(), "80")
		}
		if r.URL.Scheme != "http" || !p.allowed(target) {
			http.Error(w, refused, http.StatusForbidden)
			return
		}
		p.forward.ServeHTTP(w, r)
		return
	}
	if !p.allowed(r.Host) {
		http.Error(w, refused, http.StatusForbidden)
		return
	}
	up, err := p.via.dial(r.Host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer up.Close()
	c, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer c.Close()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	// What the client sent after its request line, already read.
	if n := buf.Reader.Buffered(); n > 0 {
		b, _ := buf.Reader.Peek(n)
		if _, err := up.Write(b); err != nil {
			return
		}
	}
	splice(c, up)
}

// An upstream is the operator's own proxy, from the environment audit run
// was given: the sandbox's proxy reaches the API through it, as the agent
// would have.
type upstream struct {
	https, http *url.URL // HTTPS_PROXY's, HTTP_PROXY's, or nil
	noProxy     []string // NO_PROXY's hosts and domains; "*" is all
}

// upstreamOf reads the operator's proxy from environ: HTTPS_PROXY for the
// tunnels, HTTP_PROXY for plain http, each or its lower-case name, and
// NO_PROXY. Only an http:// proxy can be used; another is an error.
func upstreamOf(environ []string) (upstream, error) {
	var u upstream
	for _, v := range []struct {
		to   **url.URL
		name string
	}{{&u.https, "HTTPS_PROXY"}, {&u.http, "HTTP_PROXY"}} {
		raw := cmp.Or(lookup(environ, v.name), lookup(environ, strings.ToLower(v.name)))
		if raw == "" {
			continue
		}
		if !strings.Contains(raw, "://") {
			raw = "http://" + raw
		}
		p, err := url.Parse(raw)
		if err != nil || p.Scheme != "http" || p.Host == "" {
			return upstream{}, fmt.Errorf("auditrun: the sandbox reaches the API through an http:// proxy only; %s is %q", v.name, raw)
		}
		if p.Port() == "" {
			p.Host = net.JoinHostPort(p.Hostname(), "80")
		}
		*v.to = p
	}
	for _, h := range strings.Split(cmp.Or(lookup(environ, "NO_PROXY"), lookup(environ, "no_proxy")), ",") {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" {
			u.noProxy = append(u.noProxy, h)
		}
	}
	return u, nil
}

// proxy returns the operator's proxy for a request of scheme to host, or
// nil to go directly: none is set, or NO_PROXY names the host or its
// domain, or the host is this machine's loopback.
func (u upstream) proxy(scheme, host string) *url.URL {
	p := u.http
	if scheme == "https" {
		p = u.https
	}
	host = strings.ToLower(host)
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return nil
	}
	for _, n := range u.noProxy {
		if n == "*" || host == strings.TrimPrefix(n, ".") || strings.HasSuffix(host, "."+strings.TrimPrefix(n, ".")) {
			return nil
		}
	}
	return p
}

// dial connects to target (host:port) for a tunnel: directly, or through
// a tunnel of the operator's proxy.
func (u upstream) dial(target string) (net.Conn, error) {
	host, _, _ := net.SplitHostPort(target)
	p := u.proxy("https", host)
	if p == nil {
		return net.DialTimeout("tcp", target, dialTimeout)
	}
	c, err := net.DialTimeout("tcp", p.Host, dialTimeout)
	if err != nil {
		return nil, err
	}
	req := &http.Request{Method: http.MethodConnect, URL: &url.URL{Opaque: target}, Host: target, Header: http.Header{}}
	if p.User != nil {
		pw, _ := p.User.Password()
		req.Header.Set("Proxy-Authorization", "Basic "+base64.StdEncoding.EncodeToString([]byte(p.User.Username()+":"+pw)))
	}
	c.SetDeadline(time.Now().Add(dialTimeout))
	if err := req.Write(c); err != nil {
		c.Close()
		return nil, err
	}
	// The API speaks only after the client (TLS): nothing follows the
	// answer that the reader could have taken.
	resp, err := http.ReadResponse(bufio.NewReader(c), req)
	if err != nil {
		c.Close()
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		c.Close()
		return nil, fmt.Errorf("auditrun: the proxy %s answered %s", p.Host, resp.Status)
	}
	c.SetDeadline(time.Time{})
	return c, nil
}

// apiDefaults are the endpoints each agent reaches when its environment
// and settings name none: its API, and where its login is refreshed.
var apiDefaults = map[string][]string{
	"claude": {"api.anthropic.com:443", "platform.claude.com:443"},
	"codex":  {"api.openai.com:443", "chatgpt.com:443", "auth.openai.com:443"},
	"gemini": {"generativelanguage.googleapis.com:443", "cloudcode-pa.googleapis.com:443", "oauth2.googleapis.com:443"},
}

// apiURLEnv are the variables that move each agent's API elsewhere.
var apiURLEnv = map[string][]string{
	"claude": {"ANTHROPIC_BASE_URL", "ANTHROPIC_BEDROCK_BASE_URL", "ANTHROPIC_VERTEX_BASE_URL"},
	"codex":  {"OPENAI_BASE_URL"},
	"gemini": {"GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL"},
}

// apiEndpoints returns the host:port of each endpoint an auditor of agent
// may reach: the base URLs its environment env (the scrubbed one it runs
// with) and a Codex auditor's settings name, or, when they name none, the
// agent's defaults. A base URL that is not an http or https URL is an
// error: it could not be allowed, and the auditor could not work.
func apiEndpoints(agent string, env, codexConfig []string) ([]string, error) {
	var urls []string
	for _, name := range apiURLEnv[agent] {
		if v := lookup(env, name); v != "" {
			urls = append(urls, v)
		}
	}
	if agent == "codex" {
		for _, kv := range codexConfig {
			urls = append(urls, baseURLs(kv)...)
		}
	}
	if len(urls) == 0 {
		return slices.Clone(apiDefaults[agent]), nil
	}
	var out []string
	for _, raw := range urls {
		u, err := url.Parse(strings.TrimSpace(raw))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
			return nil, fmt.Errorf("auditrun: the API base URL %q is not an http or https URL", raw)
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
		}
		if hp := net.JoinHostPort(strings.ToLower(u.Hostname()), port); !slices.Contains(out, hp) {
			out = append(out, hp)
		}
	}
	return out, nil
}

// baseURLs returns the values of the keys ending in base_url in a Codex
// setting KEY=VALUE: openai_base_url=…, model_providers.x.base_url="…", or
// a provider's inline table {…, base_url = "…", …}. A value Codex cannot
// parse as TOML it takes as a bare string, and so does this.
func baseURLs(kv string) []string {
	var out []string
	rest := kv
	for {
		i := strings.Index(rest, "base_url")
		if i < 0 {
			return out
		}
		rest = strings.TrimLeft(rest[i+len("base_url"):], ` "'`+"\t")
		if !strings.HasPrefix(rest, "=") {
			continue
		}
		rest = strings.TrimLeft(rest[1:], " \t")
		if rest == "" {
			return out
		}
		var v string
		if q := rest[0]; q == '"' || q == '\'' {
			v, rest, _ = strings.Cut(rest[1:], string(q))
		} else {
			end := strings.IndexAny(rest, ",} \t")
			if end < 0 {
				end = len(rest)
			}
			v, rest = rest[:end], rest[end:]
		}
		out = append(out, v)
	}
}
