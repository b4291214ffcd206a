// Package setup puts in place what omega-monitor needs beside its binary:
// the alert funnel in ~/.omega/bin and the private directories, and, for
// Claude Code, the /monitor command file and the user-scope registration of
// the MCP server in ~/.claude.json, and for Codex the $monitor skill and the
// server's table in its config.toml. Each step changes only what differs
// and says what it changed; the agents' steps can be undone, and never
// remove what they did not write. It can also send a test alert through the
// installed funnel.
//
// It is not the command line (flags, usage and exit codes are the
// command's), nor the watcher: the loop itself needs no install, the binary
// carries it. It reads the environment only through Env.
package setup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
	"github.com/omega-monitor/omega-monitor/internal/pkgerr"
	"github.com/omega-monitor/omega-monitor/internal/procgroup"
	"github.com/omega-monitor/omega-monitor/internal/relay"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/scripts"
)

// Env is where setup puts things, and what it reads of the environment.
type Env struct {
	Home  string // the user's home directory
	State string // the state home
	// Bin is the omega-monitor binary, symlinks resolved, that the command
	// file and the registration run; empty means this process's
	// executable.
	Bin string
	// Getenv looks up OMEGA_TELEGRAM_CONF, OMEGA_MONITOR_ALERT_SEND and
	// OMEGA_MONITOR_HOME; nil means os.Getenv.
	Getenv func(string) string
	// Environ is the environment the funnel runs in; nil means this
	// process's.
	Environ func() []string
	// FindMCPServer returns the path of the MCP server's binary, or why
	// there is none; Options.Claude installs nothing without it. Nil
	// means no check.
	FindMCPServer func() (string, error)
	// FindNotify returns the path of omega-monitor-notify, which a test
	// alert runs to reach the channels of the state home's channels file,
	// when there is one. Nil: the test alert says it cannot reach them.
	FindNotify func() (string, error)
}

func (e Env) getenv(name string) string {
	if e.Getenv == nil {
		return os.Getenv(name)
	}
	return e.Getenv(name)
}

func (e Env) omega() string  { return filepath.Join(e.Home, ".omega") }
func (e Env) bin() string    { return filepath.Join(e.omega(), "bin") }
func (e Env) funnel() string { return alert.DefaultFunnel(e.Home) }
func (e Env) conf() string   { return alert.ConfPath(e.getenv, e.Home) }

// Options says what Install does beyond the alert funnel.
type Options struct {
	TestAlert bool // then send a test alert through the funnel
	Claude    bool // also install /monitor and the MCP server into Claude Code
	Codex     bool // also install $monitor (a skill) and the MCP server into Codex
	Uninstall bool // with Claude or Codex alone: remove what they installed, and nothing else
	// Hooks installs, or with Uninstall removes, our wake hook in the user
	// settings of each agent of HookAgents (install's names: HookClaude,
	// HookCodex, ..., or an agent's of the watchers' rules file; all of
	// them when none), and does nothing else.
	Hooks      bool
	HookAgents []string
	// HooksFound says HookAgents were not asked for by name: an agent
	// not on this machine (no user directory, no program on PATH) is
	// skipped, not given a settings file. Uninstall skips none.
	HooksFound bool
}

// A StepError is the failure of one step of Install.
type StepError struct {
	Step string // "directories", "alert funnel", "claude code" or "codex"
	Err  error
}

func (e *StepError) Error() string { return "setup: " + e.Step + ": " + e.Err.Error() }
func (e *StepError) Unwrap() error { return e.Err }

// An AlertError is a test alert that was not delivered.
type AlertError struct {
	Err    error  // how the funnel failed
	Output string // what it said on standard error, trimmed, or what is wrong with it
}

func (e *AlertError) Error() string {
	s := "setup: test alert not delivered: " + e.Err.Error()
	if e.Output != "" {
		s += ": " + e.Output
	}
	return s
}

func (e *AlertError) Unwrap() error { return e.Err }

// A step is one thing Install puts in place. Each says what it did, and does
// nothing when all is as it should be already.
type step struct {
	name string
	run  func(env Env) (string, error)
}

// steps lists the steps of install, in order.
func steps() []step {
	return []step{
		{"directories", func(e Env) (string, error) {
			var made []string
			for _, d := range []string{e.omega(), e.bin(), e.State} {
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
		{"alert funnel", func(e Env) (string, error) {
			return ensureFile(e.funnel(), scripts.AlertSend, 0o700)
		}},
	}
}

// Install runs the steps opts asks for, printing a line to stdout for each
// ("alert funnel: up to date"), then, unless uninstalling, says so when
// there is no Telegram configuration yet and sends the test alert if asked.
// A failed step is a *StepError and ends Install; an undelivered test alert
// is an *AlertError. ctx bounds the test alert.
func Install(ctx context.Context, env Env, opts Options, stdout io.Writer) error {
	if opts.Hooks {
		if opts.TestAlert {
			return errors.New("setup: hooks go alone, without the test alert")
		}
		return installAllHooks(env, opts, stdout)
	}
	if opts.Uninstall && (!opts.Claude && !opts.Codex || opts.TestAlert) {
		return errors.New("setup: uninstall goes with claude or codex alone")
	}
	// The registration runs omega-monitor mcp, which runs the server's own
	// binary: without it, nothing is installed, rather than an entry that
	// the agent would fail to start.
	if (opts.Claude || opts.Codex) && !opts.Uninstall && env.FindMCPServer != nil {
		if _, err := env.FindMCPServer(); err != nil {
			name := "claude code"
			if !opts.Claude {
				name = "codex"
			}
			return &StepError{name, err}
		}
	}
	todo := steps()
	if opts.Uninstall {
		todo = nil
	}
	for _, a := range []struct {
		on                 bool
		name               string
		install, uninstall func(Env) (string, error)
	}{{opts.Claude, "claude code", installClaude, uninstallClaude}, {opts.Codex, "codex", installCodex, uninstallCodex}} {
		switch {
		case a.on && opts.Uninstall:
			todo = append(todo, step{a.name, a.uninstall})
		case a.on:
			todo = append(todo, step{a.name, a.install})
		}
	}
	for _, s := range todo {
		did, err := s.run(env)
		if err != nil {
			return &StepError{s.name, err}
		}
		if did == "" {
			did = "up to date"
		}
		fmt.Fprintf(stdout, "%s: %s\n", s.name, did)
	}
	if opts.Uninstall {
		return nil
	}
	if _, err := os.Stat(env.conf()); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stdout, "no Telegram config at %s yet: create it (omega-monitor install --help shows how), mode 0600\n%s\n", env.conf(), ChatIDHelp(env.conf()))
	}
	if opts.TestAlert {
		return sendTestAlert(ctx, env, stdout)
	}
	return nil
}

// installAllHooks is Install for opts.Hooks: each agent's step, in order.
func installAllHooks(env Env, opts Options, stdout io.Writer) error {
	specs := hookSpecs(env.Home, env.getenv)
	agents := opts.HookAgents
	if len(agents) == 0 {
		agents = hookAgents(specs)
	}
	for _, agent := range agents {
		name := agent + " hooks"
		if spec, ok := hookSpecOf(specs, agent); ok && opts.HooksFound && !opts.Uninstall {
			if found, looked := agentFound(env, spec); !found {
				fmt.Fprintf(stdout, "%s: skipped, not on this machine (%s); %s writes them all the same\n", name, looked, hookFlag(agent))
				continue
			}
		}
		did, err := installHooks(env, agent, opts.Uninstall)
		if err != nil {
			return &StepError{name, err}
		}
		if did == "" {
			did = "up to date"
		}
		fmt.Fprintf(stdout, "%s: %s\n", name, did)
	}
	return nil
}

// testAlertWait bounds a test alert's tries, the funnel's own bound (120 s
// by default) and some.
const testAlertWait = 3 * time.Minute

// ChatIDHelp is how to find a chat's id: the bot's updates, read with the
// token from the config at conf (curl reads its address from standard
// input, so the token reaches no command line).
func ChatIDHelp(conf string) string {
	q := shellQuote(conf)
	return `To find your chat's id: send your bot a message (in a group: add the bot, then send one), then run
  sed -n 's|^bot_token=\(.*\)|url = "https://api.telegram.org/bot\1/getUpdates"|p' ` + q + ` |
    curl -s -K - | grep -o '"chat":{"id":-\{0,1\}[0-9]*' | sort -u
and put the number it prints as chat_id= in ` + conf + ` (with "omega-monitor relay stop" first: the receiver takes the updates).`
}

// sendTestAlert sends one message through the installed funnel (or
// $OMEGA_MONITOR_ALERT_SEND) and says whether it was delivered.
func sendTestAlert(ctx context.Context, env Env, stdout io.Writer) error {
	funnel := alert.FunnelPath(env.getenv, env.Home)
	ctx, cancel := context.WithTimeout(ctx, testAlertWait)
	defer cancel()
	host, _ := os.Hostname()
	msg := fmt.Sprintf("<b>omega-monitor</b>: test alert from %s, %s", htmlEscape(host), time.Now().UTC().Format(time.RFC3339))
	environ := os.Environ()
	if env.Environ != nil {
		environ = env.Environ()
	}
	fmt.Fprintf(stdout, "sending a test alert through %s to the chat of %s (it retries for up to %s)…\n", funnel, env.conf(), testAlertWait)
	// As a watcher sends: the test is also of the funnel's contract, the
	// message on its standard input (a funnel of the old one fails here).
	err := funnelTest(ctx, env, funnel, environ, msg, stdout)
	if err == nil {
		fmt.Fprintf(stdout, "test alert delivered through %s\n", funnel)
		fmt.Fprintln(stdout, answersSaid(env))
	}
	// The other channels, each said delivered or why not, whatever the
	// funnel did.
	if cerr := channelsTest(ctx, env, environ, msg, stdout); err == nil {
		err = cerr
	}
	return err
}

// funnelTest is the test alert's try through the funnel.
func funnelTest(ctx context.Context, env Env, funnel string, environ []string, msg string, stdout io.Writer) error {
	if err := alert.SendSaying(ctx, funnel, append(environ, "OMEGA_ALERT_TEST=1"), msg, stdout); err != nil {
		var fe *alert.FunnelError
		switch {
		case errors.Is(err, alert.ErrUnread):
			return &AlertError{Err: alert.ErrUnread, Output: funnel + " takes the message as $1, as funnels did before --stdin" +
				" (it may have sent the word --stdin): called with --stdin, a funnel reads the message from its standard input (docs/alerts.md)"}
		// What the funnel said was shown as it came: its last line, the
		// reason, is said again with the verdict.
		case errors.As(err, &fe) && strings.Contains(fe.Stderr, "chat"):
			// Telegram's "chat not found", or a chat_id refused.
			return &AlertError{Err: fe.Err, Output: fe.Said + "\n" + ChatIDHelp(env.conf())}
		case errors.As(err, &fe):
			return &AlertError{Err: fe.Err, Output: fe.Said}
		}
		return &AlertError{Err: err}
	}
	return nil
}

// ErrChannels is a test alert that some channel of the channels file did
// not have.
var ErrChannels = errors.New("not every channel of the channels file has it")

// channelsTest sends the test alert to each channel of the state home's
// channels file, if there is one, through omega-monitor-notify (which
// links the notification library, so that this binary does not), and
// prints a line a channel: delivered, or why not; and every fault of the
// file. The channels' secrets stay in their file: the command line holds
// its directory only.
func channelsTest(ctx context.Context, env Env, environ []string, msg string, stdout io.Writer) error {
	if _, err := os.Lstat(filepath.Join(env.State, statedir.Channels)); err != nil {
		return nil
	}
	fmt.Fprintf(stdout, "sending the test alert to each channel of %s…\n", filepath.Join(env.State, statedir.Channels))
	if env.FindNotify == nil {
		return &AlertError{Err: ErrChannels, Output: "omega-monitor-notify is not found"}
	}
	path, err := env.FindNotify()
	if err != nil {
		return &AlertError{Err: ErrChannels, Output: err.Error()}
	}
	cmd := exec.CommandContext(ctx, path, "send", "--home", env.State, "--test")
	cmd.Env = environ
	cmd.Stdin = strings.NewReader(msg)
	procgroup.Set(cmd, time.Second)
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	runErr := cmd.Run()
	io.WriteString(stdout, out.String())
	failed := strings.Contains(out.String(), "not delivered: ") || strings.Contains(out.String(), "bad: ")
	switch {
	case runErr != nil:
		return &AlertError{Err: ErrChannels, Output: strings.TrimSpace(errb.String() + " " + runErr.Error())}
	case failed:
		return &AlertError{Err: ErrChannels}
	}
	return nil
}

// answersSaid says whether a relayed question will carry its options as
// buttons, and what to change when it will not.
func answersSaid(env Env) string {
	c, err := relay.LoadConfig(env.getenv, env.Home)
	switch {
	case err != nil:
		return "answers from the chat: off (" + err.Error() + ")"
	case c.Check() != nil:
		return "answers from the chat: off; alerts only (" + pkgerr.Why(c.Check()) + ")"
	case c.Private():
		return "answers from the chat: on, in your private chat (omega-monitor watch starts their receiver)" + freeTextSaid(c)
	}
	return fmt.Sprintf("answers from the chat: on, in a group, by %d allowed user(s) (omega-monitor watch starts their receiver)", len(c.AllowUsers)) + freeTextSaid(c)
}

// freeTextSaid says whether a reply to a question is typed as the words of
// its free-text option, and how to change it.
func freeTextSaid(c relay.Config) string {
	if c.FreeText {
		return "; free-text replies: on (a reply to a question is typed into its \"Type something\" field: one line, at most 500 characters)"
	}
	return "; free-text replies: off (add free_text=on to " + c.Path + " to answer \"Type something\" by replying)"
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
