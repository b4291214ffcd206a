package auditrun

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gotest.tools/v3/assert"
	"gotest.tools/v3/fs"

	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// spy is a stand-in auditor that reports what it can reach: the operator's
// secrets, the real project, a write to its copy, its environment.
const spy = `#!/bin/bash
echo "home=$HOME pwd=$PWD"
cat "$OPERATOR/.netrc" 2>/dev/null && echo "read the operator's .netrc"
cat "$PROJECT/main.go" 2>/dev/null && echo "read the real project"
ls -A "$PROJECT" 2>/dev/null | sed 's/^/real project holds: /'
(echo x >> main.go) 2>/dev/null && echo "wrote its copy"
(echo x > new.txt) 2>/dev/null && echo "added to its copy"
echo "credentials: $(cat "$HOME/.claude/.credentials.json" 2>/dev/null)"
env | sort | sed 's/^/env: /'
`

func spyConfig(t *testing.T, isolation string) (Config, string) {
	t.Helper()
	testenv.Need(t, "bash")
	dir, _ := hostileProject(t)
	operator := fs.NewDir(t, "operator",
		fs.WithFile(".netrc", "machine example.com password hunter2\n"),
		fs.WithDir(".claude-alt", fs.WithFile(".credentials.json", `{"token":"t"}`, fs.WithMode(0o600)))).Path()
	bin := filepath.Join(fs.NewDir(t, "bin").Path(), "claude")
	assert.NilError(t, os.WriteFile(bin, []byte(spy), 0o700))
	runDir := t.TempDir()
	return Config{
		Dir: dir, RunDir: runDir, StateHome: filepath.Join(dir, ".omega", "monitor"),
		Agent: "claude", Bin: bin, Isolation: isolation, Helper: helper(t),
		KeepEnv: []string{"MY_PROVIDER_KEY"},
		Environ: []string{
			"HOME=" + operator, "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8",
			"OPERATOR=" + operator, "PROJECT=" + dir,
			"SSH_AUTH_SOCK=/tmp/ssh-agent.sock", "AWS_SECRET_ACCESS_KEY=aws", "GITHUB_TOKEN=gh",
			"NODE_OPTIONS=--require /tmp/evil.js", "OPENAI_API_KEY=not-claude's",
			"ANTHROPIC_API_KEY=sk-ant-test", "ANTHROPIC_BASE_URL=http://127.0.0.1:1",
			"CLAUDE_CONFIG_DIR=" + filepath.Join(operator, ".claude-alt"),
			"MY_PROVIDER_KEY=kept", "TMPDIR=/tmp/operator",
		},
	}, operator
}

func envOf(out string) []string {
	var env []string
	for _, l := range strings.Split(out, "\n") {
		if kv, ok := strings.CutPrefix(l, "env: "); ok {
			name, _, _ := strings.Cut(kv, "=")
			if name != "_" && name != "SHLVL" && name != "PWD" && name != "OLDPWD" {
				env = append(env, kv)
			}
		}
	}
	return env
}

// TestSandboxBwrap: inside bubblewrap the auditor reads neither the
// operator's home nor the real project, cannot change its copy, and has
// only its agent's variables and its own home.
func TestSandboxBwrap(t *testing.T) {
	testenv.Need(t, "bwrap")
	c, _ := spyConfig(t, IsolateBwrap)
	s, err := Prepare(c)
	assert.NilError(t, err)
	defer s.Remove()
	assert.Equal(t, s.Isolation, "bwrap")
	r := s.Run(c.Bin, "BRIEF", 30*time.Second)
	out := string(r.Stdout)
	t.Logf("stdout:\n%s\nstderr:\n%s", out, r.Stderr)
	assert.NilError(t, r.Err)
	for _, bad := range []string{"read the operator's .netrc", "read the real project", "real project holds", "wrote its copy", "added to its copy", "hunter2"} {
		assert.Assert(t, !strings.Contains(out, bad), "the auditor %s", bad)
	}
	assert.Assert(t, strings.Contains(out, "home="+s.Home+" pwd="+s.Tree), out)
	// No login is copied, and no key is in the environment: the key
	// variable holds the placeholder, the base URL is the sandbox's proxy,
	// which adds the key outside; a kept variable that may carry a
	// credential is not handed over.
	assert.Assert(t, strings.Contains(out, "credentials: \n"), out)
	assert.Assert(t, !strings.Contains(out, "sk-ant-test") && !strings.Contains(out, "kept"), out)
	// The proxy variables name the sandbox's way to the API, which is
	// ANTHROPIC_BASE_URL's and nothing else.
	want := []string{
		"ANTHROPIC_API_KEY=" + Placeholder, "ANTHROPIC_BASE_URL=http://127.0.0.1:3128",
		"HOME=" + s.Home, "LANG=C.UTF-8", "PATH=" + os.Getenv("PATH"),
		"TMPDIR=" + filepath.Join(c.RunDir, "tmp"),
		"HTTPS_PROXY=http://127.0.0.1:3128", "https_proxy=http://127.0.0.1:3128",
		"HTTP_PROXY=http://127.0.0.1:3128", "http_proxy=http://127.0.0.1:3128",
	}
	assert.DeepEqual(t, s.API, []string{"127.0.0.1:1"})
	got := envOf(out)
	slices.Sort(want)
	slices.Sort(got)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("the auditor's environment (-want +got):\n%s", d)
	}
	// Nothing of the run is left but what the caller keeps: no file, no
	// process of the proxy's group.
	pid := s.proxy.cmd.Process.Pid
	assert.NilError(t, s.Remove())
	left, _ := os.ReadDir(c.RunDir)
	assert.Equal(t, len(left), 0, "%v", left)
	assert.Equal(t, syscall.Kill(-pid, 0), syscall.ESRCH, "the proxy's process group outlives the sandbox")
}

// TestSandboxWithoutBwrap: with no OS sandbox the auditor still runs in
// its copy, with the throwaway home and the scrubbed environment.
func TestSandboxWithoutBwrap(t *testing.T) {
	c, _ := spyConfig(t, IsolateNone)
	s, err := Prepare(c)
	assert.NilError(t, err)
	defer s.Remove()
	assert.Equal(t, s.Isolation, "none")
	r := s.Run(c.Bin, "BRIEF", 30*time.Second)
	out := string(r.Stdout)
	assert.NilError(t, r.Err)
	assert.Assert(t, strings.Contains(out, "home="+s.Home+" pwd="+s.Tree), out)
	env := envOf(out)
	for _, gone := range []string{"SSH_AUTH_SOCK", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "NODE_OPTIONS", "OPENAI_API_KEY", "CLAUDE_CONFIG_DIR", "OPERATOR", "PROJECT"} {
		assert.Assert(t, !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, gone+"=") }), "%s reached the auditor: %q", gone, env)
	}
}

// TestSandboxRefusesBwrapWhereThereIsNone: --isolation bwrap on a machine
// without it refuses, and leaves nothing behind.
func TestSandboxRefusesBwrapWhereThereIsNone(t *testing.T) {
	c, _ := spyConfig(t, IsolateBwrap)
	c.Environ = append(c.Environ, "PATH=/nowhere")
	t.Setenv("PATH", t.TempDir())
	_, err := Prepare(c)
	assert.ErrorContains(t, err, "--isolation bwrap: bubblewrap (bwrap) is not installed")
	left, _ := os.ReadDir(c.RunDir)
	assert.Equal(t, len(left), 0, "%v", left)
}

// TestSandboxRefusesWhatItCannotProxy: without the helper, with a helper
// that is not one, or behind an operator's proxy that is not http://, a
// sandbox in bubblewrap refuses, in one line that says why, and leaves
// nothing behind.
func TestSandboxRefusesWhatItCannotProxy(t *testing.T) {
	testenv.Need(t, "bwrap")
	tests := []struct {
		helper string
		env    []string
		want   string
	}{
		{"", nil, "auditrun: the sandbox needs omega-monitor-sandbox to reach the API from inside"},
		{"/nonexistent/omega-monitor-sandbox", nil, "auditrun: the API proxy: fork/exec /nonexistent/omega-monitor-sandbox: no such file or directory"},
		{"/bin/true", nil, "auditrun: the API proxy did not start: it exited"},
		{helper(t), []string{"https_proxy=socks5://127.0.0.1:1080"}, `auditrun: the API proxy did not start: omega-monitor-sandbox: sandboxnet: the sandbox reaches the API through an http:// proxy only; HTTPS_PROXY is "socks5://127.0.0.1:1080"`},
	}
	for _, tt := range tests {
		c, _ := spyConfig(t, IsolateBwrap)
		c.Helper = tt.helper
		c.Environ = append(c.Environ, tt.env...)
		_, err := Prepare(c)
		assert.Error(t, err, tt.want)
		left, _ := os.ReadDir(c.RunDir)
		assert.Equal(t, len(left), 0, "%v", left)
	}
}

// TestAPIProxyEndsWithItsInput: the proxy's process ends by itself when
// its standard input does, as when audit run dies without stopping it.
func TestAPIProxyEndsWithItsInput(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "api.sock")
	p, err := startAPIProxy(helper(t), sock, []string{"api.example:443"}, nil, nil)
	assert.NilError(t, err)
	defer p.Close()
	_, err = os.Stat(sock)
	assert.NilError(t, err)
	p.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		assert.NilError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the proxy still runs 10s after its input ended")
	}
	_, err = os.Stat(sock)
	assert.Assert(t, os.IsNotExist(err), "the socket is left: %v", err)
}

func TestBwrapArgvShowsOnlyWhatItNames(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"home/op/.nvm/bin", "home/op/shop/bin", "state/run/home", "state/run/tmp", "state/run/tree", "opt/node/bin"} {
		assert.NilError(t, os.MkdirAll(filepath.Join(root, d), 0o700))
	}
	p := func(s string) string { return filepath.Join(root, s) }
	got := bwrapArgv(bwrapPlan{
		guard:  []string{p("home/op"), p("state"), p("home/op/shop"), p("missing"), ""},
		apart:  []string{p("state"), p("home/op/shop")},
		tools:  []string{p("home/op/.nvm/bin"), p("home/op"), p("home/op/shop/bin"), p("opt/node/bin"), "/usr/bin", "/root", "/", "relative/bin"},
		write:  []string{p("state/run/home"), p("state/run/tmp")},
		read:   p("state/run/tree"),
		sock:   p("state/run/net/api.sock"),
		helper: "/bin/omega-monitor-sandbox",
	})
	// The system's part depends on the machine: what of /usr, /lib* and
	// /etc it has.
	var sys []string
	for _, d := range systemDirs {
		if fi, err := os.Lstat(d); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			to, _ := os.Readlink(d)
			sys = append(sys, "--symlink", to, d)
		} else if err == nil {
			sys = append(sys, "--ro-bind", d, d)
		}
	}
	for _, name := range etcShown {
		if _, err := os.Stat("/etc/" + name); err == nil {
			sys = append(sys, "--ro-bind", "/etc/"+name, "/etc/"+name)
		}
	}
	for _, d := range etcHidden {
		if _, err := os.Stat(d); err == nil {
			sys = append(sys, "--tmpfs", d)
		}
	}
	want := append([]string{"bwrap", "--die-with-parent", "--new-session",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--unshare-net",
		"--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"}, sys...)
	want = append(want,
		"--ro-bind", p("opt/node/bin"), p("opt/node/bin"),
		"--ro-bind", p("home/op/.nvm/bin"), p("home/op/.nvm/bin"),
		"--ro-bind", "/bin/omega-monitor-sandbox", "/bin/omega-monitor-sandbox",
		"--bind", p("state/run/home"), p("state/run/home"), "--bind", p("state/run/tmp"), p("state/run/tmp"),
		"--ro-bind", p("state/run/net/api.sock"), "/run/omega-audit/api.sock",
		"--ro-bind", p("state/run/tree"), p("state/run/tree"),
		"--remount-ro", "/", "--chdir", p("state/run/tree"), "--",
		"/bin/omega-monitor-sandbox", "forward", "127.0.0.1:3128", "/run/omega-audit/api.sock")
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("bwrap argv (-want +got):\n%s", d)
	}
	for _, secret := range []string{"/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssh", "/var", "/root", "/home", "/srv", "/mnt", "/media", "/opt", "/run"} {
		assert.Assert(t, !slices.Contains(got, secret), "%s is shown", secret)
	}
}

// attacker is a stand-in auditor steered by the repository: it tries to
// read a secret in each place the sandbox hides, to reach a listener
// beside the API directly and through the proxy, and to reach the outside;
// then it reads its copy and asks the API, through the proxy, both ways.
const attacker = `#!/bin/bash
for f in $SECRETS; do cat "$f" 2>/dev/null && echo "READ $f"; done
ls -A / | tr '\n' ' ' | sed 's/^/root holds: /'; echo
(exec 3<>/dev/tcp/127.0.0.1/$FORBIDDEN) 2>/dev/null && echo "CONNECTED to the listener"
(exec 3<>/dev/tcp/1.1.1.1/53) 2>/dev/null && echo "CONNECTED outside"
getent hosts example.com >/dev/null 2>&1 && echo "RESOLVED example.com"
ask() { # NAME REQUEST: send REQUEST to the sandbox's proxy, print the answer's lines
	exec 3<>/dev/tcp/127.0.0.1/3128 || { echo "$1: no proxy"; return; }
	printf "$2" >&3
	timeout 10 cat <&3 | tr -d '\r' | sed "s|^|$1: |"
	exec 3<&-
}
ask connect-listener "CONNECT 127.0.0.1:$FORBIDDEN HTTP/1.1\r\nHost: 127.0.0.1:$FORBIDDEN\r\nConnection: close\r\n\r\n"
ask get-listener "GET http://127.0.0.1:$FORBIDDEN/ HTTP/1.1\r\nHost: 127.0.0.1:$FORBIDDEN\r\nConnection: close\r\n\r\n"
ask connect-outside "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\nConnection: close\r\n\r\n"
ask get-api "GET $ANTHROPIC_BASE_URL/v1 HTTP/1.1\r\nHost: ${ANTHROPIC_BASE_URL#http://}\r\nConnection: close\r\n\r\n"
ask connect-api "CONNECT $API_ADDR HTTP/1.1\r\nHost: x\r\n\r\nGET /v1 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
head -1 main.go | sed 's/^/the copy: /'
`

// plant writes a secret into dir for the test's length, when it can (a
// root directory is writable in CI, which runs as root); the file's name,
// or "" when it could not.
func plant(t *testing.T, dir string) string {
	f, err := os.CreateTemp(dir, "omega-audit-secret-*")
	if err != nil {
		t.Logf("cannot plant a secret in %s: %v", dir, err)
		return ""
	}
	t.Cleanup(func() { os.Remove(f.Name()) })
	defer f.Close()
	_, err = f.WriteString("planted-secret\n")
	assert.NilError(t, err)
	return f.Name()
}

// TestSandboxShowsOnlyTheCopyAndTheAPI attacks the sandbox from inside: a
// secret planted in each hidden place (/etc, /var, /srv, /mnt, /media,
// /opt, /root, /home, /run) and the system's own (shadow, sudoers, ssh host
// keys) cannot be read; a listener on another loopback port cannot be
// reached, directly or through the proxy, nor can the outside; the copy
// and the API can.
func TestSandboxShowsOnlyTheCopyAndTheAPI(t *testing.T) {
	testenv.Need(t, "bwrap", "bash", "getent", "timeout")
	c, _ := spyConfig(t, IsolateBwrap)
	assert.NilError(t, os.WriteFile(c.Bin, []byte(attacker), 0o700))

	var secrets []string
	for _, dir := range []string{"/etc", "/var", "/var/lib", "/srv", "/mnt", "/media", "/opt", "/root", "/home", "/run"} {
		if f := plant(t, dir); f != "" {
			secrets = append(secrets, f)
		}
	}
	for _, f := range []string{"/etc/shadow", "/etc/gshadow", "/etc/sudoers", "/etc/ssh/ssh_host_ed25519_key", "/etc/ssh/ssh_host_rsa_key", "/etc/ssl/private"} {
		if _, err := os.ReadFile(f); err == nil {
			secrets = append(secrets, f) // readable here, so the test proves something
		}
	}
	t.Logf("secrets readable outside: %q", secrets)
	assert.Assert(t, len(secrets) > 0, "no secret to attack: the test proves nothing")

	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "the API answered "+r.URL.Path+"\n")
	}))
	defer api.Close()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	assert.NilError(t, err)
	defer listener.Close()
	var reached atomic.Int32
	go func() {
		for {
			conn, err := listener.Accept()
			if err != nil {
				return
			}
			reached.Add(1)
			conn.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(listener.Addr().String())
	c.Environ = append(c.Environ, "ANTHROPIC_BASE_URL="+api.URL, "SECRETS="+strings.Join(secrets, " "), "FORBIDDEN="+port,
		"API_ADDR="+api.Listener.Addr().String())
	c.KeepEnv = append(c.KeepEnv, "SECRETS", "FORBIDDEN", "API_ADDR")
	// A run's directory too deep for a socket's path of 107 bytes.
	c.RunDir = filepath.Join(c.RunDir, strings.Repeat("deep-", 20))
	assert.NilError(t, os.Mkdir(c.RunDir, 0o700))

	s, err := Prepare(c)
	assert.NilError(t, err)
	defer s.Remove()
	r := s.Run(c.Bin, "BRIEF", time.Minute)
	out := string(r.Stdout)
	t.Logf("stdout:\n%s\nstderr:\n%s", out, r.Stderr)
	assert.NilError(t, r.Err)
	for _, bad := range []string{"READ ", "planted-secret", "CONNECTED", "RESOLVED", "200 Connection established\nconnect-listener", "no proxy"} {
		assert.Assert(t, !strings.Contains(out, bad), "the auditor got %q", bad)
	}
	assert.Equal(t, reached.Load(), int32(0), "the listener beside the API was reached")
	for _, want := range []string{
		"connect-listener: HTTP/1.1 403 Forbidden",
		"get-listener: HTTP/1.1 403 Forbidden",
		"connect-outside: HTTP/1.1 403 Forbidden",
		"get-api: HTTP/1.1 200 OK", "get-api: the API answered /v1",
		"connect-api: HTTP/1.1 200 Connection established", "connect-api: the API answered /v1",
		"the copy: package main",
	} {
		assert.Assert(t, strings.Contains(out, want), "the output lacks %q", want)
	}
	root := ""
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(l, "root holds: "); ok {
			root = v
		}
	}
	// (/root and /home hold what of PATH lies there, if anything: the
	// planted secrets show they hold nothing else.)
	for _, hidden := range []string{"var", "srv", "mnt", "media", "opt"} {
		assert.Assert(t, !slices.Contains(strings.Fields(root), hidden), "/%s is in the sandbox: %s", hidden, root)
	}
}

func TestAPIEndpoints(t *testing.T) {
	tests := []struct {
		agent       string
		env, config []string
		want        []string
		err         string
	}{
		{agent: "claude", want: []string{"api.anthropic.com:443", "platform.claude.com:443"}},
		{agent: "claude", env: []string{"ANTHROPIC_BASE_URL=http://127.0.0.1:8080/"}, want: []string{"127.0.0.1:8080"}},
		{agent: "claude", env: []string{"ANTHROPIC_BASE_URL=https://Gateway.example.com/anthropic"}, want: []string{"gateway.example.com:443"}},
		{agent: "claude", env: []string{"ANTHROPIC_BASE_URL=gateway.example.com"}, err: `auditrun: the API base URL "gateway.example.com" is not an http or https URL`},
		{agent: "codex", want: []string{"api.openai.com:443", "chatgpt.com:443", "auth.openai.com:443"}},
		{agent: "codex", env: []string{"OPENAI_BASE_URL=http://[::1]:9000/v1"}, want: []string{"[::1]:9000"}},
		{agent: "codex", config: []string{"model=m", "model_provider=fake",
			`model_providers.fake={name="Fake",base_url="http://127.0.0.1:4000/v1",wire_api="responses"}`},
			want: []string{"127.0.0.1:4000"}},
		{agent: "codex", config: []string{`model_providers.x.base_url='https://llm.example.com:8443/v1'`, "openai_base_url=https://proxy.example.com/v1", `chatgpt_base_url = "https://chat.example.com"`},
			want: []string{"llm.example.com:8443", "proxy.example.com:443", "chat.example.com:443"}},
		{agent: "gemini", want: []string{"generativelanguage.googleapis.com:443", "cloudcode-pa.googleapis.com:443", "oauth2.googleapis.com:443"}},
		{agent: "gemini", env: []string{"GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:5000", "GOOGLE_VERTEX_BASE_URL=https://vertex.example.com"},
			want: []string{"127.0.0.1:5000", "vertex.example.com:443"}},
		// Another agent's variable moves nothing.
		{agent: "gemini", env: []string{"ANTHROPIC_BASE_URL=http://127.0.0.1:1"}, want: []string{"generativelanguage.googleapis.com:443", "cloudcode-pa.googleapis.com:443", "oauth2.googleapis.com:443"}},
	}
	for _, tt := range tests {
		got, err := apiEndpoints(tt.agent, tt.env, tt.config)
		if tt.err != "" {
			assert.Error(t, err, tt.err)
			continue
		}
		assert.NilError(t, err)
		if d := cmp.Diff(tt.want, got); d != "" {
			t.Errorf("%s %q %q (-want +got):\n%s", tt.agent, tt.env, tt.config, d)
		}
	}
}

// searcher is a stand-in auditor that shows everything the sandbox holds
// where a key could be: its environment and every process's, their
// command lines, and every readable file of its home, its tmp, /tmp, /etc,
// /run and its copy; then it asks the API at its base URL, as the agent
// would, with the placeholder it holds.
const searcher = `#!/bin/bash
env | sed 's/^/env: /'
for p in /proc/[0-9]*; do tr '\0' '\n' <$p/environ; tr '\0' ' ' <$p/cmdline; echo; done 2>/dev/null | sed 's/^/proc: /'
# /tmp and /run are the sandbox's own inside; outside (the control) the
# machine's, not searched.
[ -d /run/omega-audit ] && inside="/tmp /run"
find "$HOME" "$TMPDIR" /etc $inside . -type f -readable -size -1000k -exec cat {} + 2>/dev/null | sed 's/^/file: /'
base=${ANTHROPIC_BASE_URL:-${OPENAI_BASE_URL:-$GOOGLE_GEMINI_BASE_URL}}
hostport=${base#http://}; hostport=${hostport%%/*}
exec 3<>/dev/tcp/${hostport%:*}/${hostport#*:} || { echo "no API"; exit 0; }
printf "GET ${base#http://$hostport}/models HTTP/1.1\r\nHost: $hostport\r\nx-api-key: $ANTHROPIC_API_KEY\r\nAuthorization: Bearer $OPENAI_API_KEY$CODEX_API_KEY\r\nx-goog-api-key: $GEMINI_API_KEY\r\nConnection: close\r\n\r\n" >&3
timeout 10 cat <&3 | tr -d '\r' | sed 's/^/api: /'
`

// TestSandboxHoldsNoKey searches the sandbox of each agent for the
// operator's key from inside, with its environment and its login files
// holding it outside: no variable, process, file or command line holds
// it, nor any login file; what the agent holds is the placeholder, and a
// request to its base URL reaches the API with the real key.
func TestSandboxHoldsNoKey(t *testing.T) {
	testenv.Need(t, "bwrap", "bash", "find", "timeout")
	const key = "sk-operator-REAL-4e1d0c9b7a"
	tests := []struct {
		agent, baseVar, heard string
		env                   []string
	}{
		{"claude", "ANTHROPIC_BASE_URL", "x-api-key=" + key, []string{"ANTHROPIC_API_KEY=" + key}},
		{"codex", "OPENAI_BASE_URL", "Authorization=Bearer " + key, []string{"OPENAI_API_KEY=" + key, "CODEX_API_KEY=" + key}},
		{"gemini", "GOOGLE_GEMINI_BASE_URL", "x-goog-api-key=" + key, []string{"GEMINI_API_KEY=" + key, "GOOGLE_API_KEY=" + key}},
	}
	for _, tt := range tests {
		t.Run(tt.agent, func(t *testing.T) {
			var heard atomic.Value
			api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				heard.Store(r.URL.Path + " x-api-key=" + r.Header.Get("x-api-key") + " Authorization=" + r.Header.Get("Authorization") +
					" x-goog-api-key=" + r.Header.Get("x-goog-api-key"))
				io.WriteString(w, "the API answered\n")
			}))
			defer api.Close()
			c, operator := spyConfig(t, IsolateBwrap)
			c.Agent = tt.agent
			c.Bin = filepath.Join(filepath.Dir(c.Bin), tt.agent)
			assert.NilError(t, os.WriteFile(c.Bin, []byte(searcher), 0o700))
			// The operator's login files hold the key as well.
			for name, body := range map[string]string{
				".codex/auth.json": `{"OPENAI_API_KEY":"` + key + `"}`, ".claude/.credentials.json": `{"accessToken":"` + key + `"}`,
				".gemini/oauth_creds.json": `{"access_token":"` + key + `"}`,
			} {
				assert.NilError(t, os.MkdirAll(filepath.Dir(filepath.Join(operator, name)), 0o700))
				assert.NilError(t, os.WriteFile(filepath.Join(operator, name), []byte(body), 0o600))
			}
			c.Environ = append(slices.DeleteFunc(c.Environ, func(kv string) bool {
				return strings.HasPrefix(kv, "ANTHROPIC_") || strings.HasPrefix(kv, "CLAUDE_CONFIG_DIR=")
			}), append(tt.env, tt.baseVar+"="+api.URL+"/v1", "MY_PROVIDER_KEY="+key)...)
			s, err := Prepare(c)
			assert.NilError(t, err)
			defer s.Remove()
			r := s.Run(c.Bin, "BRIEF", time.Minute)
			out := string(r.Stdout)
			assert.NilError(t, r.Err, "%s", r.Stderr)
			t.Logf("searched %d variables, %d lines of processes, %d lines of files", strings.Count(out, "env: "), strings.Count(out, "proc: "), strings.Count(out, "file: "))
			assert.Assert(t, !strings.Contains(out, key), "the key is in the sandbox:\n%s", out)
			for _, want := range []string{"env: HOME=" + s.Home, "proc: ", "file: package main", Placeholder, "api: HTTP/1.1 200 OK", "api: the API answered"} {
				assert.Assert(t, strings.Contains(out, want), "the search lacks %q: it proves nothing\n%s", want, out)
			}
			got, _ := heard.Load().(string)
			assert.Assert(t, strings.HasPrefix(got, "/v1/models ") && strings.Contains(got, tt.heard), "the API heard %q", got)
			assert.Assert(t, !strings.Contains(got, Placeholder), "the API heard the placeholder: %q", got)
		})
	}
}

// TestSandboxHoldsNoKeyControl: without bubblewrap the agent holds the
// key, and the same search finds it: the search can see one.
func TestSandboxHoldsNoKeyControl(t *testing.T) {
	testenv.Need(t, "bash", "find", "timeout")
	c, _ := spyConfig(t, IsolateNone)
	assert.NilError(t, os.WriteFile(c.Bin, []byte(searcher), 0o700))
	s, err := Prepare(c)
	assert.NilError(t, err)
	defer s.Remove()
	r := s.Run(c.Bin, "BRIEF", time.Minute)
	assert.Assert(t, strings.Contains(string(r.Stdout), "env: ANTHROPIC_API_KEY=sk-ant-test"), "%s", r.Stdout)
}

// TestKeyPlans: where an agent's key comes from, what the agent is told
// instead, and the logins that cannot stay outside, refused with what to
// do.
func TestKeyPlans(t *testing.T) {
	home := fs.NewDir(t, "operator",
		fs.WithDir(".codex", fs.WithFile("auth.json", `{"tokens":{"access_token":"chatgpt"}}`)),
		fs.WithDir(".claude", fs.WithFile(".credentials.json", `{}`)),
		fs.WithDir(".gemini", fs.WithFile("oauth_creds.json", `{}`))).Path()
	empty := t.TempDir()
	tests := []struct {
		agent, home string
		env, config []string
		want        keyPlan
		err         string
	}{
		{agent: "claude", home: home, env: []string{"ANTHROPIC_API_KEY=k"},
			want: keyPlan{route: apiRoute{Base: "https://api.anthropic.com", Local: []string{"127.0.0.1:3128", "localhost:3128"}, Header: "x-api-key", Value: "k", Drop: []string{"x-api-key", "Authorization"}},
				env: []string{"ANTHROPIC_API_KEY=" + Placeholder, "ANTHROPIC_BASE_URL=http://127.0.0.1:3128"}}},
		{agent: "claude", home: empty, env: []string{"ANTHROPIC_AUTH_TOKEN=t", "ANTHROPIC_BASE_URL=https://gw.example.com/anthropic/"},
			want: keyPlan{route: apiRoute{Base: "https://gw.example.com", Local: []string{"127.0.0.1:3128", "localhost:3128"}, Header: "Authorization", Value: "Bearer t", Drop: []string{"x-api-key", "Authorization"}},
				env: []string{"ANTHROPIC_AUTH_TOKEN=" + Placeholder, "ANTHROPIC_BASE_URL=http://127.0.0.1:3128/anthropic"}}},
		{agent: "claude", home: home, err: "auditrun: a Claude Code login cannot be kept out of the sandbox"},
		{agent: "claude", home: empty, env: []string{"CLAUDE_CODE_OAUTH_TOKEN=o"}, err: "auditrun: a Claude Code login cannot be kept out of the sandbox"},
		{agent: "claude", home: empty, env: []string{"ANTHROPIC_API_KEY=k", "CLAUDE_CODE_USE_BEDROCK=1"}, err: "auditrun: Claude Code on Bedrock or Vertex"},
		// No credential at all: the agent says so itself.
		{agent: "claude", home: empty,
			want: keyPlan{route: apiRoute{Base: "https://api.anthropic.com", Local: []string{"127.0.0.1:3128", "localhost:3128"}, Drop: []string{"x-api-key", "Authorization"}},
				env: []string{"ANTHROPIC_API_KEY=" + Placeholder, "ANTHROPIC_BASE_URL=http://127.0.0.1:3128"}}},
		{agent: "codex", home: home, env: []string{"OPENAI_API_KEY=k"},
			want: keyPlan{route: apiRoute{Base: "https://api.openai.com", Local: []string{"127.0.0.1:3128", "localhost:3128"}, Header: "Authorization", Value: "Bearer k", Drop: []string{"Authorization"}},
				env:   []string{"CODEX_API_KEY=" + Placeholder, "OPENAI_BASE_URL=http://127.0.0.1:3128/v1"},
				codex: []string{`openai_base_url="http://127.0.0.1:3128/v1"`}}},
		{agent: "codex", home: home, err: "auditrun: a ChatGPT login of Codex cannot be kept out of the sandbox"},
		{agent: "codex", home: empty, env: []string{"CODEX_API_KEY=k"}, config: []string{"openai_base_url="},
			want: keyPlan{route: apiRoute{Base: "https://api.openai.com", Local: []string{"127.0.0.1:3128", "localhost:3128"}, Header: "Authorization", Value: "Bearer k", Drop: []string{"Authorization"}},
				env:   []string{"CODEX_API_KEY=" + Placeholder, "OPENAI_BASE_URL=http://127.0.0.1:3128/v1"},
				codex: []string{`openai_base_url="http://127.0.0.1:3128/v1"`}}},
		{agent: "codex", home: empty, env: []string{"LLM_KEY=k"}, config: []string{"model_provider=local",
			`model_providers.local={name="L",base_url="http://127.0.0.1:4000/v1",env_key="LLM_KEY"}`},
			want: keyPlan{route: apiRoute{Base: "http://127.0.0.1:4000", Local: []string{"127.0.0.1:3128", "localhost:3128"}, Header: "Authorization", Value: "Bearer k", Drop: []string{"Authorization"}},
				env:   []string{"LLM_KEY=" + Placeholder},
				codex: []string{`model_providers.local.base_url="http://127.0.0.1:3128/v1"`}}},
		{agent: "codex", home: empty, config: []string{"model_provider=local", `model_providers.local={base_url="http://h/v1",env_key="LLM_KEY"}`},
			err: `auditrun: the Codex provider "local" takes its key from LLM_KEY, which is not set`},
		{agent: "gemini", home: home, env: []string{"GEMINI_API_KEY=k", "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:5000"},
			want: keyPlan{route: apiRoute{Base: "http://127.0.0.1:5000", Local: []string{"127.0.0.1:3128", "localhost:3128"}, Header: "x-goog-api-key", Value: "k", Drop: []string{"x-goog-api-key", "Authorization"}},
				env: []string{"GEMINI_API_KEY=" + Placeholder, "GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:3128"}}},
		{agent: "gemini", home: home, err: "auditrun: a Gemini CLI login with a Google account cannot be kept out of the sandbox"},
		{agent: "gemini", home: empty, env: []string{"GEMINI_API_KEY=k", "GOOGLE_GENAI_USE_VERTEXAI=true"}, err: "auditrun: Gemini CLI on Vertex AI"},
	}
	for _, tt := range tests {
		got, err := keyPlans[tt.agent](tt.home, append([]string{"HOME=" + tt.home}, tt.env...), tt.config)
		if tt.err != "" {
			assert.ErrorContains(t, err, tt.err, "%s %q", tt.agent, tt.env)
			continue
		}
		assert.NilError(t, err, "%s %q", tt.agent, tt.env)
		if d := cmp.Diff(tt.want, got, cmp.AllowUnexported(keyPlan{})); d != "" {
			t.Errorf("%s %q %q (-want +got):\n%s", tt.agent, tt.env, tt.config, d)
		}
	}
}
