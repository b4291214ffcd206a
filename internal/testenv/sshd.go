package testenv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// SSHDPort is where SSHD listens when it can; CI relies on it. When the port
// is taken (another package's test holds it) SSHD falls back to a free one.
const SSHDPort = 42820

// An SSHConfig is an ssh client config file of the test's own: hosts are
// reached only through the aliases it defines (ssh -F Path), never through a
// literal address and never through the user's ~/.ssh/config.
type SSHConfig struct {
	// Path is the file, for ssh -F and --ssh-config.
	Path string

	mu sync.Mutex
}

// NewSSHConfig returns an empty ssh config in the test's temporary directory.
func NewSSHConfig(t testing.TB) *SSHConfig {
	t.Helper()
	c := &SSHConfig{Path: filepath.Join(t.TempDir(), "ssh_config")}
	if err := os.WriteFile(c.Path, nil, 0o600); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	return c
}

// Add appends a Host block for alias with the given options, one
// "Keyword value" each.
func (c *SSHConfig) Add(t testing.TB, alias string, options ...string) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "\nHost %s\n", alias)
	for _, o := range options {
		fmt.Fprintf(&b, "    %s\n", o)
	}
	f, err := os.OpenFile(c.Path, os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	defer f.Close()
	if _, err := f.WriteString(b.String()); err != nil {
		t.Fatalf("testenv: %v", err)
	}
}

// SSHD starts a real sshd on 127.0.0.1 (SSHDPort, or a free port when that
// is taken) with a host key of its own and accepting one generated client
// key for the current user, and adds alias to cfg to reach it. env holds
// "NAME=value" entries set in every session it starts (sshd's SetEnv): a
// test points the remote side at its own multiplexer with
// "OMEGA_MONITOR_MUX=" + TmuxServer.Mux. HOME is a fresh directory of the
// test's unless env sets it. The server is stopped when the test ends. sshd needs /run/sshd; SSHD creates it when it is missing.
func SSHD(t testing.TB, cfg *SSHConfig, alias string, env ...string) {
	t.Helper()
	sshdWith(t, cfg, alias, "", env)
}

// sshdWith is SSHD, with every session running force instead of the command
// it was given when force is not "" (sshd's ForceCommand).
func sshdWith(t testing.TB, cfg *SSHConfig, alias, force string, env []string) {
	t.Helper()
	EndToEnd(t)
	paths := Need(t, "sshd", "ssh", "ssh-keygen")
	sshd, keygen := paths[0], paths[2]
	if !filepath.IsAbs(sshd) {
		t.Fatalf("testenv: sshd must run from an absolute path, got %s", sshd)
	}
	u, err := user.Current()
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	if err := os.MkdirAll("/run/sshd", 0o755); err != nil {
		t.Fatalf("testenv: sshd needs /run/sshd: %v", err)
	}
	dir := t.TempDir()
	hostKey := filepath.Join(dir, "host_key")
	clientKey := filepath.Join(dir, "id_ed25519")
	for _, k := range []string{hostKey, clientKey} {
		if out, err := exec.Command(keygen, "-q", "-t", "ed25519", "-N", "", "-C", "omega-monitor-test", "-f", k).CombinedOutput(); err != nil {
			t.Fatalf("testenv: ssh-keygen: %v\n%s", err, out)
		}
	}
	copyFile(t, clientKey+".pub", filepath.Join(dir, "authorized_keys"))
	hostPub, err := os.ReadFile(hostKey + ".pub")
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	knownHosts := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(knownHosts, []byte(alias+" "+string(hostPub)), 0o600); err != nil {
		t.Fatalf("testenv: %v", err)
	}

	// The remote side's HOME is the test's own, so that the login shell
	// reads no startup files of the real user (slow ones make every call
	// slow) and a remote ~/.local/bin/rmux is whatever the test puts there.
	remoteHome := filepath.Join(dir, "home")
	if err := os.Mkdir(remoteHome, 0o700); err != nil {
		t.Fatalf("testenv: %v", err)
	}
	if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "HOME=") }) {
		env = append([]string{"HOME=" + remoteHome}, env...)
	}
	port := startSSHD(t, sshd, dir, hostKey, u.Username, force, env)
	cfg.Add(t, alias,
		"HostName 127.0.0.1",
		"Port "+strconv.Itoa(port),
		"User "+u.Username,
		"IdentityFile "+clientKey,
		"IdentitiesOnly yes",
		"HostKeyAlias "+alias,
		"UserKnownHostsFile "+knownHosts,
		"GlobalKnownHostsFile /dev/null",
		"StrictHostKeyChecking yes",
		"LogLevel ERROR",
	)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, "ssh", "-F", cfg.Path, "-o", "BatchMode=yes", "-n", alias, "true").CombinedOutput(); err != nil {
		t.Fatalf("testenv: sshd on port %d does not let %s in: %v\n%s", port, alias, err, out)
	}
}

// startSSHD runs sshd in the foreground and returns its port once it
// listens. It tries SSHDPort first and a free port when that is taken.
func startSSHD(t testing.TB, sshd, dir, hostKey, username, force string, env []string) int {
	t.Helper()
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port := SSHDPort
		if attempt > 0 || !portFree(SSHDPort) {
			port = freePort(t)
		}
		conf := filepath.Join(dir, "sshd_config")
		lines := []string{
			"ListenAddress 127.0.0.1",
			"Port " + strconv.Itoa(port),
			"HostKey " + hostKey,
			"PidFile " + filepath.Join(dir, "sshd.pid"),
			"AuthorizedKeysFile " + filepath.Join(dir, "authorized_keys"),
			"AllowUsers " + username,
			"UsePAM no",
			"StrictModes no",
			"PubkeyAuthentication yes",
			"PasswordAuthentication no",
			"KbdInteractiveAuthentication no",
			"PermitRootLogin prohibit-password",
			"X11Forwarding no",
			"PrintMotd no",
		}
		// One SetEnv line: sshd keeps only the first one it reads.
		setenv := "SetEnv"
		for _, kv := range env {
			if strings.ContainsAny(kv, "\"\n") || !strings.Contains(kv, "=") {
				t.Fatalf("testenv: sshd cannot set %q (want NAME=value without '\"')", kv)
			}
			setenv += ` "` + kv + `"`
		}
		lines = append(lines, setenv)
		if force != "" {
			lines = append(lines, "ForceCommand "+force)
		}
		if err := os.WriteFile(conf, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatalf("testenv: %v", err)
		}
		err := runSSHD(t, sshd, conf)
		if err == nil {
			return port
		}
		lastErr = err
	}
	t.Fatalf("testenv: sshd would not start: %v", lastErr)
	return 0
}

// runSSHD starts sshd -D -e and waits for it to say it listens. It is
// stopped, with its process group, when the test ends.
func runSSHD(t testing.TB, sshd, conf string) error {
	cmd := exec.Command(sshd, "-D", "-e", "-f", conf)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	listening := make(chan bool, 1)
	var log strings.Builder
	var logMu sync.Mutex
	go func() {
		sc := bufio.NewScanner(stderr)
		said := false
		for sc.Scan() {
			logMu.Lock()
			log.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if !said && strings.Contains(sc.Text(), "Server listening on") {
				said = true
				listening <- true
			}
		}
		if !said {
			listening <- false
		}
	}()
	select {
	case ok := <-listening:
		if ok {
			t.Cleanup(func() {
				syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
				done := make(chan struct{})
				go func() { cmd.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(3 * time.Second):
					syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
					<-done
				}
			})
			return nil
		}
	case <-time.After(10 * time.Second):
	}
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	cmd.Wait()
	logMu.Lock()
	defer logMu.Unlock()
	return errors.New(strings.TrimSpace(log.String()))
}

func portFree(port int) bool {
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return false
	}
	l.Close()
	return true
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func copyFile(t testing.TB, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	if err := os.WriteFile(to, data, 0o600); err != nil {
		t.Fatalf("testenv: %v", err)
	}
}

// HungHost adds alias to cfg for a host that accepts TCP connections and
// then never answers. With banner it first sends an ssh banner
// ("SSH-2.0-hung"), the worse case: ssh's ConnectTimeout is over once the
// banner arrives, and only a wall clock ends the call. The listener and every
// connection close when the test ends.
func HungHost(t testing.TB, cfg *SSHConfig, alias string, banner bool) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	var (
		mu     sync.Mutex
		conns  []net.Conn
		closed bool
		wg     sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			if closed {
				mu.Unlock()
				c.Close()
				return
			}
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				if banner {
					io.WriteString(c, "SSH-2.0-hung\r\n")
				}
				io.Copy(io.Discard, c) // hold it open, say nothing
			}()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		closed = true
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	cfg.Add(t, alias,
		"HostName 127.0.0.1",
		"Port "+strconv.Itoa(l.Addr().(*net.TCPAddr).Port),
		"UserKnownHostsFile /dev/null",
		"GlobalKnownHostsFile /dev/null",
		"StrictHostKeyChecking yes",
		"LogLevel ERROR",
	)
}

// ClosedHost adds alias to cfg for a port on which nothing listens, so a
// connection is refused at once.
func ClosedHost(t testing.TB, cfg *SSHConfig, alias string) {
	t.Helper()
	cfg.Add(t, alias,
		"HostName 127.0.0.1",
		"Port "+strconv.Itoa(freePort(t)),
		"UserKnownHostsFile /dev/null",
		"GlobalKnownHostsFile /dev/null",
		"LogLevel ERROR",
	)
}
