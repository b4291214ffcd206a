// Package claudecode runs the real Claude Code CLI for tests: it installs a
// pinned release from the npm registry into a cache directory, starts it in a
// private tmux server with a HOME of its own and a fake Messages API
// (internal/fakeapi) behind it, types into it, captures its pane, and reads
// the session status file Claude Code writes about itself
// (~/.claude/sessions/<pid>.json), the agent's own witness of its state.
//
// It is a test helper. It never touches the real ~/.claude, reaches no API but
// the fake one, and does not decide what a screen means: that is package
// classify's job, which the golden captures made here check.
package claudecode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/termagent"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// Version is the pinned Claude Code release the tests run. .ci/run installs
// the same one into the cache, so that no test downloads it.
const Version = "2.1.332"

// Package is the npm package that carries Claude Code.
const Package = "@anthropic-ai/claude-code"

// CacheEnv names the environment variable that overrides the cache root.
const CacheEnv = "OMEGA_CLAUDE_CACHE"

// VersionEnv names the environment variable that overrides Version for one
// test run (scripts/agent-upgrade.sh runs the tour against a newer release
// that way, from a cache of its own); unset or empty, Version holds.
const VersionEnv = "OMEGA_CLAUDE_VERSION"

// Release returns the version the tests run: $OMEGA_CLAUDE_VERSION when
// set, else the pinned Version.
func Release() string {
	if v := os.Getenv(VersionEnv); v != "" {
		return v
	}
	return Version
}

// InstallTimeout bounds one npm install from cold on a loaded machine.
const InstallTimeout = 10 * time.Minute

// CacheRoot returns the directory that holds one installation per version:
// $OMEGA_CLAUDE_CACHE, or omega-monitor/claude-code under the user's cache
// directory (~/.cache on Linux).
func CacheRoot() (string, error) {
	if dir := os.Getenv(CacheEnv); dir != "" {
		return filepath.Abs(dir)
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("claudecode: no cache directory: %v", err)
	}
	return filepath.Join(dir, "omega-monitor", "claude-code"), nil
}

// Dir returns where version is installed under root: the --prefix given to
// npm install.
func Dir(root, version string) string { return filepath.Join(root, version) }

// platform returns the suffix of the npm package holding the native binary
// for this machine, as Claude Code's own installer names it.
func platform() string {
	goarch := map[string]string{"amd64": "x64", "arm64": "arm64"}[runtime.GOARCH]
	if goarch == "" {
		goarch = runtime.GOARCH
	}
	return runtime.GOOS + "-" + goarch
}

// binaries returns the places a native binary may be found under an
// installation, best first: the platform package itself (present whether or
// not npm ran the postinstall script), then the bin link npm made.
func binaries(dir string) []string {
	nm := filepath.Join(dir, "node_modules")
	return []string{
		filepath.Join(nm, Package+"-"+platform(), "claude"),
		filepath.Join(nm, Package+"-"+platform()+"-musl", "claude"),
		filepath.Join(nm, ".bin", "claude"),
	}
}

// Installed returns the binary of version under root when it is installed
// and answers --version with that version.
func Installed(ctx context.Context, root, version string) (string, error) {
	var errs []error
	for _, bin := range binaries(Dir(root, version)) {
		if _, err := os.Stat(bin); err != nil {
			continue
		}
		got, err := BinaryVersion(ctx, bin)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if got != version {
			errs = append(errs, fmt.Errorf("claudecode: %s is version %s, want %s", bin, got, version))
			continue
		}
		return bin, nil
	}
	if len(errs) > 0 {
		return "", errors.Join(errs...)
	}
	return "", fmt.Errorf("claudecode: version %s is not installed under %s", version, root)
}

// BinaryVersion runs bin --version and returns the version it prints.
func BinaryVersion(ctx context.Context, bin string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Env = append(os.Environ(), "DISABLE_AUTOUPDATER=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("claudecode: %s --version: %v", bin, err)
	}
	// "2.1.332 (Claude Code)"
	v, _, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	if v == "" {
		return "", fmt.Errorf("claudecode: %s --version printed nothing", bin)
	}
	return v, nil
}

// InstallCommand returns the npm command line that installs version under
// root, as .ci/run runs it.
func InstallCommand(root, version string) []string {
	return []string{"npm", "install", "--prefix", Dir(root, version),
		"--no-audit", "--no-fund", "--no-save", "--loglevel=error",
		Package + "@" + version}
}

// installMu serialises installs within one test binary; npm itself copes
// with concurrent installs of the same prefix poorly.
var installMu sync.Mutex

// Install returns the binary of version under root, installing it from the
// npm registry first when it is missing. npm's own cache is kept under root
// too, never in the user's ~/.npm.
func Install(ctx context.Context, root, version string) (string, error) {
	installMu.Lock()
	defer installMu.Unlock()
	if bin, err := Installed(ctx, root, version); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("claudecode: %v", err)
	}
	// Install into a fresh directory and move it into place, so that an
	// interrupted install never passes for a complete one.
	tmp, err := os.MkdirTemp(root, ".install-"+version+"-")
	if err != nil {
		return "", fmt.Errorf("claudecode: %v", err)
	}
	defer os.RemoveAll(tmp)
	args := InstallCommand(root, version)
	for i, a := range args {
		if a == Dir(root, version) {
			args[i] = tmp
		}
	}
	ctx, cancel := context.WithTimeout(ctx, InstallTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(root, ".npm"), "npm_config_update_notifier=false")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("claudecode: %s: %v\n%s", strings.Join(args, " "), err, out.Bytes())
	}
	dst := Dir(root, version)
	if err := os.RemoveAll(dst); err != nil {
		return "", fmt.Errorf("claudecode: %v", err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return "", fmt.Errorf("claudecode: %v", err)
	}
	return Installed(ctx, root, version)
}

// Binary returns the pinned Claude Code's binary (or the release
// $OMEGA_CLAUDE_VERSION names) for a test, installing it into the cache when
// .ci/run has not. It needs npm, node and tmux: missing ones fail the test in
// CI and skip it elsewhere.
func Binary(t testing.TB) string {
	t.Helper()
	testenv.EndToEnd(t)
	testenv.Need(t, "npm", "node", "tmux")
	root, err := CacheRoot()
	if err != nil {
		t.Fatal(err)
	}
	version := Release()
	if err := termagent.CheckRelease(version); err != nil {
		t.Fatalf("%v (%s)", err, VersionEnv)
	}
	ctx := context.Background()
	if bin, err := Installed(ctx, root, version); err == nil {
		return bin
	}
	t.Logf("claudecode: installing %s@%s under %s", Package, version, root)
	start := time.Now()
	bin, err := Install(ctx, root, version)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("claudecode: installed in %v", time.Since(start).Round(time.Second))
	return bin
}
