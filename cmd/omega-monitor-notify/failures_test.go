package main

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/fakeapi"
	"github.com/omega-monitor/omega-monitor/internal/notify"
)

// TestMain lets the test binary be the command: with OMEGA_NOTIFY_AS_COMMAND=1
// it runs run() on its arguments and exits. A case that needs a process of
// its own (Go reads the proxy settings and the trusted roots once a
// process) runs the real command that way, with no build step.
func TestMain(m *testing.M) {
	if os.Getenv("OMEGA_NOTIFY_AS_COMMAND") == "1" {
		os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv))
	}
	os.Exit(m.Run())
}

// The ways a channel's server fails, and the good case.
const (
	modeRefuse = "refuse" // nothing listens: connection refused
	modeDNS    = "dns"    // the proxy cannot resolve the host: CONNECT answered 502
	modeHang   = "hang"   // the request is read and never answered
	mode5xx    = "5xx"    // 503 with an HTML page, as a load balancer says
	modeHTML   = "html"   // 200 with an HTML page, where an API answers JSON
	modeTLS    = "tls"    // a certificate the client does not trust
	modeOK     = "ok"     // the answer of a delivery
)

var modes = []string{modeRefuse, modeDNS, modeHang, mode5xx, modeHTML, modeTLS, modeOK}

// A failService is a service of docs/alerts.md's "Other channels" as the
// failure table drives it.
type failService struct {
	name string
	// url is the channel's line, its server at host (host:port; "" for a
	// service whose API host is its own, reached through the proxy); https
	// when tls.
	url func(host string, tls bool) string
	// ok answers a request as the service does when it takes the message.
	ok http.HandlerFunc
	// htmlDelivers: a 200 with an HTML page is a delivery, because the
	// service's answer to a delivery is its status alone (a webhook that
	// sends back no body worth reading), and the answer came over TLS
	// checked for the service's own host, so it is the service's.
	htmlDelivers bool
	// secrets are the parts of the line no output may hold.
	secrets []string
}

func (s failService) direct() bool { return s.url("H", false) != s.url("", false) }

// jsonOK answers body as JSON.
func jsonOK(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}
}

func statusOK(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

func scheme(tls bool, secure, plain string) string {
	if tls {
		return secure
	}
	return plain
}

var failServices = []failService{
	{
		name: "telegram",
		url: func(string, bool) string {
			return "telegram://123456789:AAHSECRETtelegram_token-1@telegram?chats=@omega"
		},
		ok: func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			if r.URL.Path != "/bot123456789:AAHSECRETtelegram_token-1/sendMessage" {
				w.WriteHeader(http.StatusNotFound)
				io.WriteString(w, `{"ok":false,"error_code":404,"description":"Not Found"}`)
				return
			}
			io.WriteString(w, `{"ok":true,"result":{"message_id":7,"chat":{"id":-100,"type":"channel"},"text":"x"}}`)
		},
		secrets: []string{"AAHSECRETtelegram_token-1"},
	},
	{
		name:    "slack",
		url:     func(string, bool) string { return "slack://hook:T0AAAAAAA-B0BBBBBBB-SECRETslackWebhook123456@webhook" },
		ok:      statusOK(http.StatusOK, "ok"),
		secrets: []string{"SECRETslackWebhook123456"},
	},
	{
		name:         "discord",
		url:          func(string, bool) string { return "discord://SECRETdiscordToken@123456789012345678" },
		ok:           statusOK(http.StatusNoContent, ""),
		htmlDelivers: true,
		secrets:      []string{"SECRETdiscordToken", "123456789012345678"},
	},
	{
		name: "pushover",
		url: func(string, bool) string {
			return "pushover://shoutrrr:aSECRETpushoverToken@uSECRETpushoverUser/?devices=phone"
		},
		ok:           jsonOK(`{"status":1,"request":"5042853c-402d-4a18-abcb-168734a801de"}`),
		htmlDelivers: true,
		secrets:      []string{"aSECRETpushoverToken", "uSECRETpushoverUser"},
	},
	{
		name: "teams",
		url: func(string, bool) string {
			return "teams://11111111-4444-4444-8444-cccccccccccc@22222222-4444-4444-8444-cccccccccccc/33333301222222222233333333333344/44444444-4444-4444-8444-cccccccccccc/SECRETteams?host=omega.webhook.office.com"
		},
		ok:           statusOK(http.StatusOK, "1"),
		htmlDelivers: true,
		secrets:      []string{"SECRETteams", "33333301222222222233333333333344"},
	},
	{
		name: "ntfy",
		url: func(host string, tls bool) string {
			return "ntfy://omega:pwSECRETntfy@" + host + "/SECRETtopic" + scheme(tls, "", "?disabletls=yes")
		},
		ok:      jsonOK(`{"id":"sPs71M8A2T","time":1700000000,"event":"message","topic":"t","message":"m"}`),
		secrets: []string{"pwSECRETntfy", "SECRETtopic"},
	},
	{
		name: "gotify",
		url: func(host string, tls bool) string {
			return "gotify://" + host + "/ASECRETgotify12" + scheme(tls, "", "?disabletls=yes")
		},
		ok:      jsonOK(`{"id":25,"appid":5,"message":"m","title":"t","priority":0,"date":"2024-01-01T00:00:00Z"}`),
		secrets: []string{"ASECRETgotify12"},
	},
	{
		name: "generic",
		url: func(host string, tls bool) string {
			return "generic+" + scheme(tls, "https", "http") + "://" + host + "/in/SECRETgeneric?t=SECRETq"
		},
		ok:           statusOK(http.StatusOK, ""),
		htmlDelivers: true,
		secrets:      []string{"SECRETgeneric", "SECRETq"},
	},
	{
		name: "matrix",
		url: func(host string, tls bool) string {
			return "matrix://omega:pwSECRETmatrix@" + host + "/?rooms=!room:example.com" + scheme(tls, "", "&disableTLS=yes")
		},
		ok: func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			switch p := r.URL.Path; {
			case p == "/_matrix/client/r0/login" && r.Method == http.MethodGet:
				io.WriteString(w, `{"flows":[{"type":"m.login.password"}]}`)
			case p == "/_matrix/client/r0/login":
				io.WriteString(w, `{"access_token":"tok","home_server":"example.com","user_id":"@omega:example.com"}`)
			case strings.HasPrefix(p, "/_matrix/client/r0/join/"):
				io.WriteString(w, `{"room_id":"!room:example.com"}`)
			case strings.HasSuffix(p, "/send/m.room.message"):
				io.WriteString(w, `{"event_id":"$ev"}`)
			default:
				w.WriteHeader(http.StatusNotFound)
				io.WriteString(w, `{"errcode":"M_UNRECOGNIZED","error":"Unrecognized request"}`)
			}
		},
		secrets: []string{"pwSECRETmatrix"},
	},
	{
		name: "mattermost",
		url: func(host string, tls bool) string {
			return "mattermost://" + host + "/SECRETmattermostHook" + scheme(tls, "", "?disabletls=yes")
		},
		ok:           statusOK(http.StatusOK, "ok"),
		htmlDelivers: true,
		secrets:      []string{"SECRETmattermostHook"},
	},
	{
		name: "smtp",
		url: func(host string, _ bool) string {
			return "smtp://omega:pwSECRETsmtp@" + host + "/?from=omega@example.com&to=me@example.com"
		},
		secrets: []string{"pwSECRETsmtp"},
	},
}

// A failCase is one service in one mode, and what the command said.
type failCase struct {
	svc       failService
	mode      string
	url       string
	code      int
	out, errs string
}

// delivered is what the table shows for the case.
func (c *failCase) delivered() string {
	if c.code == 0 && strings.HasPrefix(c.out, "delivered: ") {
		return "delivered"
	}
	return "not delivered"
}

// TestEveryChannelFailsWhenItsServerDoes: for each service of the docs'
// "Other channels", a server that refuses, cannot be resolved, hangs,
// answers 5xx, answers a page where its API answers JSON, or presents a
// certificate the client does not trust is "not delivered" (exit 1, so
// that the deliverer tries again), saying why and no secret of the line;
// the service's own answer of a delivery is "delivered". Each case runs
// the real command, send --channel, as the deliverer does, in a process of
// its own: the services that hard-code their API's host reach it through
// an HTTPS proxy of the test's, which is every host behind it, with
// certificates of a CA the process trusts through SSL_CERT_FILE; the others
// are pointed at a server of the test's on loopback.
func TestEveryChannelFailsWhenItsServerDoes(t *testing.T) {
	t.Parallel()
	trusted, untrusted := newTestCA(t), newTestCA(t)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, trusted.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	closed := closedAddr(t)

	var cases []*failCase
	for _, s := range failServices {
		for _, m := range modes {
			c := &failCase{svc: s, mode: m}
			switch {
			case m == modeDNS && s.direct():
				continue // its host is a loopback address: there is no name to resolve
			case m == modeHTML && s.name == "smtp":
				continue // no HTTP
			}
			cases = append(cases, c)
		}
	}

	// The servers are set up here, and the commands run side by side, a
	// few at a time: most of each is waiting (a hang is waited out), and
	// the machine may have two cores.
	sem := make(chan struct{}, 12)
	var wg sync.WaitGroup
	for _, c := range cases {
		proxy, args := setUpFailCase(t, c, trusted, untrusted, closed)
		timeout := "3"
		if c.mode == modeHang {
			timeout = "1"
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			c.code, c.out, c.errs = runNotify(proxy, caFile, timeout, args...)
		}()
	}
	wg.Wait()

	t.Logf("what send --channel said, service by failure:\n%s", failTable(cases))
	for _, c := range cases {
		t.Run(c.svc.name+"/"+c.mode, func(t *testing.T) {
			want := "not delivered"
			if c.mode == modeOK || c.mode == modeHTML && c.svc.htmlDelivers {
				want = "delivered"
			}
			if diff := cmp.Diff(want, c.delivered()); diff != "" {
				t.Errorf("(-want +got):\n%s\nexit %d; stdout: %s\nstderr: %s", diff, c.code, c.out, c.errs)
			}
			wantCode := 0
			if want != "delivered" {
				wantCode = 1
				prefix := "not delivered: channel line 1 (" + c.svc.name
				if !strings.HasPrefix(c.out, prefix) {
					t.Errorf("stdout does not start %q: %s", prefix, c.out)
				}
			}
			if strings.Count(c.out, "\n") != 1 || !strings.HasSuffix(c.out, "\n") {
				t.Errorf("not one line (the deliverer reads the last): %q", c.out)
			}
			if c.code != wantCode {
				t.Errorf("exit %d, want %d", c.code, wantCode)
			}
			for _, s := range c.svc.secrets {
				if strings.Contains(c.out+c.errs, s) {
					t.Errorf("a secret of the line, %q, in what was said: %s%s", s, c.out, c.errs)
				}
			}
		})
	}
}

// setUpFailCase starts the case's server, writes its channels file, and
// returns the proxy and the command line that send to it.
func setUpFailCase(t *testing.T, c *failCase, trusted, untrusted *testCA, closed string) (proxy string, args []string) {
	app := failHandler(c.mode, c.svc.ok)
	proxy = "http://" + closed // a proxy that is down: every proxied service is refused
	host := closed
	switch {
	case c.svc.name == "smtp" && c.mode != modeRefuse:
		host = startFakeSMTP(t, c.mode, trusted, untrusted)
	case c.mode == modeRefuse:
	case c.svc.direct():
		srv := httptest.NewUnstartedServer(app)
		srv.Config.ErrorLog = quiet // the failed handshakes are the case's
		if c.mode == modeTLS {
			srv.TLS = untrusted.serverConfig()
			srv.StartTLS()
		} else {
			srv.Start()
		}
		t.Cleanup(srv.Close)
		host = srv.Listener.Addr().String()
	default:
		ca := trusted
		if c.mode == modeTLS {
			ca = untrusted
		}
		proxy = startProxy(t, ca, c.mode == modeDNS, app)
	}
	c.url = c.svc.url(host, c.mode == modeTLS)
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "channels"), []byte(c.url+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	chans, bad := notify.Parse([]byte(c.url), "channels")
	if len(chans) != 1 {
		t.Fatalf("%s: the line is bad: %v", c.svc.name, bad)
	}
	return proxy, []string{"send", "--home", home, "--channel", chans[0].ID()}
}

// theAlert is what the tests send: an alert as the outbox holds it.
const theAlert = "<b>omega-monitor</b>: the agent in <code>work</code> asks a question"

// runNotify runs the command in a process of its own, with proxy as its
// HTTP and HTTPS proxy, the CA of caFile as its only trusted one, one try
// of timeout seconds, and theAlert on its standard input.
func runNotify(proxy, caFile, timeout string, args ...string) (code int, stdout, stderr string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(withoutProxies(os.Environ()),
		"OMEGA_NOTIFY_AS_COMMAND=1",
		"OMEGA_NOTIFY_TRIES=1",
		"OMEGA_NOTIFY_TIMEOUT="+timeout,
		"HTTPS_PROXY="+proxy,
		"HTTP_PROXY="+proxy,
		"SSL_CERT_FILE="+caFile,
	)
	cmd.Stdin = strings.NewReader(theAlert)
	var out, errs strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errs
	err := cmd.Run()
	if err != nil {
		code = -1
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		}
	}
	return code, out.String(), errs.String()
}

// TestSendKeepsWhatATelegramChannelDidNotTake: send, as install
// --test-alert and a run without the deliverer use it, says a telegram://
// channel whose API answered a page "not delivered", keeps the alert in
// alert-failed.log with why, and records the channel as given up; the
// channel beside it that took the alert is recorded as having it. A second
// run with the same record sends to neither.
func TestSendKeepsWhatATelegramChannelDidNotTake(t *testing.T) {
	t.Parallel()
	trusted := newTestCA(t)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, trusted.PEM, 0o600); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	hits := 0
	count := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			hits++
			mu.Unlock()
			h.ServeHTTP(w, r)
		})
	}
	proxy := startProxy(t, trusted, false, count(failHandler(mode5xx, nil)))
	hook := httptest.NewServer(count(statusOK(http.StatusOK, "")))
	t.Cleanup(hook.Close)
	home := t.TempDir()
	text := "telegram://123456789:AAHSECRETtelegram_token-1@telegram?chats=@omega\n" +
		"generic+" + hook.URL + "/in/SECRETgeneric\n"
	if err := os.WriteFile(filepath.Join(home, "channels"), []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	chans, _ := notify.Parse([]byte(text), "channels")
	record := filepath.Join(home, "NAME.alert.sent")

	code, out, errs := runNotify(proxy, caFile, "3", "send", "--home", home, "--record", record)
	if code != 0 {
		t.Fatalf("exit %d: %s%s", code, out, errs)
	}
	want := "not delivered: channel line 1 (telegram): HTTP 503 Service Unavailable, and not the Bot API's answer (text/html) (1 try)\n" +
		"delivered: " + chans[1].Name() + "\n"
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("send (-want +got):\n%s", diff)
	}
	kept, err := os.ReadFile(filepath.Join(home, "alert-failed.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(kept), " · not delivered to channel line 1 (telegram): HTTP 503 Service Unavailable") ||
		!strings.Contains(string(kept), theAlert) || strings.Contains(string(kept), "SECRET") {
		t.Errorf("alert-failed.log:\n%s", kept)
	}
	rec, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	// In the order the sends ended: side by side, either first.
	got := strings.Split(strings.TrimSpace(string(rec)), "\n")
	slices.Sort(got)
	wantRec := []string{chans[0].ID() + " gave-up", chans[1].ID() + " delivered"}
	slices.Sort(wantRec)
	if diff := cmp.Diff(wantRec, got); diff != "" {
		t.Errorf("the record (-want +got):\n%s", diff)
	}

	mu.Lock()
	before := hits
	mu.Unlock()
	_, out, _ = runNotify(proxy, caFile, "3", "send", "--home", home, "--record", record)
	want = "had it already: channel line 1 (telegram)\nhad it already: " + chans[1].Name() + "\n"
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("send again (-want +got):\n%s", diff)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits != before {
		t.Errorf("sent again: %d requests, then %d", before, hits)
	}
}

// failTable is the cases as a table, a service a row.
func failTable(cases []*failCase) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%-11s", "")
	for _, m := range modes {
		fmt.Fprintf(&b, " %-14s", m)
	}
	b.WriteString("\n")
	for _, s := range failServices {
		fmt.Fprintf(&b, "%-11s", s.name)
		for _, m := range modes {
			said := "-"
			for _, c := range cases {
				if c.svc.name == s.name && c.mode == m {
					said = c.delivered()
				}
			}
			fmt.Fprintf(&b, " %-14s", said)
		}
		b.WriteString("\n")
	}
	for _, c := range cases {
		if c.mode != modeOK {
			fmt.Fprintf(&b, "%s/%s: %s", c.svc.name, c.mode, c.out)
		}
	}
	return b.String()
}

// failHandler answers as the mode says, and as ok in the good case.
func failHandler(mode string, ok http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch mode {
		case modeHang:
			io.Copy(io.Discard, r.Body)
			<-r.Context().Done()
		case mode5xx:
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, "<html>\n<head><title>503 Service Temporarily Unavailable</title></head>\n<body>\n<h1>503 Service Temporarily Unavailable</h1>\n</body>\n</html>\n")
		case modeHTML:
			w.Header().Set("Content-Type", "text/html")
			io.WriteString(w, "<html>\n<body>\n<p>Welcome! Sign in to use this network.</p>\n</body>\n</html>\n")
		default:
			ok(w, r)
		}
	})
}

// quiet is a server's log of the failures the test makes.
var quiet = log.New(io.Discard, "", 0)

func withoutProxies(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "ALL_PROXY", "SSL_CERT_FILE", "SSL_CERT_DIR":
			continue
		}
		out = append(out, kv)
	}
	return out
}

// closedAddr is a loopback address where nothing listens.
func closedAddr(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// A testCA is the test's own CA, whose PEM SSL_CERT_FILE names for the
// trusted one.
type testCA struct{ *fakeapi.CA }

func newTestCA(t *testing.T) *testCA {
	ca, err := fakeapi.NewCA()
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{ca}
}

// serverConfig serves a certificate of the CA's for the name the client
// asks for (127.0.0.1 when it names none, as for an address).
func (ca *testCA) serverConfig() *tls.Config {
	return &tls.Config{GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
		name := hello.ServerName
		if name == "" {
			name = "127.0.0.1"
		}
		return ca.Leaf(name)
	}}
}

// startProxy starts an HTTPS proxy on loopback that is every host behind
// it: it answers CONNECT to any host (502 when unresolved, as a proxy
// whose resolver fails), ends TLS there with a certificate of ca, and
// serves app. It returns its URL.
func startProxy(t *testing.T, ca *testCA, unresolved bool, app http.Handler) string {
	inner := &http.Server{Handler: app, TLSConfig: ca.serverConfig(), ErrorLog: quiet}
	conns := &chanListener{conns: make(chan net.Conn), done: make(chan struct{})}
	go inner.Serve(conns)
	t.Cleanup(func() { inner.Close() })
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodConnect {
			app.ServeHTTP(w, r) // a plain http:// request through the proxy
			return
		}
		if unresolved {
			http.Error(w, "no such host", http.StatusBadGateway)
			return
		}
		conn, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n")
		select {
		case conns.conns <- tls.Server(conn, inner.TLSConfig):
		case <-conns.done:
			conn.Close()
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// A chanListener hands a server the connections sent on conns.
type chanListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

// startFakeSMTP starts a mail server on loopback that fails as mode says:
// hang (it never greets), 5xx (it takes the message and then refuses it,
// 554), tls (its STARTTLS certificate is untrusted's); ok takes the message
// over STARTTLS with a certificate of trusted and PLAIN authentication. It
// returns its address.
func startFakeSMTP(t *testing.T, mode string, trusted, untrusted *testCA) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	conf := trusted.serverConfig()
	if mode == modeTLS {
		conf = untrusted.serverConfig()
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				if mode == modeHang {
					io.Copy(io.Discard, conn) // until the client gives up
					return
				}
				smtpSession(conn, mode, conf)
			}()
		}
	}()
	return ln.Addr().String()
}

// smtpSession talks SMTP on conn, as much of it as the client uses.
func smtpSession(conn net.Conn, mode string, conf *tls.Config) {
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	r, w := bufio.NewReader(conn), conn
	say := func(s string) { io.WriteString(w, s+"\r\n") }
	say("220 mail.example.com ESMTP")
	secure := false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		verb, _, _ := strings.Cut(strings.ToUpper(strings.TrimSpace(line)), " ")
		switch verb {
		case "EHLO", "HELO":
			if secure {
				say("250-mail.example.com\r\n250 AUTH PLAIN")
			} else {
				say("250-mail.example.com\r\n250 STARTTLS")
			}
		case "STARTTLS":
			say("220 go ahead")
			tc := tls.Server(conn, conf)
			if tc.Handshake() != nil {
				return
			}
			r, w, secure = bufio.NewReader(tc), tc, true
		case "AUTH":
			say("235 2.7.0 authenticated")
		case "MAIL", "RCPT", "RSET", "NOOP":
			say("250 2.1.0 ok")
		case "DATA":
			say("354 go ahead")
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
			}
			if mode == mode5xx {
				say("554 5.7.1 message refused")
			} else {
				say("250 2.0.0 queued")
			}
		case "QUIT":
			say("221 2.0.0 bye")
			return
		default:
			say("502 5.5.2 not understood")
		}
	}
}
