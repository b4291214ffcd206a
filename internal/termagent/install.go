// Package termagent runs a real terminal agent program for tests: it
// installs a pinned npm package into a cache directory, starts the program in
// a pane of a private tmux server with a HOME of its own, types into it and
// captures its screen. Packages codex and gemini say how each program is
// pinned and pointed at a fake model API; this package knows no agent.
//
// It is a test helper. It never touches the user's HOME, and it does not
// decide what a screen means: that is package classify's job, which the
// golden captures made with it check.
package termagent

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// A Pin is one npm package at one version, installed under a cache
// directory of its own.
type Pin struct {
	// Package is the npm package; Version its pinned release.
	Package, Version string
	// VersionEnv names the environment variable that overrides Version
	// for one test run (scripts/agent-upgrade.sh runs the tour against a
	// newer release that way, from a cache of its own); unset or empty,
	// the pinned Version holds.
	VersionEnv string
	// CacheEnv names the environment variable that overrides the cache
	// root; Cache is the root's name under the user's cache directory
	// (omega-monitor/<Cache>).
	CacheEnv, Cache string
	// Binaries are the paths, relative to the install prefix, where the
	// program may be found, best first.
	Binaries []string
	// VersionOf reads the version out of what the program prints for
	// --version.
	VersionOf func(out string) string
}

// InstallTimeout bounds one npm install from cold on a loaded machine.
const InstallTimeout = 10 * time.Minute

// Release returns the version the tests run: $VersionEnv when set, else
// the pinned Version.
func (p Pin) Release() string {
	if p.VersionEnv != "" {
		if v := os.Getenv(p.VersionEnv); v != "" {
			return v
		}
	}
	return p.Version
}

// CheckRelease says what is wrong with a version to install: it names a
// directory under the cache and an npm package spec, so it is a plain
// version string and nothing else.
func CheckRelease(v string) error {
	if v == "" || v[0] == '.' || v[0] == '-' || strings.ContainsFunc(v, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '.' || r == '-' || r == '+')
	}) {
		return fmt.Errorf("termagent: %q is not a version", v)
	}
	return nil
}

// CacheRoot returns the directory holding one installation per version.
func (p Pin) CacheRoot() (string, error) {
	if dir := os.Getenv(p.CacheEnv); dir != "" {
		return filepath.Abs(dir)
	}
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("termagent: no cache directory: %v", err)
	}
	return filepath.Join(dir, "omega-monitor", p.Cache), nil
}

// Dir returns the install prefix of the release under root.
func (p Pin) Dir(root string) string { return filepath.Join(root, p.Release()) }

// Installed returns the program when the release (Release) is installed
// under root and says so itself.
func (p Pin) Installed(ctx context.Context, root string) (string, error) {
	version := p.Release()
	if err := CheckRelease(version); err != nil {
		return "", fmt.Errorf("%v (%s)", err, p.VersionEnv)
	}
	var errs []error
	for _, rel := range p.Binaries {
		bin := filepath.Join(p.Dir(root), rel)
		if _, err := os.Stat(bin); err != nil {
			continue
		}
		got, err := p.BinaryVersion(ctx, bin)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if got != version {
			errs = append(errs, fmt.Errorf("termagent: %s is version %s, want %s", bin, got, version))
			continue
		}
		return bin, nil
	}
	if len(errs) > 0 {
		return "", errors.Join(errs...)
	}
	return "", fmt.Errorf("termagent: %s@%s is not installed under %s", p.Package, version, root)
}

// BinaryVersion runs bin --version and returns the version it prints.
func (p Pin) BinaryVersion(ctx context.Context, bin string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("termagent: %s --version: %v", bin, err)
	}
	if len(bytes.TrimSpace(out)) == 0 {
		out = []byte(stderr.String()) // Pi prints its version there
	}
	v := p.VersionOf(strings.TrimSpace(string(out)))
	if v == "" {
		return "", fmt.Errorf("termagent: %s --version printed %q", bin, out)
	}
	return v, nil
}

var installMu sync.Mutex

// Install returns the program, installing the release from the npm
// registry first when it is missing, into a fresh directory moved into
// place, so that an interrupted install never passes for a complete one.
func (p Pin) Install(ctx context.Context, root string) (string, error) {
	installMu.Lock()
	defer installMu.Unlock()
	version := p.Release()
	if err := CheckRelease(version); err != nil {
		return "", fmt.Errorf("%v (%s)", err, p.VersionEnv)
	}
	if bin, err := p.Installed(ctx, root); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", fmt.Errorf("termagent: %v", err)
	}
	tmp, err := os.MkdirTemp(root, ".install-"+version+"-")
	if err != nil {
		return "", fmt.Errorf("termagent: %v", err)
	}
	defer os.RemoveAll(tmp)
	ctx, cancel := context.WithTimeout(ctx, InstallTimeout)
	defer cancel()
	args := []string{"install", "--prefix", tmp, "--no-audit", "--no-fund", "--no-save", "--loglevel=error", p.Package + "@" + version}
	cmd := exec.CommandContext(ctx, "npm", args...)
	cmd.Env = append(os.Environ(), "npm_config_cache="+filepath.Join(root, ".npm"), "npm_config_update_notifier=false")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("termagent: npm %s: %v\n%s", strings.Join(args, " "), err, out.Bytes())
	}
	if err := os.RemoveAll(p.Dir(root)); err != nil {
		return "", fmt.Errorf("termagent: %v", err)
	}
	if err := os.Rename(tmp, p.Dir(root)); err != nil {
		return "", fmt.Errorf("termagent: %v", err)
	}
	return p.Installed(ctx, root)
}

// Binary returns the pinned program for a test (or the release
// $VersionEnv names), installing it into the cache when .ci/run has not. It needs npm, node and tmux: missing ones fail
// the test in CI and skip it elsewhere.
func (p Pin) Binary(t testing.TB) string {
	t.Helper()
	testenv.EndToEnd(t)
	testenv.Need(t, "npm", "node", "tmux")
	root, err := p.CacheRoot()
	if err != nil {
		t.Fatal(err)
	}
	if bin, err := p.Installed(t.Context(), root); err == nil {
		return bin
	}
	t.Logf("termagent: installing %s@%s under %s", p.Package, p.Release(), root)
	bin, err := p.Install(t.Context(), root)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}
