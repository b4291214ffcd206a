package auditrun

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Isolation modes: what stands around an auditor besides its copy, home
// and environment.
const (
	// IsolateAuto uses bubblewrap where the machine has a working one.
	IsolateAuto = "auto"
	// IsolateBwrap requires bubblewrap and refuses to run without it.
	IsolateBwrap = "bwrap"
	// IsolateNone runs the agent as a plain process (in its copy, with
	// its throwaway home and scrubbed environment all the same).
	IsolateNone = "none"
)

// Isolations lists the modes, for usage and validation.
var Isolations = []string{IsolateAuto, IsolateBwrap, IsolateNone}

// A Config says what to audit, with which agent, and where the sandbox
// may be made.
type Config struct {
	Dir       string // the project, absolute
	RunDir    string // a private directory of this run: the sandbox goes inside
	StateHome string // the state home, left out of the copy when Dir holds it
	Agent     string // claude, codex or gemini
	Bin       string // the agent's executable, absolute
	Environ   []string
	KeepEnv   []string // more variable names to hand over (a provider's key)
	// CodexConfig are KEY=VALUE settings handed to a Codex auditor as -c
	// (its model and provider: the operator's config.toml is not loaded);
	// see CheckCodexConfig.
	CodexConfig []string
	Isolation   string // one of Isolations; IsolateAuto when empty
	// Helper is omega-monitor-sandbox's executable (HelperName), absolute:
	// outside bubblewrap the API proxy, inside the auditor's forwarder to
	// it, its only way to its API, and a Codex auditor's file tools. Not
	// needed without bubblewrap but for Codex.
	Helper string
}

// A Sandbox is where the auditors of one run read and run: a sanitized
// copy of the project, a throwaway home holding only the agent's
// credentials and settings that force its extensions off, a scrubbed
// environment, and, where the machine has it, bubblewrap around all, with
// no network but the way to the agent's API.
type Sandbox struct {
	Tree    string    // the copy the auditors read, and their working directory
	Home    string    // their HOME
	LeftOut []LeftOut // what of the project the copy does not hold
	// Isolation is what stands around each auditor: "bwrap", or "none".
	Isolation string
	// API are the host:port an auditor in bubblewrap may reach; any
	// other connection is refused.
	API         []string
	env         []string
	agent       agentSetup
	codexConfig []string
	codexSet    []string // -c settings of the sandbox's own, after the operator's
	helper      string
	wrap        []string // the bubblewrap command line before the agent's, or none
	proxy       *apiProxy
	netDir      string // the proxy's socket's directory
}

// Prepare makes the sandbox of one run inside c.RunDir. It refuses, with
// an error naming why, what it cannot make safe.
func Prepare(c Config) (*Sandbox, error) {
	if c.Dir == "/" || c.Dir == "" {
		return nil, errors.New("auditrun: refusing to audit the whole file system; name a project directory")
	}
	setup, ok := agents[c.Agent]
	if !ok {
		return nil, fmt.Errorf("auditrun: unknown agent %q", c.Agent)
	}
	if c.Isolation == "" {
		c.Isolation = IsolateAuto
	}
	if !slices.Contains(Isolations, c.Isolation) {
		return nil, fmt.Errorf("auditrun: isolation must be one of %s; got %q", strings.Join(Isolations, ", "), c.Isolation)
	}
	if err := CheckCodexConfig(c.CodexConfig); err != nil {
		return nil, err
	}
	if c.Agent == "codex" && c.Helper == "" {
		return nil, fmt.Errorf("auditrun: a Codex auditor reads the copy through %s's file tools; it is not installed", HelperName)
	}
	// Inside bubblewrap the auditor holds no key: the proxy adds it. A
	// login that cannot stay outside is refused before anything is made.
	isolation := IsolateNone
	var plan *keyPlan
	if c.Isolation != IsolateNone {
		why := bwrapWorks()
		switch {
		case why == "":
			isolation = "bwrap"
			p, err := keyPlans[c.Agent](lookup(c.Environ, "HOME"), c.Environ, c.CodexConfig)
			if err != nil {
				return nil, err
			}
			plan = &p
		case c.Isolation == IsolateBwrap:
			return nil, fmt.Errorf("auditrun: --isolation bwrap: %s", why)
		}
	}
	s := &Sandbox{
		codexConfig: c.CodexConfig,
		helper:      c.Helper,
		Tree:        filepath.Join(c.RunDir, "tree"),
		Home:        filepath.Join(c.RunDir, "home"),
		agent:       setup,
	}
	tmp := filepath.Join(c.RunDir, "tmp")
	var err error
	if s.LeftOut, err = copyTree(c.Dir, s.Tree, c.StateHome, MaxTree); err != nil {
		s.Remove()
		return nil, err
	}
	for _, d := range []string{s.Home, tmp} {
		if err := os.Mkdir(d, 0o700); err != nil {
			s.Remove()
			return nil, fmt.Errorf("auditrun: %w", err)
		}
	}
	operatorHome := lookup(c.Environ, "HOME")
	set, err := setup.home(operatorHome, c.Environ, s.Home, s.Tree, plan == nil)
	if err != nil {
		s.Remove()
		return nil, err
	}
	set = append(set, "HOME="+s.Home, "TMPDIR="+tmp)
	s.env = scrubEnv(c.Environ, c.Agent, c.KeepEnv, set)

	s.Isolation = isolation
	if plan != nil {
		if err := s.closeNetwork(c, plan); err != nil {
			s.Remove()
			return nil, err
		}
		s.wrap = bwrapArgv(bwrapPlan{
			guard:  []string{operatorHome, c.StateHome, c.Dir},
			apart:  []string{c.StateHome, c.Dir},
			tools:  toolDirs(c.Bin, lookup(c.Environ, "PATH")),
			write:  []string{s.Home, tmp},
			read:   s.Tree,
			sock:   filepath.Join(s.netDir, "api.sock"),
			helper: c.Helper,
		})
	}
	return s, nil
}

// Argv returns the command line that runs one auditor of brief in the
// sandbox.
func (s *Sandbox) Argv(bin, brief string) []string {
	return append(slices.Clone(s.wrap), s.agent.argv(bin, brief, s)...)
}

// Command returns the auditor's process for argv (from Argv), in the copy,
// with the sandbox's environment.
func (s *Sandbox) Command(ctx context.Context, argv []string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = s.Tree
	cmd.Env = s.env
	return cmd
}

// Env is the environment auditors run with.
func (s *Sandbox) Env() []string { return slices.Clone(s.env) }

// closeNetwork starts the API proxy of a sandbox without a network, for
// the endpoints the agent's environment and settings name and for its API
// with the key plan's credential, and points the agent at it: its proxy
// variables, its base URL; no variable that may carry a credential is left
// but the placeholder.
func (s *Sandbox) closeNetwork(c Config, plan *keyPlan) error {
	if c.Helper == "" {
		return fmt.Errorf("auditrun: the sandbox needs %s to reach the API from inside", HelperName)
	}
	api, err := apiEndpoints(c.Agent, s.env, c.CodexConfig)
	if err != nil {
		return err
	}
	s.netDir = filepath.Join(c.RunDir, "net")
	if err := os.Mkdir(s.netDir, 0o700); err != nil {
		return fmt.Errorf("auditrun: %w", err)
	}
	if s.proxy, err = startAPIProxy(c.Helper, filepath.Join(s.netDir, "api.sock"), api, c.Environ, &plan.route); err != nil {
		return err
	}
	env := slices.DeleteFunc(withoutSecrets(s.env), func(kv string) bool {
		return slices.ContainsFunc(plan.env, func(set string) bool { name, _, _ := strings.Cut(set, "="); return strings.HasPrefix(kv, name+"=") })
	})
	s.API, s.env, s.codexSet = api, withProxy(append(env, plan.env...)), plan.codex
	return nil
}

// Remove stops the API proxy and removes the copy and the throwaway home.
func (s *Sandbox) Remove() error {
	var errs []error
	if s.proxy != nil {
		s.proxy.Close()
		s.proxy = nil
	}
	for _, d := range []string{s.Tree, s.Home, filepath.Join(filepath.Dir(s.Home), "tmp"), s.netDir} {
		if d == "" {
			continue
		}
		if err := removeTree(d); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
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

// bwrapWorks says why bubblewrap cannot be used here ("" when it can): it
// is missing, or the kernel refuses its namespaces (a container without
// them). It runs /bin/true in the same kind of sandbox once.
func bwrapWorks() string {
	bin, err := exec.LookPath("bwrap")
	if err != nil {
		return "bubblewrap (bwrap) is not installed"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net", "--die-with-parent", "--", "true").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("bwrap does not run here: %v: %s", err, strings.TrimSpace(string(out)))
	}
	return ""
}

// A bwrapPlan is what the sandbox shows an auditor, and nothing else: the
// system's programs and libraries and a minimal /etc, read only; the tools
// the agent needs to start, read only, where they are (but none that
// holds a guarded directory, the operator's home, the state home or the
// real project, nor lies in one of the last two); the helper, to reach the
// API; its home and tmp, writable; its copy of the project, read only. No
// home, /root, /var, /srv, /mnt, /media, /opt or /run, and no network but
// the API proxy's socket.
type bwrapPlan struct {
	guard, apart []string // apart: what no tool lies in
	tools, write []string
	read         string
	sock, helper string // the API proxy's socket, and the helper that forwards to it
}

// systemDirs are shown read only, or as the links they are (/bin to
// usr/bin on a merged /usr).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// etcShown is what of /etc an agent needs: who users are (names, not
// passwords), how names resolve, the dynamic linker's cache, time zone and
// locale, CA certificates, the links of the alternatives system, what the
// system is. Not shown: shadow, gshadow, sudoers, ssh and its host keys,
// the package manager's and every service's configuration.
var etcShown = []string{"passwd", "group", "hosts", "host.conf", "nsswitch.conf", "gai.conf",
	"services", "protocols", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "timezone",
	"locale.alias", "locale.conf", "ssl", "ca-certificates", "ca-certificates.conf", "pki",
	"crypto-policies", "alternatives", "os-release", "lsb-release", "debian_version", "mime.types", "terminfo"}

// etcHidden are private keys inside what etcShown shows.
var etcHidden = []string{"/etc/ssl/private", "/etc/pki/tls/private", "/etc/pki/CA/private"}

// bwrapArgv returns the bubblewrap command line for p, up to and with
// the helper's forwarder, which runs the agent's command line after it.
func bwrapArgv(p bwrapPlan) []string {
	argv := []string{"bwrap", "--die-with-parent", "--new-session",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try", "--unshare-net",
		"--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"}
	var shown []string
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if to, err := os.Readlink(d); err == nil {
				argv = append(argv, "--symlink", to, d)
			}
		case fi.IsDir():
			argv = append(argv, "--ro-bind", d, d)
			shown = append(shown, d)
		}
	}
	for _, name := range etcShown {
		if _, err := os.Stat("/etc/" + name); err == nil {
			argv = append(argv, "--ro-bind", "/etc/"+name, "/etc/"+name)
		}
	}
	for _, d := range etcHidden {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			argv = append(argv, "--tmpfs", d)
		}
	}
	guard := cleanDirs(p.guard)
	for _, d := range cleanDirs(p.tools) {
		// A tool's directory is shown unless the system's already is,
		// or it is a top-level one (/, /root, /opt, /home), or it holds
		// a guarded one or lies in the project or the state home (a
		// PATH of the operator's home, a binary beside the project or
		// in it, shows none of them).
		fi, err := os.Stat(d)
		if err != nil || !fi.IsDir() || under(d, shown) || filepath.Dir(d) == "/" || under(d, cleanDirs(p.apart)) ||
			slices.ContainsFunc(guard, func(g string) bool { return under(g, []string{d}) }) {
			continue
		}
		argv = append(argv, "--ro-bind", d, d)
		shown = append(shown, d)
	}
	argv = append(argv, "--ro-bind", p.helper, p.helper)
	for _, d := range p.write {
		argv = append(argv, "--bind", d, d)
	}
	argv = append(argv, "--ro-bind", p.sock, sandboxSocket, "--ro-bind", p.read, p.read,
		"--remount-ro", "/", "--chdir", p.read, "--")
	return append(argv, forwardArgv(p.helper)...)
}

// cleanDirs returns the absolute, clean, distinct paths of dirs, shortest
// first, so that a directory comes before what it holds.
func cleanDirs(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if d == "" || !filepath.IsAbs(d) {
			continue
		}
		if r, err := filepath.EvalSymlinks(d); err == nil {
			d = r
		}
		if d = filepath.Clean(d); !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	slices.SortStableFunc(out, func(a, b string) int { return len(a) - len(b) })
	return out
}

// under reports whether p is one of dirs or inside one.
func under(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

// toolDirs returns what the agent needs to start: the directory of its
// executable (where it really is), the whole package around it when it
// lies in a node_modules tree (a Node agent loads its dependencies from
// there), and the directories of PATH (a script's interpreter, node under
// a version manager in the home).
func toolDirs(bin, path string) []string {
	dirs := []string{filepath.Dir(bin)}
	if real, err := filepath.EvalSymlinks(bin); err == nil {
		dirs = append(dirs, filepath.Dir(real))
		if i := strings.Index(real, string(filepath.Separator)+"node_modules"+string(filepath.Separator)); i > 0 {
			dirs = append(dirs, real[:i])
		}
	}
	return append(dirs, filepath.SplitList(path)...)
}

// Describe says in a few words what the auditors read and what surrounded
// them, for the report.
func (s *Sandbox) Describe() string {
	d := "a sanitized copy of the project, with a throwaway home and a scrubbed environment"
	if s.Isolation == "bwrap" {
		return d + ", inside bubblewrap (only the system's programs, a minimal /etc and the copy shown; no network but " +
			strings.Join(s.API, ", ") + ")"
	}
	return d + ", with no OS sandbox around them"
}

// Brief lists at most n of what was left out, then how many more.
func Brief(left []LeftOut, n int) []string {
	var out []string
	for i, l := range left {
		if i == n {
			out = append(out, fmt.Sprintf("and %d more", len(left)-n))
			break
		}
		out = append(out, l.String())
	}
	return out
}
