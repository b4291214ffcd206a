package watcher

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/pollset"
	"github.com/omega-monitor/omega-monitor/tick"
)

// Settings are a watcher's tuning flags: parsed by the caller into a flag
// set bound with FlagSet, checked here to refuse a bad value early, then
// handed to the loop as they were given.
type Settings struct {
	WorkProbe, ProgressProbe, NudgeText string
	// OnChange is a shell command run once per change of state (poll's
	// on-change); $OMEGA_MONITOR_ON_CHANGE is every watcher's.
	OnChange                 string
	NudgeTextSet             bool // --nudge-text was given, even empty
	NudgeBudget, Interval    int
	Mux, SSHConfig, ProbeDir string
	// HumanIdle is how long, in seconds, a human's last input at the agent
	// counts them there: nothing paged, nothing nudged (0: off).
	HumanIdle int
	// MuxWake is how many seconds of no output in the watched pane make
	// the multiplexer wake the watcher (0: off; MuxWakeAuto, the default
	// of FlagSet: decided by the agent's hooks; wakemux.go).
	MuxWake int
	// Pane is the pane the watcher follows, by its id (%N): watch pins
	// the session's active pane when it starts, so that switching windows
	// never moves the nudges to another pane.
	Pane string
	// Window is the window[.pane] part of a session:window[.pane] target
	// (WindowTarget), until ResolveWindow settles it.
	Window string
}

// FlagSet returns a flag set named name bound to f.
func (f *Settings) FlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.StringVar(&f.WorkProbe, "work-probe", "", "shell `command` printing the amount of work remaining")
	fs.StringVar(&f.ProgressProbe, "progress-probe", "", "shell `command` printing a monotonic progress count")
	fs.IntVar(&f.NudgeBudget, "nudge-budget", 5, "`N` nudges without progress before escalating (0 to 1000; 0: never nudge, each stall is told once)")
	f.Interval = 60
	fs.Var((*cmdline.Seconds)(&f.Interval), "interval", "`seconds` between polls, 1 to 86400 (30, or 30s, 2m)")
	fs.StringVar(&f.NudgeText, "nudge-text", "", "the `text` a nudge types (default \""+tick.DefaultNudgeText+"\")")
	f.HumanIdle = 60
	fs.Var((*cmdline.Seconds)(&f.HumanIdle), "human-idle", "`seconds` a human counts as at the agent after their last input at a client showing its pane, 0 to 3600 (60, or 1m): nothing is paged or nudged meanwhile (a question waiting 10 minutes is paged anyway); 0: off (no key is typed within 5 s of a human's input either way)")
	f.MuxWake = MuxWakeAuto
	fs.Var((*muxWakeFlag)(&f.MuxWake), "mux-wake", "`seconds` of no output in the watched pane after which the multiplexer itself wakes the watcher, 1 to 300, for agents without hooks; auto (the default): 2 where the agent the first poll recognises has no hooks of ours installed (an agent without hooks, hooks not installed, an ssh target), none where it has; 0: off. Its alerts are armed only while no client is attached to the session and the window is in no other session (tmux would ring an attached client's bell at each), so an operator looking at the pane gets the regular polls. Its wakes add at most a tenth to the polls' looks. Local and ssh targets (tmux on the host, over the watcher's connection)")
	fs.StringVar(&f.OnChange, "on-change", "", "shell `command` run once per change of state, never waited for, under the probes' clock, with OMEGA_MONITOR_WATCHER, _TARGET, _OLD_STATE, _NEW_STATE, _RULE, _WORK and _PROGRESS in its environment (default $OMEGA_MONITOR_ON_CHANGE)")
	fs.StringVar(&f.Mux, "mux", "", "multiplexer binary `path` (default $OMEGA_MONITOR_MUX, ~/.local/bin/rmux, tmux)")
	fs.StringVar(&f.SSHConfig, "ssh-config", "", "ssh config `path` (default ~/.ssh/config)")
	fs.StringVar(&f.ProbeDir, "probe-dir", "", "the `dir`ectory the probes run in (default: the pane's working directory; for an ssh target, the current one)")
	fs.StringVar(&f.Pane, "pane", "", "the pane to watch, by its `id` (%N; default: the session's active pane when the watcher starts)")
	return fs
}

// Parsed records what parsing alone cannot tell: whether --nudge-text was
// given at all, since an empty one is refused rather than ignored.
func (f *Settings) Parsed(fs *flag.FlagSet) {
	fs.Visit(func(fl *flag.Flag) {
		if fl.Name == "nudge-text" {
			f.NudgeTextSet = true
		}
	})
}

// The bounds of a watcher's numeric flags. Beyond them a value is a typo,
// and shell arithmetic or sleep would read it as something else.
const (
	MaxInterval    = 86400 // a day between polls
	MaxCallTimeout = 3600  // OMEGA_MONITOR_TIMEOUT, seconds
)

// Check validates every flag of a watcher, and the settings its environment
// gives it, before anything starts. It is the one place where a watcher's
// settings are checked: watch calls it before it says "watching", and the
// loop's start call (loop-env) calls it again, so that a loop started by hand
// is held to the same rules. It makes the paths absolute, since the loop runs
// elsewhere, and returns the first problem found, worded for the operator.
func (f *Settings) Check(getenv func(string) string) error {
	if f.Interval < 1 || f.Interval > MaxInterval {
		return fmt.Errorf("--interval must be a whole number of seconds from 1 to %d; got %d", MaxInterval, f.Interval)
	}
	if err := pollset.CheckNudgeBudget(f.NudgeBudget); err != nil {
		return err
	}
	if err := pollset.CheckHumanIdle(f.HumanIdle); err != nil {
		return err
	}
	if (f.MuxWake < 0 || f.MuxWake > MaxMuxWake) && f.MuxWake != MuxWakeAuto {
		return fmt.Errorf("--mux-wake must be auto or a whole number of seconds from 0 (off) to %d; got %d", MaxMuxWake, f.MuxWake)
	}
	if f.NudgeTextSet {
		if err := pollset.CheckNudgeText(f.NudgeText); err != nil {
			return fmt.Errorf("--nudge-text: %w", err)
		}
	}
	for _, p := range []struct {
		name  string
		value *string
	}{{"--ssh-config", &f.SSHConfig}, {"--probe-dir", &f.ProbeDir}} {
		if *p.value == "" {
			continue
		}
		abs, err := filepath.Abs(*p.value)
		if err != nil {
			return fmt.Errorf("%s: %v", p.name, err)
		}
		*p.value = abs
	}
	if f.ProbeDir != "" {
		fi, err := os.Stat(f.ProbeDir)
		if err != nil || !fi.IsDir() {
			return fmt.Errorf("--probe-dir %s is not a directory", f.ProbeDir)
		}
	}
	if _, err := checkCommand(f.OnChange); err != nil {
		return fmt.Errorf("--on-change: %w", err)
	}
	if f.Pane != "" && !isPaneID(f.Pane) {
		return fmt.Errorf("--pane takes a pane id, %%N (tmux display-message -p '#{pane_id}' prints it); got %q", f.Pane)
	}
	_, err := EnvSettings(getenv)
	return err
}

// isPaneID says whether s looks like a pane id: %, then 1 to 9 digits.
// Checked by hand: a pattern compiled at init costs every poll's start.
func isPaneID(s string) bool {
	d, ok := strings.CutPrefix(s, "%")
	return ok && isDigits(d, 9)
}

// isDigits says whether s is 1 to max ASCII digits.
func isDigits(s string, max int) bool {
	return s != "" && len(s) <= max && strings.Trim(s, "0123456789") == ""
}

// envSetting is one setting a watcher takes from its environment.
type envSetting struct {
	name  string
	check func(string) (string, error) // the value to hand over, or why not
}

// envSettingList lists every setting of the environment that the README names
// for a watcher and its alert funnel. watch hands each one to the detached
// watcher explicitly (set, or unset when the caller has none), because the
// multiplexer would otherwise give the loop its server's environment.
var envSettingList = []envSetting{
	{"OMEGA_MONITOR_TIMEOUT", checkCount("OMEGA_MONITOR_TIMEOUT", 1, MaxCallTimeout)},
	{"OMEGA_MONITOR_ALERT_SEND", absPath},
	{"OMEGA_TELEGRAM_CONF", absPath},
	{"OMEGA_TELEGRAM_API", checkAPI},
	{"OMEGA_ALERT_TRIES", checkCount("OMEGA_ALERT_TRIES", 1, 100)},
	{"OMEGA_ALERT_DEADLINE", checkCount("OMEGA_ALERT_DEADLINE", 1, 3600)},
	{"OMEGA_ALERT_BACKOFF", checkCount("OMEGA_ALERT_BACKOFF", 0, 600)},
	{"OMEGA_ALERT_TIMEOUT", checkCount("OMEGA_ALERT_TIMEOUT", 1, 600)},
	{"OMEGA_ALERT_EXPIRY", checkDelivery("OMEGA_ALERT_EXPIRY")},
	{"OMEGA_ALERT_RETRY", checkDelivery("OMEGA_ALERT_RETRY")},
	{"OMEGA_MONITOR_ON_CHANGE", checkCommand},
	{"OMEGA_NOTIFY_TRIES", checkCount("OMEGA_NOTIFY_TRIES", 1, 10)},
	{"OMEGA_NOTIFY_TIMEOUT", checkCount("OMEGA_NOTIFY_TIMEOUT", 1, 60)},
	{"OMEGA_NOTIFY_BACKOFF", checkCount("OMEGA_NOTIFY_BACKOFF", 0, 30)},
}

// checkCommand accepts a shell command of one line: a newline would end
// the loop's settings line it travels in.
func checkCommand(v string) (string, error) {
	if strings.ContainsFunc(v, unicode.IsControl) {
		return "", fmt.Errorf("want a command of one line, without control characters; got %q", v)
	}
	return v, nil
}

// EnvSettings reads and checks the environment settings: name to value, for
// those that are set.
func EnvSettings(getenv func(string) string) (map[string]string, error) {
	out := make(map[string]string)
	for _, s := range envSettingList {
		v := getenv(s.name)
		if v == "" {
			continue
		}
		v, err := s.check(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		out[s.name] = v
	}
	return out, nil
}

// checkDelivery checks the deliverer's setting name as deliver reads it.
func checkDelivery(name string) func(string) (string, error) {
	return func(v string) (string, error) {
		if _, err := pollset.DeliverOptionsFrom(func(k string) string {
			if k == name {
				return v
			}
			return ""
		}); err != nil {
			return "", err
		}
		return v, nil
	}
}

func checkCount(name string, lo, hi int) func(string) (string, error) {
	return func(v string) (string, error) {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return "", fmt.Errorf("want a whole number from %d to %d; got %q", lo, hi, v)
		}
		return strconv.Itoa(n), nil
	}
}

// absPath makes a path absolute: the watcher does not run where its caller
// did.
func absPath(v string) (string, error) {
	return filepath.Abs(v)
}

// checkAPI accepts an http(s) address with a host, as curl takes it. It is
// read by hand: net/url would cost every start of the binary its package
// initialisation, for one setting.
func checkAPI(v string) (string, error) {
	rest, ok := strings.CutPrefix(v, "https://")
	if !ok {
		rest, ok = strings.CutPrefix(v, "http://")
	}
	host, _, _ := strings.Cut(rest, "/")
	if !ok || host == "" || strings.HasPrefix(host, ":") || strings.ContainsAny(v, " \t\"\\?#") || strings.ContainsFunc(v, unicode.IsControl) {
		return "", fmt.Errorf("want an http(s) address; got %q", v)
	}
	if strings.HasPrefix(v, "http://") && !loopback(host) {
		return "", fmt.Errorf("%q is plain http to another machine: the bot token would cross the network in clear; use https", v)
	}
	return v, nil
}

// loopback says whether host (with its port, if any) is this machine:
// localhost, 127.0.0.0/8 or [::1].
func loopback(host string) bool {
	if rest, ok := strings.CutPrefix(host, "[::1]"); ok {
		return rest == "" || isPort(rest)
	}
	name, port, hasPort := strings.Cut(host, ":")
	if hasPort && !isPort(":"+port) {
		return false
	}
	if name == "localhost" {
		return true
	}
	octets := strings.Split(name, ".")
	if len(octets) != 4 || octets[0] != "127" {
		return false
	}
	for _, o := range octets {
		if o == "" || len(o) > 3 || strings.Trim(o, "0123456789") != "" {
			return false
		}
	}
	return true
}

// isPort says whether s is ":" and a port number's digits.
func isPort(s string) bool {
	d, ok := strings.CutPrefix(s, ":")
	return ok && d != "" && len(d) <= 5 && strings.Trim(d, "0123456789") == ""
}

// CheckAPI checks an $OMEGA_TELEGRAM_API value as a watcher does: an
// http(s) address, plain http only to this machine. The answer receiver
// holds the same line, so that no address the funnel refuses is used to
// carry the bot token.
func CheckAPI(v string) (string, error) { return checkAPI(v) }

// Target reads a watcher's one target argument once fs has parsed f, for
// watch (window: a session:window[.pane] is taken too, resolved when the
// watcher starts) and for the loop's own start (loop-env), so that both
// refuse the same things: a target unsafe by coord's rules, and a flag's
// value out of range. Without --probe-dir, the loop's probes run in its
// current directory; watch leaves it to Start, which takes the pane's.
// The message is a usage error's, naming the flag.
func (f *Settings) Target(arg string, fs *flag.FlagSet, window bool, getenv func(string) string) (coord.Target, error) {
	target, err := coord.ParseTarget(arg)
	if w, win := WindowTarget(arg); win != "" && window {
		target, err, f.Window = w, nil, win
	}
	if err != nil {
		return coord.Target{}, fmt.Errorf("refusing target %q: %s", arg, unsafeWhy(err))
	}
	f.Parsed(fs)
	if f.ProbeDir == "" && !window {
		wd, err := os.Getwd()
		if err != nil {
			return coord.Target{}, fmt.Errorf("no current directory for the probes (give --probe-dir): %v", err)
		}
		f.ProbeDir = wd
	}
	return target, f.Check(getenv)
}

// EnvHelp names the settings a watcher takes from the environment, for the
// usage of omega-monitor and of watch.
const EnvHelp = `Environment, handed to a watcher as set where it starts: OMEGA_MONITOR_HOME,
OMEGA_MONITOR_MUX (or --mux), OMEGA_MONITOR_TIMEOUT (each call's clock, seconds,
default 20), OMEGA_MONITOR_ALERT_SEND (the alert funnel, default
~/.omega/bin/omega-alert-send.sh; run as FUNNEL --stdin, the message on its
standard input), OMEGA_TELEGRAM_CONF (default ~/.omega/telegram.conf),
OMEGA_TELEGRAM_API (the Bot API's base address, default
https://api.telegram.org: the funnel adds /bot<token>/sendMessage; a 404 is a
token Telegram does not know, or this address wrong), OMEGA_ALERT_TRIES,
OMEGA_ALERT_DEADLINE, OMEGA_ALERT_BACKOFF,
OMEGA_ALERT_TIMEOUT, OMEGA_MONITOR_ON_CHANGE, OMEGA_NOTIFY_TRIES,
OMEGA_NOTIFY_TIMEOUT, OMEGA_NOTIFY_BACKOFF.
`

// unsafeWhy is why a name was refused, in an operator's words: an unsafe
// name's reason without the package that found it.
func unsafeWhy(err error) string {
	if u := (*coord.UnsafeError)(nil); errors.As(err, &u) {
		return u.Why()
	}
	return err.Error()
}

// Typo says whether a local target's bare word is a command's name mistyped:
// near one of names, and no session of that name here (typo, and what to
// say); near one, with a session of that name, it is watched, and said is
// that. A word near no command says nothing.
func Typo(ctx context.Context, m coord.Mux, target coord.Target, names []string) (typo bool, said string) {
	word := target.Session
	near := cmdline.Nearest(word, names)
	if near == "" || !target.Local() || strings.Trim(word, "abcdefghijklmnopqrstuvwxyz-") != "" {
		return false, ""
	}
	if here, _ := m.HasSession(ctx, target); here {
		return false, fmt.Sprintf("%s is a session here: watching it (the command is %s)", word, near)
	}
	return true, fmt.Sprintf("no command %s: did you mean %s? (no session %s here either; %s)", word, near, word, cmdline.HelpHint(""))
}

// MuxWakeAuto is --mux-wake auto: the multiplexer's wakes,
// after muxWakeAutoSilence seconds, unless the agent the first poll
// recognises has hooks of ours installed, which wake the watcher already.
const MuxWakeAuto = -1

// muxWakeAutoSilence is the silence --mux-wake auto arms, in seconds.
const muxWakeAutoSilence = 2

// muxWakeFlag is --mux-wake's value: auto, or seconds as cmdline.Seconds
// reads them.
type muxWakeFlag int

func (m *muxWakeFlag) String() string { return muxWakeString(int(*m)) }

// Set reads v.
func (m *muxWakeFlag) Set(v string) error {
	if v == "auto" {
		*m = MuxWakeAuto
		return nil
	}
	var s cmdline.Seconds
	if err := s.Set(v); err != nil || s < 0 {
		return errors.New(`not auto, 0 (off) or a number of seconds such as "2" or "5s"`)
	}
	*m = muxWakeFlag(s)
	return nil
}

// muxWakeString is --mux-wake's value n as the flag takes it.
func muxWakeString(n int) string {
	if n == MuxWakeAuto {
		return "auto"
	}
	return strconv.Itoa(n)
}

// muxWakeSilence is the silence that arms the multiplexer's wakes for
// --mux-wake n, in seconds (0: none).
func muxWakeSilence(n int) int {
	if n == MuxWakeAuto {
		return muxWakeAutoSilence
	}
	return n
}
