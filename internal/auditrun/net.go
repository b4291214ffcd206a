package auditrun

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/companion"
	"github.com/omega-monitor/omega-monitor/internal/procgroup"
)

// An auditor inside bubblewrap has no network of its own (--unshare-net):
// its only way out is an HTTP proxy that audit run serves outside the
// sandbox on a unix socket, which connects to the agent's API endpoints and
// to nothing else. Inside, a forwarder runs first: it listens on the
// loopback address the agent's HTTPS_PROXY and HTTP_PROXY name, passes each
// connection to the socket, and runs the agent. Both are the verbs of the
// helper omega-monitor-sandbox (Config.Helper), whose package sandboxnet
// links net/http and TLS; this package only plans them, so that no start of
// omega-monitor, which imports it, pays for them.

// HelperName is the helper's executable, installed beside omega-monitor.
const HelperName = companion.Sandbox

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

// proxyArgv is the command line of the API proxy, outside the sandbox: its
// socket, then the endpoints it lets through; -api when the first line of
// its input is the agent's API and credential (an apiRoute).
func proxyArgv(helper, sock string, allow []string, withAPI bool) []string {
	argv := []string{helper, "proxy"}
	if withAPI {
		argv = append(argv, "-api")
	}
	return append(append(argv, sock), allow...)
}

// forwardArgv is the command line that runs first inside the sandbox, the
// agent's after it.
func forwardArgv(helper string) []string {
	return []string{helper, "forward", sandboxProxy, sandboxSocket}
}

// proxyStart bounds the proxy's start: it binds a socket and says so.
const proxyStart = 10 * time.Second

// An apiProxy is the running proxy: the helper's process, in a process
// group of its own, for the length of the audit.
type apiProxy struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	cancel context.CancelFunc
}

// startAPIProxy runs the helper's proxy on the unix socket sock for the
// endpoints allow, and, when route is not nil, for the agent's API with its
// credential; it returns once the proxy says it listens. It gets the
// operator's proxy variables from environ, and no other. Its standard
// input is a pipe from this process: the route is its first line (neither
// the command line nor the environment, which another process could read),
// and the proxy ends when this process does, however that ends.
func startAPIProxy(helper, sock string, allow, environ []string, route *apiRoute) (*apiProxy, error) {
	ctx, cancel := context.WithCancel(context.Background())
	argv := proxyArgv(helper, sock, allow, route != nil)
	cmd := procgroup.Command(ctx, 2*time.Second, argv[0], argv[1:]...)
	cmd.Env = []string{} // not nil, which would be this process's own
	for _, kv := range environ {
		if name, _, _ := strings.Cut(kv, "="); slices.Contains(proxyEnv, name) {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	stderr := &capped{max: 4 << 10}
	cmd.Stderr = stderr
	p := &apiProxy{cmd: cmd, cancel: cancel}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		cancel()
		return nil, fmt.Errorf("auditrun: the API proxy: %w", err)
	}
	p.stdin = stdin
	stdout, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		stdin.Close()
		cancel()
		return nil, fmt.Errorf("auditrun: the API proxy: %w", err)
	}
	if route != nil {
		b, _ := json.Marshal(route)
		// The pipe holds far more than a line; a proxy that died
		// already says so below.
		p.stdin.Write(append(b, '\n'))
	}
	said := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadString('\n')
		said <- line
	}()
	var line string
	select {
	case line = <-said:
	case <-time.After(proxyStart):
		line = "no word after " + proxyStart.String()
	}
	if line == "listening on "+sock+"\n" {
		return p, nil
	}
	p.Close()
	return nil, fmt.Errorf("auditrun: the API proxy did not start: %s", lastLine(string(stderr.buf), strings.TrimSpace(cmp.Or(line, "it exited"))))
}

// Close ends the proxy: its whole process group is killed.
func (p *apiProxy) Close() {
	p.stdin.Close()
	p.cancel()
	p.cmd.Wait() // killed: its error says so, and nothing else
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
		hp, ok := endpoint(strings.TrimSpace(raw))
		if !ok {
			return nil, fmt.Errorf("auditrun: the API base URL %q is not an http or https URL", raw)
		}
		if !slices.Contains(out, hp) {
			out = append(out, hp)
		}
	}
	return out, nil
}

// Characters of a URL's parts, as endpoint reads them.
const (
	hexDigits = "0123456789abcdefABCDEF"
	hostChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_"
	userChars = hostChars + ":~!$&'()*+,;="
)

// endpoint returns the host:port of the http or https URL raw as net/url
// reads it (the host in lower case; the scheme's port when it names none),
// or false. It reads by hand, and more strictly: a host is a name of
// letters, digits, '.', '-' and '_', or an IPv6 address in brackets, and
// the user information holds no escape. net/url would add what it links
// (net/netip, unique) to omega-monitor, which imports this package and
// starts once a poll; FuzzEndpoint holds the two to the same answers.
func endpoint(raw string) (string, bool) {
	scheme, rest, ok := strings.Cut(raw, "://")
	port := map[string]string{"http": "80", "https": "443"}[strings.ToLower(scheme)]
	if !ok || port == "" || strings.ContainsFunc(raw, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", false
	}
	authority, path := rest, ""
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, path = rest[:i], rest[i:]
	}
	// net/url refuses an escape in the path or fragment that is not one.
	for i := strings.IndexByte(path, '%'); i >= 0; i = strings.IndexByte(path, '%') {
		if i+2 >= len(path) || !only(path[i+1:i+3], hexDigits) {
			return "", false
		}
		path = path[i+3:]
	}
	if i := strings.LastIndex(authority, "@"); i >= 0 {
		if !only(authority[:i], userChars) {
			return "", false
		}
		authority = authority[i+1:]
	}
	host, colonPort := authority, ""
	if ip, ok := strings.CutPrefix(authority, "["); ok {
		end := strings.LastIndex(ip, "]")
		if end < 0 || !isIPv6(ip[:end]) {
			return "", false
		}
		host, colonPort = "["+ip[:end]+"]", ip[end+1:]
	} else {
		if i := strings.LastIndex(authority, ":"); i >= 0 {
			host, colonPort = authority[:i], authority[i:]
		}
		if host == "" || !only(host, hostChars) {
			return "", false
		}
	}
	if colonPort != "" {
		if !strings.HasPrefix(colonPort, ":") || !only(colonPort[1:], "0123456789") {
			return "", false
		}
		if colonPort != ":" {
			port = colonPort[1:]
		}
	}
	return strings.ToLower(host) + ":" + port, true
}

// only reports whether every byte of s is one of chars.
func only(s, chars string) bool { return strings.Trim(s, chars) == "" }

// isIPv6 reports whether s is an IPv6 address written as groups of hex
// digits, with at most one :: (no embedded IPv4 address, no zone).
func isIPv6(s string) bool {
	head, tail, ellipsis := strings.Cut(s, "::")
	if strings.Contains(tail, "::") {
		return false
	}
	groups := 0
	for _, part := range []string{head, tail} {
		if part == "" {
			continue
		}
		for _, g := range strings.Split(part, ":") {
			if len(g) < 1 || len(g) > 4 || !only(g, hexDigits) {
				return false
			}
			groups++
		}
	}
	if ellipsis {
		return groups <= 7
	}
	return groups == 8
}

// baseURLs returns the values of the keys ending in base_url in a Codex
// setting KEY=VALUE: openai_base_url=…, model_providers.x.base_url="…", or
// a provider's inline table {…, base_url = "…", …}. A value Codex cannot
// parse as TOML it takes as a bare string, and so does this.
func baseURLs(kv string) []string { return settingValues(kv, "base_url") }

// settingValues returns the values of the keys ending in key in a Codex
// setting KEY=VALUE, as baseURLs says.
func settingValues(kv, key string) []string {
	var out []string
	rest := kv
	for {
		i := strings.Index(rest, key)
		if i < 0 {
			return out
		}
		rest = strings.TrimLeft(rest[i+len(key):], ` "'`+"\t")
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
