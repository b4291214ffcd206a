package sandboxnet

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/base64"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// A Proxy is the sandbox's way out: an HTTP proxy on a unix socket that
// tunnels (CONNECT) or forwards (a plain http:// request) to the allowed
// endpoints only, and answers 403 to anything else. With an API, it is
// also where the agent's base URL points: what the agent sends it there
// goes on to the API with the key added, which never enters the sandbox.
type Proxy struct {
	allow   []string // host:port, the host in lower case
	via     upstream // the operator's own proxy to them, if any
	dir     *os.File // the socket's directory, open while the socket is
	ln      net.Listener
	srv     *http.Server
	forward *httputil.ReverseProxy
	api     *API
	toAPI   *httputil.ReverseProxy
}

// An API is where the agent's API requests go, and the credential added to
// each on the way: the agent inside holds a placeholder and a plain http://
// base URL of the sandbox's, so that nothing it can be made to read or
// print there is a key.
type API struct {
	// Base is the API's scheme and host (https://api.anthropic.com); a
	// request keeps its own path.
	Base string `json:"base"`
	// Local are the addresses (host:port) the agent reaches this proxy
	// by, its base URL's: a request to them is the API's.
	Local []string `json:"local"`
	// Header and Value are the credential (x-api-key and the key;
	// Authorization and "Bearer " and the key), or none. Drop names the
	// headers removed first, whatever placeholder the agent put in them.
	Header string   `json:"header"`
	Value  string   `json:"value"`
	Drop   []string `json:"drop"`
}

// dialTimeout bounds one connection to the API.
const dialTimeout = 30 * time.Second

// StartProxy serves the proxy on the unix socket sock, which it makes: to
// the endpoints allow (host:port, the host in lower case), through the
// operator's proxy that environ names for each, if any (see upstreamOf);
// and, when api is not nil, to the API with its credential.
func StartProxy(sock string, allow, environ []string, api *API) (*Proxy, error) {
	via, err := upstreamOf(environ)
	if err != nil {
		return nil, err
	}
	var base *url.URL
	if api != nil {
		base, err = url.Parse(api.Base)
		if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
			return nil, fmt.Errorf("sandboxnet: the API's base %q is not an http or https URL", api.Base)
		}
	}
	// A socket's path is at most 107 bytes, and a run's directory under a
	// state home can be longer: the socket is made through the open
	// directory's descriptor, which the kernel resolves as the directory.
	d, err := os.Open(filepath.Dir(sock))
	if err != nil {
		return nil, fmt.Errorf("sandboxnet: the API proxy: %w", err)
	}
	ln, err := net.Listen("unix", fmt.Sprintf("/proc/self/fd/%d/%s", d.Fd(), filepath.Base(sock)))
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("sandboxnet: the API proxy: %w", err)
	}
	quiet := log.New(io.Discard, "", 0)
	p := &Proxy{allow: allow, via: via, dir: d, ln: ln, api: api}
	transport := &http.Transport{
		Proxy:       func(r *http.Request) (*url.URL, error) { return via.proxy(r.URL.Scheme, r.URL.Hostname()), nil },
		DialContext: (&net.Dialer{Timeout: dialTimeout}).DialContext,
		// A kept connection the API has just closed fails a POST,
		// which is not retried: the agent would see a 502 and send
		// its turn again. One connection a request.
		DisableKeepAlives: true,
	}
	p.forward = &httputil.ReverseProxy{
		// The request is already absolute (http://host:port/path): it
		// goes where it says, once ServeHTTP has allowed that.
		Rewrite:       func(*httputil.ProxyRequest) {},
		Transport:     transport,
		FlushInterval: -1, // the API streams its answer
		ErrorLog:      quiet,
	}
	if api != nil {
		p.toAPI = &httputil.ReverseProxy{
			Rewrite: func(r *httputil.ProxyRequest) {
				r.Out.URL.Scheme, r.Out.URL.Host, r.Out.Host = base.Scheme, base.Host, base.Host
				r.Out.Header.Del("Proxy-Authorization")
				for _, h := range api.Drop {
					r.Out.Header.Del(h)
				}
				if api.Header != "" {
					r.Out.Header.Set(api.Header, api.Value)
				}
			},
			Transport:     transport,
			FlushInterval: -1,
			ErrorLog:      quiet,
		}
	}
	p.srv = &http.Server{Handler: p, ReadHeaderTimeout: time.Minute, ErrorLog: quiet}
	// The agent's side too: a request sent on a kept connection as it
	// closes is sent again by the agent's client, and the API hears the
	// same turn twice. One connection a request, over loopback.
	p.srv.SetKeepAlivesEnabled(false)
	go p.srv.Serve(ln)
	return p, nil
}

// Close stops the proxy and removes its socket.
func (p *Proxy) Close() error {
	err := p.srv.Close()
	// The server closes only the listeners it serves, and Serve may not
	// have begun: the socket is removed here, whichever did.
	p.ln.Close()
	p.dir.Close()
	return err
}

func (p *Proxy) allowed(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	return err == nil && slices.Contains(p.allow, net.JoinHostPort(strings.ToLower(host), port))
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	const refused = "omega-monitor: the audit sandbox reaches only the agent's API\n"
	if r.Method != http.MethodConnect && p.toAPI != nil && (r.URL.Host == "" || slices.Contains(p.api.Local, r.URL.Host)) {
		// The agent's base URL: a request of its own (/v1/messages), or
		// the same sent through its HTTP_PROXY, which is this proxy.
		p.toAPI.ServeHTTP(w, r)
		return
	}
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
	if p.toAPI != nil && slices.Contains(p.api.Local, r.Host) {
		// A client that tunnels even to a plain http:// URL (Gemini
		// CLI's): the tunnel leads to the API's route here.
		p.tunnelToAPI(w)
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

// tunnelToAPI answers a CONNECT to the proxy's own address: the tunnel's
// requests, plain HTTP, go to the API's route as the others do.
func (p *Proxy) tunnelToAPI(w http.ResponseWriter) {
	c, buf, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		c.Close()
		return
	}
	// What the client sent after its request line, already read, then
	// the connection itself: not through the hijacked server's reader.
	b, _ := buf.Reader.Peek(buf.Reader.Buffered())
	r := io.MultiReader(bytes.NewReader(slices.Clone(b)), c)
	srv := &http.Server{Handler: p.toAPI, ReadHeaderTimeout: time.Minute, ErrorLog: p.srv.ErrorLog}
	// One request a tunnel, as on the proxy's own connections: the
	// client opens a new tunnel for the next.
	srv.SetKeepAlivesEnabled(false)
	srv.Serve(&oneConn{conn: &bufferedConn{Conn: c, r: r}, closed: make(chan struct{})})
}

// bufferedConn is a hijacked connection whose first bytes were read
// already.
type bufferedConn struct {
	net.Conn
	r io.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// oneConn is a listener of one connection: Accept hands it out once, then
// waits for it to close and says the listener is done, so that a server's
// Serve on it ends with its connection.
type oneConn struct {
	conn   net.Conn
	once   sync.Once
	given  bool
	closed chan struct{}
}

func (l *oneConn) Accept() (net.Conn, error) {
	if !l.given {
		l.given = true
		return &closeNotify{Conn: l.conn, l: l}, nil
	}
	<-l.closed
	return nil, net.ErrClosed
}

func (l *oneConn) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *oneConn) Addr() net.Addr { return l.conn.LocalAddr() }

// closeNotify closes its listener with itself.
type closeNotify struct {
	net.Conn
	l *oneConn
}

func (c *closeNotify) Close() error {
	err := c.Conn.Close()
	c.l.Close()
	return err
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
			return upstream{}, fmt.Errorf("sandboxnet: the sandbox reaches the API through an http:// proxy only; %s is %s", v.name, shownProxy(raw))
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

// shownProxy is a proxy's address as an error may say it: its scheme and
// host, never the user and password it may carry.
func shownProxy(raw string) string {
	p, err := url.Parse(raw)
	if err != nil || p.Scheme == "" {
		return "not a URL"
	}
	return strconv.Quote(p.Scheme + "://" + p.Host)
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
		return nil, fmt.Errorf("sandboxnet: the proxy %s answered %s", p.Host, resp.Status)
	}
	c.SetDeadline(time.Time{})
	return c, nil
}

// lookup returns the value of name in environ, the last one winning as in
// exec.
func lookup(environ []string, name string) string {
	v := ""
	for _, kv := range environ {
		if n, val, ok := strings.Cut(kv, "="); ok && n == name {
			v = val
		}
	}
	return v
}
