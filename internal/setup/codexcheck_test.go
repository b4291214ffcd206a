package setup

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/omega-monitor/omega-monitor/internal/codex"
)

// codexOnPath writes a program called codex, of script's text, into a
// directory of its own, and returns an env whose PATH holds only it.
func codexOnPath(t *testing.T, script string) Env {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "codex"), []byte("#!/bin/sh\n"+script), 0o700); err != nil {
		t.Fatal(err)
	}
	return testEnv(t, map[string]string{"PATH": dir})
}

// TestInstallCodexPutsBackWhatCodexDoesNotRead: a Codex that cannot read
// the file, that reads another server under our name, or that does not
// answer, has install put config.toml back byte for byte (or take away the
// one it made) and fail with Codex's reason, one line, bounded, without
// escapes.
func TestInstallCodexPutsBackWhatCodexDoesNotRead(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 5000)
	for _, tc := range []struct {
		name, script, before string
		err                  []string
	}{
		{name: "Codex cannot read the file",
			script: "echo 'WARNING: proceeding' >&2\nprintf 'Error: failed to load\\033]0;pwned\\007 configuration\\n\\nCaused by:\\n    0: config.toml:1:9: " + long + "\\n    1: more\\n' >&2\nexit 1\n",
			before: "model = o3\n",
			err:    []string{"is not what Codex reads (codex mcp get omega-monitor: failed to load configuration: config.toml:1:9: xxx", "…): put back as it was"}},
		{name: "Codex reads another server under our name",
			script: `echo '{"name":"omega-monitor","enabled":true,"transport":{"type":"stdio","command":"/usr/bin/other","args":["mcp"]}}'` + "\n",
			before: "# mine\n",
			err:    []string{`Codex reads it as stdio "/usr/bin/other" ["mcp"]`}},
		{name: "Codex has it disabled",
			script: `echo '{"name":"omega-monitor","enabled":false,"disabled_reason":"not allowed here","transport":{"type":"stdio","command":"` + testBin + `","args":["mcp"]}}'` + "\n",
			before: "# mine\n",
			err:    []string{"Codex has it disabled: not allowed here"}},
		{name: "Codex prints no JSON, into a config install made", script: "echo 'Usage: codex'\n",
			err: []string{"printed no server Codex reads: Usage: codex"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			env := codexOnPath(t, tc.script)
			config := filepath.Join(env.Home, ".codex", "config.toml")
			if tc.before != "" {
				if err := os.MkdirAll(filepath.Dir(config), 0o700); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(config, []byte(tc.before), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			_, err := install(t, env, Options{Codex: true})
			if err == nil {
				t.Fatal("install succeeded")
			}
			for _, want := range tc.err {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q, want it to hold %q", err, want)
				}
			}
			if strings.ContainsAny(err.Error(), "\x1b\x07\n") || len(err.Error()) > 2*maxCodexReason+len(config)+200 {
				t.Errorf("error not sanitized or not bounded (%d bytes): %q", len(err.Error()), err)
			}
			got, rerr := os.ReadFile(config)
			if tc.before == "" && !os.IsNotExist(rerr) {
				t.Errorf("the config.toml install made is still there: %q (%v)", got, rerr)
			}
			if tc.before != "" && string(got) != tc.before {
				t.Errorf("config.toml not put back: %q, want %q", got, tc.before)
			}
			if _, err := os.Lstat(config + codexBackupSuffix); !os.IsNotExist(err) {
				t.Errorf("the backup of a failed install is left: %v", err)
			}
		})
	}
}

// TestCodexCheckBounded: a Codex that never answers is given up on.
func TestCodexCheckBounded(t *testing.T) {
	t.Parallel()
	env := codexOnPath(t, "exec sleep 60\n")
	c := codexCheckFor(env)
	c.timeout = 300 * time.Millisecond
	f := codexFilesIn(filepath.Join(env.Home, ".codex"))
	f.check = c
	var created createdRecord
	_, err := f.install(testBin, &codexServer{Command: testBin, Args: []string{"mcp"}}, &created)
	if err == nil || !strings.Contains(err.Error(), "codex mcp get omega-monitor did not answer within 300ms") {
		t.Errorf("install with a Codex that hangs: %v", err)
	}
	if _, err := os.Lstat(f.config); !os.IsNotExist(err) {
		t.Errorf("config.toml is left: %v", err)
	}
}

// TestCodexReason: Codex's error and its first cause, on one line.
func TestCodexReason(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ out, want string }{
		{"WARNING: w\nError: failed to load bootstrap configuration\n\nCaused by:\n    0: /h/config.toml:1:5: string values must be quoted\n    1: TOML parse error\n\nStack backtrace:\n   0: <unknown>\n",
			"failed to load bootstrap configuration: /h/config.toml:1:5: string values must be quoted"},
		{"Error: No MCP server named 'omega-monitor' found.\n\nStack backtrace:\n   0: <unknown>\n", "No MCP server named 'omega-monitor' found."},
		{"WARNING: w\nsomething\tbroke \x1b[31mred\x1b[0m\n\n", "something broke red"},
		{"", "exit status 1"},
	} {
		if diff := cmp.Diff(tc.want, codexReason(tc.out, errExit1)); diff != "" {
			t.Errorf("codexReason(%q) (-want +got):\n%s", tc.out, diff)
		}
	}
}

var errExit1 = errors.New("exit status 1")

// TestInstallCodexAsksTheRealCodex: with the pinned Codex on PATH, install
// into a config Codex reads says what it always says; into one Codex
// cannot read (which the scanner does not look into: a value), it fails
// with Codex's reason, naming the line, and puts the file back.
func TestInstallCodexAsksTheRealCodex(t *testing.T) {
	bin := codex.Pin.Binary(t)
	t.Parallel()
	env := testEnv(t, map[string]string{"PATH": filepath.Dir(bin)})
	quietEnv := testEnv(t, nil)
	mine := "# mine\nmodel = \"o3\"\n"
	for _, e := range []Env{env, quietEnv} {
		if err := os.MkdirAll(filepath.Join(e.Home, ".codex"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(e.Home, ".codex", "config.toml"), []byte(mine), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	config := filepath.Join(env.Home, ".codex", "config.toml")
	out, err := install(t, env, Options{Codex: true})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	quiet, err := install(t, quietEnv, Options{Codex: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(strings.ReplaceAll(quiet, quietEnv.Home, env.Home), out); diff != "" {
		t.Errorf("install with Codex on PATH said more or less than without (-without +with):\n%s", diff)
	}
	if got, _ := os.ReadFile(config); string(got) != mine+"\n"+ourTableText {
		t.Errorf("config.toml holds %q", got)
	}
	if out, err := install(t, env, Options{Codex: true, Uninstall: true}); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}

	broken := "# mine\nmodel = o3\n"
	if err := os.WriteFile(config, []byte(broken), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err = install(t, env, Options{Codex: true})
	if err == nil || !strings.Contains(err.Error(), "is not what Codex reads (codex mcp get omega-monitor: ") || !strings.Contains(err.Error(), "config.toml:2:") {
		t.Errorf("install into a config Codex cannot read: %v", err)
	}
	t.Logf("install into a config Codex cannot read: %v", err)
	if got, _ := os.ReadFile(config); string(got) != broken {
		t.Errorf("config.toml not put back: %q", got)
	}
}
