package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/scripts"
	"github.com/omega-monitor/omega-monitor/statedir"
)

const installUsage = `usage: omega-monitor install [--test-alert] [--claude [--uninstall]]

Puts what a watcher needs beside the binary: the alert funnel (embedded in
this binary) as ~/.omega/bin/omega-alert-send.sh, mode 0700, in directories
of mode 0700 (~/.omega, ~/.omega/bin, and the state home ~/.omega/monitor or
$OMEGA_MONITOR_HOME). Run again, it changes only what differs. The loop
needs no install: the binary carries it and writes it for each watcher.

The funnel reads ~/.omega/telegram.conf ($OMEGA_TELEGRAM_CONF), mode 0600:

  bot_token=123456789:AAH-your-token-from-BotFather
  chat_id=-1001234567890

--claude also installs /monitor into Claude Code for this user: the command
file ~/.claude/commands/monitor.md and the read-only MCP server omega-monitor
in ~/.claude.json (the entry claude mcp add --scope user writes). The server
is the binary omega-monitor-mcp, beside this one or on PATH; without it,
--claude installs nothing.
--claude --uninstall removes those two, and nothing of the user's own.

flags:
`

// An installStep is one thing install puts in place. Each says what it did,
// and does nothing when all is as it should be already.
type installStep struct {
	name string
	run  func(env installEnv) (string, error)
}

// installEnv is where install puts things.
type installEnv struct {
	home  string // the user's home directory
	state string // the state home
}

func (e installEnv) omega() string  { return filepath.Join(e.home, ".omega") }
func (e installEnv) bin() string    { return filepath.Join(e.omega(), "bin") }
func (e installEnv) funnel() string { return filepath.Join(e.bin(), "omega-alert-send.sh") }
func (e installEnv) conf() string {
	return envOr("OMEGA_TELEGRAM_CONF", filepath.Join(e.omega(), "telegram.conf"))
}
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// installSteps lists the steps of install, in order; a flag that installs
// more (an agent's configuration) adds its own step.
func installSteps() []installStep {
	return []installStep{
		{"directories", func(e installEnv) (string, error) {
			var made []string
			for _, d := range []string{e.omega(), e.bin(), e.state} {
				did, err := ensureDir(d)
				if err != nil {
					return "", err
				}
				if did != "" {
					made = append(made, did)
				}
			}
			return strings.Join(made, "; "), nil
		}},
		{"alert funnel", func(e installEnv) (string, error) {
			return ensureFile(e.funnel(), scripts.AlertSend, 0o700)
		}},
	}
}

func runInstall(args []string, _ io.Reader, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("install", flag.ContinueOnError)
	testAlert := fset.Bool("test-alert", false, "then send a test alert through the funnel and say whether it was delivered")
	claude := fset.Bool("claude", false, "also install /monitor and the MCP server into Claude Code")
	uninstall := fset.Bool("uninstall", false, "with --claude: remove what --claude installed")
	positional, code, ok := cmdline.ParseInterspersed(fset, args, installUsage, stdout, stderr)
	if !ok {
		return code
	}
	if len(positional) > 0 {
		fmt.Fprintf(stderr, "omega-monitor install: unexpected argument %q\n", positional[0])
		return 2
	}
	if *uninstall && (!*claude || *testAlert) {
		fmt.Fprintln(stderr, "omega-monitor install: --uninstall goes with --claude alone")
		return 2
	}
	home, err := os.UserHomeDir()
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor install: no home directory: %v\n", err)
		return 1
	}
	state, err := statedir.Home()
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor install: %v\n", err)
		return 1
	}
	// The registration runs omega-monitor mcp, which runs the server's own
	// binary: without it, nothing is installed, rather than an entry that
	// Claude Code would fail to start.
	if *claude && !*uninstall {
		if _, err := findMCPServer(); err != nil {
			fmt.Fprintf(stderr, "omega-monitor install: claude code: %v\n", err)
			return 1
		}
	}
	env := installEnv{home: home, state: state}
	steps := installSteps()
	switch {
	case *uninstall:
		steps = []installStep{{"claude code", uninstallClaude}}
	case *claude:
		steps = append(steps, installStep{"claude code", installClaude})
	}
	for _, step := range steps {
		did, err := step.run(env)
		if err != nil {
			fmt.Fprintf(stderr, "omega-monitor install: %s: %v\n", step.name, err)
			return 1
		}
		if did == "" {
			did = "up to date"
		}
		fmt.Fprintf(stdout, "%s: %s\n", step.name, did)
	}
	if *uninstall {
		return 0
	}
	if _, err := os.Stat(env.conf()); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stdout, "no Telegram config at %s yet: create it (omega-monitor install --help shows how), mode 0600\n", env.conf())
	}
	if *testAlert {
		return sendTestAlert(env, stdout, stderr)
	}
	return 0
}

// sendTestAlert sends one message through the installed funnel (or
// $OMEGA_MONITOR_ALERT_SEND) and says whether it was delivered.
func sendTestAlert(env installEnv, stdout, stderr io.Writer) int {
	funnel := envOr("OMEGA_MONITOR_ALERT_SEND", env.funnel())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	host, _ := os.Hostname()
	msg := fmt.Sprintf("<b>omega-monitor</b>: test alert from %s, %s", htmlEscape(host), time.Now().UTC().Format(time.RFC3339))
	cmd := exec.CommandContext(ctx, funnel, msg)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	said := strings.TrimSpace(out.String())
	if err != nil {
		fmt.Fprintf(stderr, "test alert NOT delivered (%v)", err)
		if said != "" {
			fmt.Fprintf(stderr, ":\n%s", said)
		}
		fmt.Fprintln(stderr)
		return 1
	}
	fmt.Fprintf(stdout, "test alert delivered through %s\n", funnel)
	return 0
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

// ensureDir makes dir with mode 0700, or narrows the mode of one that is
// open to others. It says what it did, if anything.
func ensureDir(dir string) (string, error) {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", err
		}
		return "created " + dir, os.Chmod(dir, 0o700)
	case err != nil:
		return "", err
	case !fi.IsDir():
		return "", fmt.Errorf("%s is not a directory", dir)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Sprintf("%s was mode %#o, now 0700", dir, fi.Mode().Perm()), os.Chmod(dir, 0o700)
	}
	return "", nil
}

// ensureFile puts data at path with mode perm, unless it is there already.
func ensureFile(path string, data []byte, perm os.FileMode) (string, error) {
	old, err := os.ReadFile(path)
	if err == nil && bytes.Equal(old, data) {
		fi, err := os.Stat(path)
		if err != nil {
			return "", err
		}
		if fi.Mode().Perm() == perm {
			return "", nil
		}
		return fmt.Sprintf("%s was mode %#o, now %#o", path, fi.Mode().Perm(), perm), os.Chmod(path, perm)
	}
	what := "installed " + path
	if err == nil {
		what = "updated " + path
	}
	return what, atomicfile.Write(path, data, perm)
}
