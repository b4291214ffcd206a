package sandboxnet

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
)

// ask sends req to the API proxy's socket and returns all it answers.
func ask(t *testing.T, sock, req string) string {
	t.Helper()
	c, err := net.Dial("unix", sock)
	assert.NilError(t, err)
	defer c.Close()
	_, err = io.WriteString(c, req)
	assert.NilError(t, err)
	b, _ := io.ReadAll(c)
	return strings.ReplaceAll(string(b), "\r", "")
}

// TestAPIProxyThroughTheOperatorsProxy: behind a proxy of the operator's,
// the sandbox's proxy reaches the API through it, with its credentials, a
// tunnel by CONNECT and plain http as an absolute request; what is not
// allowed is refused before the operator's proxy hears of it.
func TestAPIProxyThroughTheOperatorsProxy(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "the API answered "+r.URL.Path+"\n")
	}))
	defer api.Close()
	var mu sync.Mutex
	var heard []string
	operators := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		heard = append(heard, r.Method+" "+r.RequestURI+" "+r.Header.Get("Proxy-Authorization"))
		mu.Unlock()
		if r.Method != http.MethodConnect {
			io.WriteString(w, "the operator's proxy answered "+r.URL.String()+"\n")
			return
		}
		// Every tunnel leads to the fake API, whatever its name.
		up, err := net.Dial("tcp", api.Listener.Addr().String())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer up.Close()
		c, _, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		io.WriteString(c, "HTTP/1.1 200 OK\r\n\r\n")
		splice(c, up)
	}))
	defer operators.Close()

	sock := filepath.Join(t.TempDir(), "api.sock")
	p, err := StartProxy(sock, []string{"api.example:443", "api.example:80"},
		[]string{"HTTPS_PROXY=http://op:s3cret@" + operators.Listener.Addr().String(),
			"http_proxy=" + operators.Listener.Addr().String(), "NO_PROXY=direct.example"}, nil)
	assert.NilError(t, err)
	defer p.Close()

	got := ask(t, sock, "CONNECT api.example:443 HTTP/1.1\r\nHost: api.example:443\r\n\r\nGET /v1 HTTP/1.1\r\nHost: api.example\r\nConnection: close\r\n\r\n")
	assert.Assert(t, strings.HasPrefix(got, "HTTP/1.1 200 Connection established\n\nHTTP/1.1 200 OK\n"), got)
	assert.Assert(t, strings.Contains(got, "the API answered /v1"), got)
	got = ask(t, sock, "GET http://api.example/v1 HTTP/1.1\r\nHost: api.example\r\nConnection: close\r\n\r\n")
	assert.Assert(t, strings.Contains(got, "the operator's proxy answered http://api.example/v1"), got)
	for _, req := range []string{
		"CONNECT other.example:443 HTTP/1.1\r\nHost: other.example:443\r\nConnection: close\r\n\r\n",
		"GET http://other.example/ HTTP/1.1\r\nHost: other.example\r\nConnection: close\r\n\r\n",
		"GET https://api.example/v1 HTTP/1.1\r\nHost: api.example\r\nConnection: close\r\n\r\n",
		"GET /v1 HTTP/1.1\r\nHost: api.example\r\nConnection: close\r\n\r\n",
	} {
		got := ask(t, sock, req)
		assert.Assert(t, strings.HasPrefix(got, "HTTP/1.1 403 Forbidden\n"), "%q: %s", req, got)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{"CONNECT api.example:443 Basic b3A6czNjcmV0", "GET http://api.example/v1 "}
	if d := cmp.Diff(want, heard); d != "" {
		t.Errorf("what the operator's proxy heard (-want +got):\n%s", d)
	}
}

// TestAPIProxyAddsTheKey: a request to the agent's base URL (the proxy's
// own address, as a request of its own or through HTTP_PROXY) reaches the
// API with the real key in place of the agent's placeholder, and its path
// and body as sent; a request elsewhere gets no key.
func TestAPIProxyAddsTheKey(t *testing.T) {
	var mu sync.Mutex
	var heard []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		heard = append(heard, r.Method+" "+r.Host+r.URL.Path+" key="+r.Header.Get("x-api-key")+" auth="+r.Header.Get("Authorization")+" body="+string(body))
		mu.Unlock()
		io.WriteString(w, "the API answered\n")
	}))
	defer api.Close()
	host := api.Listener.Addr().String()
	sock := filepath.Join(t.TempDir(), "api.sock")
	p, err := StartProxy(sock, []string{host}, nil, &API{Base: api.URL, Local: []string{"127.0.0.1:3128"},
		Header: "x-api-key", Value: "sk-real", Drop: []string{"x-api-key", "authorization"}})
	assert.NilError(t, err)
	defer p.Close()
	for _, req := range []string{
		"POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1:3128\r\nx-api-key: placeholder\r\nAuthorization: Bearer placeholder\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhi",
		"POST http://127.0.0.1:3128/v1/messages HTTP/1.1\r\nHost: 127.0.0.1:3128\r\nx-api-key: placeholder\r\nContent-Length: 2\r\nConnection: close\r\n\r\nho",
		// A tunnel to the proxy's own address, as Gemini CLI's client
		// opens one even for http://.
		"CONNECT 127.0.0.1:3128 HTTP/1.1\r\nHost: 127.0.0.1:3128\r\n\r\nPOST /v1beta/models/m:generateContent HTTP/1.1\r\nHost: 127.0.0.1:3128\r\nAuthorization: Bearer placeholder\r\nContent-Length: 2\r\nConnection: close\r\n\r\nhu",
		// Straight to the API's own address: allowed, but no key.
		"GET http://" + host + "/v1/models HTTP/1.1\r\nHost: " + host + "\r\nx-api-key: placeholder\r\nConnection: close\r\n\r\n",
	} {
		got := ask(t, sock, req)
		got = strings.TrimPrefix(got, "HTTP/1.1 200 Connection established\n\n")
		assert.Assert(t, strings.HasPrefix(got, "HTTP/1.1 200 OK\n") && strings.Contains(got, "the API answered"), "%q: %s", req, got)
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		"POST " + host + "/v1/messages key=sk-real auth= body=hi",
		"POST " + host + "/v1/messages key=sk-real auth= body=ho",
		"POST " + host + "/v1beta/models/m:generateContent key=sk-real auth= body=hu",
		"GET " + host + "/v1/models key=placeholder auth= body=",
	}
	if d := cmp.Diff(want, heard); d != "" {
		t.Errorf("what the API heard (-want +got):\n%s", d)
	}
	_, err = StartProxy(filepath.Join(t.TempDir(), "x.sock"), nil, nil, &API{Base: "api.example.com"})
	assert.Error(t, err, `sandboxnet: the API's base "api.example.com" is not an http or https URL`)
}

func TestUpstreamOf(t *testing.T) {
	via, err := upstreamOf([]string{"https_proxy=http://proxy.corp:3128", "NO_PROXY=.internal.corp, direct.example ,"})
	assert.NilError(t, err)
	tests := []struct {
		scheme, host, want string
	}{
		{"https", "api.anthropic.com", "proxy.corp:3128"},
		{"https", "API.Anthropic.com", "proxy.corp:3128"},
		{"http", "api.anthropic.com", ""}, // no HTTP_PROXY
		{"https", "llm.internal.corp", ""},
		{"https", "internal.corp", ""},
		{"https", "direct.example", ""},
		{"https", "notdirect.example", "proxy.corp:3128"},
		{"https", "127.0.0.1", ""},
		{"https", "localhost", ""},
		{"https", "::1", ""},
	}
	for _, tt := range tests {
		got := ""
		if u := via.proxy(tt.scheme, tt.host); u != nil {
			got = u.Host
		}
		assert.Equal(t, got, tt.want, "%s %s", tt.scheme, tt.host)
	}
	for _, bad := range []string{"HTTPS_PROXY=socks5://127.0.0.1:1080", "HTTP_PROXY=https://proxy.corp"} {
		_, err := upstreamOf([]string{bad})
		assert.ErrorContains(t, err, "sandboxnet: the sandbox reaches the API through an http:// proxy only")
	}
	// A proxy's password is never said, whatever is wrong with it.
	_, err = upstreamOf([]string{"HTTPS_PROXY=socks5://me:s3cret-pw@127.0.0.1:1080"})
	assert.Error(t, err, `sandboxnet: the sandbox reaches the API through an http:// proxy only; HTTPS_PROXY is "socks5://127.0.0.1:1080"`)
	via, err = upstreamOf([]string{"NO_PROXY=*", "HTTPS_PROXY=proxy.corp"})
	assert.NilError(t, err)
	assert.Assert(t, via.proxy("https", "api.openai.com") == nil)
}
