package watcher

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/internal/printable"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
)

// Start starts a watcher of target: a detached multiplexer session of its
// own (coord.WatcherName) running the loop script, installed for this
// binary's version, over the target, with f's settings as they were given
// (fs is the flag set they were parsed with) and the environment's settings
// handed over. It refuses a target already watched or not there, and a
// state directory another loop holds. It waits until the loop holds its
// state directory, and returns what to tell the operator, and warnings: the
// target's pane shows no agent, or the multiplexer hides its title.
func Start(ctx context.Context, m coord.Mux, target coord.Target, fs *flag.FlagSet, f Settings, getenv func(string) string) (said string, warnings []string, err error) {
	if err := CheckFence(ctx, m, target, getenv); err != nil {
		return "", nil, err
	}
	watcher := coord.WatcherName(target)
	watched, err := m.HasSession(ctx, coord.Target{Session: watcher})
	if err != nil {
		return "", nil, err
	}
	if watched {
		return "", nil, fmt.Errorf("%s is already watched by %s (stop it with: omega-monitor stop %s)", target, watcher, target)
	}
	exists, err := m.HasSession(ctx, target)
	if err != nil {
		return "", nil, fmt.Errorf("cannot check %s: %v", target, err)
	}
	if !exists {
		where := "here"
		if !target.Local() {
			where = "on " + target.Host
		}
		return "", nil, fmt.Errorf("no session %s %s (omega-monitor list shows what is watchable)", target.Session, where)
	}

	pane, err := pinPane(ctx, m, target, f.Pane)
	if err != nil {
		return "", nil, err
	}
	f.Pane = pane
	if f.ProbeDir == "" {
		f.ProbeDir = ProbeDir(ctx, m, target, pane)
	}
	// Each probe once, in the foreground: a probe that reads nothing
	// where it runs is said now, not found in the logs after a nudge.
	probes := TryProbes(ctx, f, getenv("HOME"))
	home, err := statedir.Home(getenv)
	if err != nil {
		return "", nil, err
	}
	loop, err := InstallLoop(home)
	if err == nil {
		err = CheckLoopVersion(loop) // another watch may have rewritten it since
	}
	if err != nil {
		return "", nil, err
	}
	// A loop started by hand, or an old one still cleaning up, holds
	// the state directory: two loops would type into one pane in turns.
	if free, h, err := statedir.Dir(filepath.Join(home, watcher)).Free(); err != nil || !free {
		if err != nil {
			return "", nil, err
		}
		return "", nil, fmt.Errorf("%s is already watched: its state directory is held by %s", target, h)
	}
	if err := WriteTarget(home, watcher, target); err != nil {
		return "", nil, err
	}
	self, err := os.Executable()
	if err != nil {
		return "", nil, fmt.Errorf("cannot find this binary: %v", err)
	}
	settings, _ := EnvSettings(getenv) // checked with the flags
	command := loopCommand(self, home, watcher, loop, target, fs, f, settings, getenv)
	// The loop runs in the probe directory: the probes are its children.
	// remain-on-exit, set in the same call, keeps the pane of a loop that
	// dies at start, so that what it said can be read back.
	if _, err := m.Run(ctx, "", "new-session", "-d", "-s", watcher, "-c", f.ProbeDir, command,
		";", "set-option", "-w", "-t", coord.Exact(watcher), "remain-on-exit", "on"); err != nil {
		var ce *coord.CallError
		if errors.As(err, &ce) && strings.Contains(ce.Stderr, "duplicate session") {
			return "", nil, fmt.Errorf("%s is already watched by %s", target, watcher)
		}
		return "", nil, fmt.Errorf("cannot start the watcher %s: %v", watcher, err)
	}
	started, why := awaitStart(ctx, m, watcher, filepath.Join(home, watcher), startWait)
	if !started {
		return "", nil, fmt.Errorf("the watcher of %s died at start: %s", target, why)
	}
	m.Run(ctx, "", "set-option", "-w", "-t", coord.Exact(watcher), "remain-on-exit", "off")
	said = fmt.Sprintf("watching %s in %s, pane %s (stop it with: omega-monitor stop %s)%s", target, watcher, pane, target, why)
	for _, p := range probes {
		said += "\n  " + printable.String(p)
	}
	if !agentOnScreen(ctx, m, target, pane) {
		warnings = append(warnings, "no agent recognised in its pane (a shell, an editor, another window?): is the agent in this pane? It will not be nudged")
	}
	if titlesOff(ctx, m, target, pane) {
		warnings = append(warnings, TitlesOffWarning)
	}
	return said, warnings, nil
}

// TitlesOffWarning is what watch says at start when the multiplexer does
// not let the pane's programs set its title.
const TitlesOffWarning = "the multiplexer keeps the agent from setting its pane's title (allow-set-title is off): " +
	"the title's working and waiting marks, a second witness beside the screen, are unreadable here " +
	"(tmux set-option -g allow-set-title on, then restart the agent)"

// titlesOff reports whether the multiplexer says programs in the pane may
// not set its title: tmux 3.4 and later print 0 for allow-set-title off.
// An older tmux has no such option (the format prints nothing: titles are
// always allowed) and an error says nothing against them.
func titlesOff(ctx context.Context, m coord.Mux, target coord.Target, pane string) bool {
	out, err := m.Run(ctx, target.Host, "display-message", "-p", "-t", pane, "#{allow-set-title}")
	return err == nil && TitlesOff(string(out))
}

// TitlesOff reads the multiplexer's #{allow-set-title}: off only when it
// says so.
func TitlesOff(out string) bool {
	switch strings.TrimSpace(out) {
	case "0", "off":
		return true
	}
	return false
}

// agentOnScreen reports whether the target's pane shows an agent (or its
// transcript) now; a pane that cannot be read says nothing against it.
func agentOnScreen(ctx context.Context, m coord.Mux, target coord.Target, pane string) bool {
	out, framed, err := capturePane(ctx, m, target, pane)
	if err != nil {
		return true
	}
	c, err := capture.Read(bytes.NewReader(out), capture.Options{Framed: framed})
	if err != nil || c.Screen == nil {
		return true
	}
	r := classify.Classify(c.Screen, classify.Options{})
	return r.Agent != "" || r.Seen != "" || r.State == classify.Working || r.State == classify.Question
}

// startWait bounds how long watch waits for a new loop to take its lock.
const startWait = 20 * time.Second

// awaitStart waits until the new watcher's loop holds its state directory
// (it has started), or its pane is dead (it has not: why is what it said,
// and the session is ended). A loop that says nothing within startWait is
// taken as started, and why says so.
func awaitStart(ctx context.Context, m coord.Mux, watcher, state string, within time.Duration) (started bool, why string) {
	deadline := time.Now().Add(within)
	pane := coord.Exact(watcher)
	for {
		if free, _, err := statedir.Dir(state).Free(); err == nil && !free {
			return true, ""
		}
		out, err := m.Run(ctx, "", "display-message", "-p", "-t", pane, "#{pane_dead}")
		if err != nil {
			return false, "its session ended, leaving no word (is bash installed?)"
		}
		if strings.TrimSpace(string(out)) == "1" {
			said, _ := m.Run(ctx, "", "capture-pane", "-p", "-t", pane)
			m.Run(ctx, "", "kill-session", "-t", coord.Exact(watcher))
			return false, deadPaneWords(string(said))
		}
		if time.Now().After(deadline) {
			return true, fmt.Sprintf(" (its loop has not confirmed within %v: see omega-monitor logs)", within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// deadPaneWords is what a dead pane shows, on one line, without the
// multiplexer's own "Pane is dead" notice.
func deadPaneWords(screen string) string {
	var words []string
	for _, l := range strings.Split(screen, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "Pane is dead") {
			continue
		}
		words = append(words, l)
	}
	if len(words) == 0 {
		return "it said nothing"
	}
	if len(words) > 5 {
		words = words[len(words)-5:]
	}
	return strings.Join(words, " / ")
}

// loopCommand is the shell command line the watcher session runs: the loop
// script with its environment and the flags as they were given, every word
// quoted, because the multiplexer hands the line to a shell. Every setting
// of envSettingList is handed over explicitly, set to the caller's value or
// unset: the multiplexer server's own environment must not decide where the
// watcher's alerts go.
func loopCommand(self, home, watcher, loop string, target coord.Target, fs *flag.FlagSet, f Settings, settings map[string]string, getenv func(string) string) string {
	words := []string{"env"}
	for _, s := range envSettingList {
		if _, ok := settings[s.name]; !ok {
			words = append(words, "-u", s.name)
		}
	}
	// HOME too: ~/.omega (the funnel, its config) is the caller's.
	if h := getenv("HOME"); h != "" {
		words = append(words, "HOME="+h)
	}
	words = append(words,
		"OMEGA_MONITOR_BIN="+self,
		"OMEGA_MONITOR_HOME="+home,
		"OMEGA_MONITOR_WATCHER="+watcher,
		"OMEGA_MONITOR_SESSION=1", // the loop's pane is an operator's to attach to
		"OMEGA_MONITOR_STATE="+filepath.Join(home, watcher),
	)
	if mux := getenv("OMEGA_MONITOR_MUX"); mux != "" {
		words = append(words, "OMEGA_MONITOR_MUX="+mux)
	}
	for _, s := range envSettingList {
		if v, ok := settings[s.name]; ok {
			words = append(words, s.name+"="+v)
		}
	}
	words = append(words, loop, target.String())
	values := map[string]string{
		"work-probe":     f.WorkProbe,
		"progress-probe": f.ProgressProbe,
		"nudge-budget":   strconv.Itoa(f.NudgeBudget),
		"interval":       strconv.Itoa(f.Interval),
		"human-idle":     strconv.Itoa(f.HumanIdle),
		"mux-wake":       muxWakeString(f.MuxWake),
		"nudge-text":     f.NudgeText,
		"on-change":      f.OnChange,
		"mux":            f.Mux,
		"ssh-config":     f.SSHConfig,
		"pane":           f.Pane,
	}
	fs.Visit(func(fl *flag.Flag) {
		if v, ok := values[fl.Name]; ok {
			words = append(words, "--"+fl.Name, v)
		}
	})
	// Always: the probes' directory as watch resolved it (--probe-dir, or
	// the pane's), not the loop's.
	if f.ProbeDir != "" {
		words = append(words, "--probe-dir", f.ProbeDir)
	}
	// Always: the pane pinned at start, whether named or found.
	if f.Pane != "" && !slices.Contains(words, "--pane") {
		words = append(words, "--pane", f.Pane)
	}
	return "exec " + coord.ShellJoin(words...)
}

// ErrFence is wrapped by CheckFence's refusals: a usage error, not a
// failure.
var ErrFence = errors.New("watcher: outside the fence")

// A FenceError is a target refused by the fence: Why says why, in words
// for the operator; it is an ErrFence.
type FenceError struct{ Why string }

func (e *FenceError) Error() string { return e.Why + ": " + ErrFence.Error() }

// Is makes a FenceError an ErrFence.
func (e *FenceError) Is(target error) bool { return target == ErrFence }

func fenceError(format string, a ...any) error { return &FenceError{Why: fmt.Sprintf(format, a...)} }

// CheckFence refuses a target the watcher must never watch: a session of
// this tool's own (a watcher, monitor-*, or a scheduled audit, audit-*),
// and the caller's own session, named by the pane it runs in ($TMUX_PANE,
// $RMUX_PANE): a watcher typing into the session it was started from types
// into its operator's own prompt. The seed: point the watcher at the
// worker, never at your own session.
func CheckFence(ctx context.Context, m coord.Mux, target coord.Target, getenv func(string) string) error {
	switch {
	case coord.IsWatcher(target.Session):
		return fenceError("%s is a watcher's own session; watch the agent's session instead", target.Session)
	case strings.HasPrefix(target.Session, "audit-"):
		return fenceError("%s is a scheduled audit's session; watch the agent's session instead", target.Session)
	case !target.Local():
		return nil
	}
	for _, name := range []string{"TMUX_PANE", "RMUX_PANE"} {
		pane := getenv(name)
		if pane == "" {
			continue
		}
		out, err := m.Run(ctx, "", "display-message", "-p", "-t", pane, "#{session_name}")
		if err != nil {
			continue // not this multiplexer's pane: not the target's server
		}
		if own := strings.TrimSpace(string(out)); own == target.Session {
			return fenceError("%s is your own session (you run in its pane %s); point the watcher at the agent's session, never at your own", target.Session, pane)
		}
	}
	return nil
}

// pinPane returns the pane the watcher will follow: the one named, once it
// is checked to be the target session's, or the session's active pane now.
func pinPane(ctx context.Context, m coord.Mux, target coord.Target, named string) (string, error) {
	if named == "" {
		out, err := m.Run(ctx, target.Host, "display-message", "-p", "-t", coord.Exact(target.Session), "#{pane_id}")
		if err != nil {
			return "", fmt.Errorf("cannot find the active pane of %s: %v", target, err)
		}
		pane := strings.TrimSpace(string(out))
		if !isPaneID(pane) {
			return "", fmt.Errorf("the active pane of %s has no id (%q)", target, pane)
		}
		return pane, nil
	}
	out, err := m.Run(ctx, target.Host, "display-message", "-p", "-t", named, "#{session_name}")
	if err != nil {
		return "", fmt.Errorf("no pane %s: %v", named, err)
	}
	if s := strings.TrimSpace(string(out)); s != target.Session {
		return "", fmt.Errorf("pane %s is in session %s, not %s", named, s, target.Session)
	}
	return named, nil
}

// WindowTarget reads arg as session:window[.pane] (as tmux names a pane,
// window and pane in digits) when it has that shape
// and its session is a safe name: the local session, and the window (and
// pane) part. Otherwise the zero Target.
func WindowTarget(arg string) (coord.Target, string) {
	session, w, ok := strings.Cut(arg, ":")
	if !ok || session == "" || coord.CheckSession(session) != nil {
		return coord.Target{}, ""
	}
	window, pane, hasPane := strings.Cut(w, ".")
	if !isDigits(window, 5) || hasPane && !isDigits(pane, 5) {
		return coord.Target{}, ""
	}
	return coord.Target{Session: session}, w
}

// ResolveWindow settles a target that names a window (WindowTarget): an
// ssh alias of the session's name makes it host:session, as it always
// was; otherwise it is the local session, and the pane that window (and
// pane number) names is pinned in f.Pane. Any other target is returned as
// it is.
func ResolveWindow(ctx context.Context, m coord.Mux, t coord.Target, f *Settings) (coord.Target, error) {
	w := f.Window
	if w == "" {
		return t, nil
	}
	if cfg, err := coord.LoadSSHConfig(f.SSHConfig); err == nil && slices.Contains(cfg.Aliases(), t.Session) {
		remote, err := coord.ParseTarget(t.Session + ":" + w)
		if err != nil {
			return coord.Target{}, fmt.Errorf("refusing target %q: %s", t.Session+":"+w, unsafeWhy(err))
		}
		return remote, nil
	}
	out, err := m.Run(ctx, "", "display-message", "-p", "-t", "="+t.Session+":"+w, "#{pane_id}")
	pane := strings.TrimSpace(string(out))
	if err != nil || !isPaneID(pane) {
		return coord.Target{}, fmt.Errorf("no pane %s:%s here (and no ssh alias %s)", t.Session, w, t.Session)
	}
	if f.Pane != "" && f.Pane != pane {
		return coord.Target{}, fmt.Errorf("%s:%s is pane %s, but --pane says %s", t.Session, w, pane, f.Pane)
	}
	f.Pane = pane
	return t, nil
}

// DeliveryWarning is what the start of a watcher says of its alerts: that
// none can be delivered (no funnel set up, and no channels file), or that
// they reach more people than the operator; "" when neither.
func DeliveryWarning(getenv func(string) string, userHome string) string {
	home, _ := statedir.Home(getenv)
	_, channelsErr := os.Lstat(filepath.Join(home, statedir.Channels))
	if why := alert.Undeliverable(getenv, userHome); why != "" && channelsErr != nil {
		return "alerts cannot be delivered: " + why + "; escalations are kept in alert-failed.log and the watcher's lines say NOT delivered"
	}
	if who := alert.Audience(getenv, userHome); who != "" {
		return "alerts reach more than you: " + who
	}
	return ""
}
