package auditrun

import (
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	testenv.RemoveBuilds()
	os.Exit(code)
}

// helper returns the path of omega-monitor-sandbox, building it on first
// use.
func helper(t *testing.T) string {
	t.Helper()
	return filepath.Join(testenv.Build(t, "../../cmd/"+HelperName), HelperName)
}

// viaNetURL is what endpoint answers, as net/url reads raw.
func viaNetURL(raw string) (string, bool) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return "", false
	}
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[u.Scheme]
	}
	return net.JoinHostPort(strings.ToLower(u.Hostname()), port), true
}

// endpointCases are base URLs as an operator writes them, and the ones
// endpoint refuses though net/url reads them (it is stricter), or refuses
// with it.
var endpointCases = []struct {
	raw, want string // want "" is refused
	stricter  bool   // net/url reads it
}{
	{raw: "https://api.anthropic.com", want: "api.anthropic.com:443"},
	{raw: "http://127.0.0.1:8080/", want: "127.0.0.1:8080"},
	{raw: "HTTPS://Gateway.Example.com/anthropic?x=1#top", want: "gateway.example.com:443"},
	{raw: "http://user:p4ss@llm.internal:4000/v1", want: "llm.internal:4000"},
	{raw: "http://llm_box:/v1", want: "llm_box:80"},
	{raw: "http://[::1]:9000/v1", want: "[::1]:9000"},
	{raw: "https://[2001:DB8::1]", want: "[2001:db8::1]:443"},
	{raw: "http://[1:2:3:4:5:6:7:8]:1", want: "[1:2:3:4:5:6:7:8]:1"},
	{raw: "http://[1:2:3:4:5:6:7::]", want: "[1:2:3:4:5:6:7::]:80"},
	{raw: "http://h/%41%2f", want: "h:80"},
	{raw: "gateway.example.com"},
	{raw: "ftp://example.com"},
	{raw: "http://"},
	{raw: "http:///v1"},
	{raw: "http://:8080"},
	{raw: "http://a:b:80"},
	{raw: "http://host:80x"},
	{raw: "http://[::1"},
	{raw: "http://[1:2]"},
	{raw: "http://[1:2:3:4:5:6:7:8::]"},
	{raw: "http://[127.0.0.1]"},
	{raw: "http://h/%zz"},
	{raw: "http://h#%4"},
	{raw: "http://h\n.example"},
	{raw: "http://gateway.example.com:443 "},
	{raw: "http://[fe80::1%25eth0]:80", stricter: true},
	{raw: "http://[::ffff:1.2.3.4]", stricter: true},
	{raw: "http://bücher.example", stricter: true},
	{raw: "http://a!b.example", stricter: true},
	{raw: "http://us%20er@h", stricter: true},
	{raw: "http://h/?q=%zz", stricter: true},
}

// TestEndpointAgreesWithNetURL: endpoint reads a URL as net/url does, and
// refuses what net/url refuses, and some more.
func TestEndpointAgreesWithNetURL(t *testing.T) {
	for _, tt := range endpointCases {
		got, ok := endpoint(tt.raw)
		if d := cmp.Diff(tt.want, got); d != "" || ok != (tt.want != "") {
			t.Errorf("endpoint(%q) = %q, %v (-want +got):\n%s", tt.raw, got, ok, d)
		}
		std, stdOK := viaNetURL(tt.raw)
		switch {
		case tt.stricter && !stdOK:
			t.Errorf("net/url refuses %q: it is not a case where endpoint is stricter", tt.raw)
		case !tt.stricter && (std != tt.want || stdOK != ok):
			t.Errorf("net/url reads %q as %q, %v; endpoint as %q, %v", tt.raw, std, stdOK, got, ok)
		}
	}
}

// FuzzEndpoint: whatever endpoint accepts, net/url reads the same.
func FuzzEndpoint(f *testing.F) {
	for _, tt := range endpointCases {
		f.Add(tt.raw)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		got, ok := endpoint(raw)
		if !ok {
			return
		}
		if std, stdOK := viaNetURL(raw); !stdOK || std != got {
			t.Errorf("endpoint(%q) = %q; net/url reads %q, %v", raw, got, std, stdOK)
		}
	})
}
