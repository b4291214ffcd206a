package watcher

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/alert"
	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/internal/poll"
	"github.com/omega-monitor/omega-monitor/internal/pollset"
	"github.com/omega-monitor/omega-monitor/internal/proc"
	"github.com/omega-monitor/omega-monitor/internal/remotewake"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/probe"
	"github.com/omega-monitor/omega-monitor/tick"
)

// wakeGather is how long after a wake the loop still takes wakes into the
// same poll: a burst of hooks is one poll, and hooks fired in a loop cannot
// bring polls closer together than this. A hook that announces a dialog
// fires before it is drawn, so this is hardly a delay.
const wakeGather = 250 * time.Millisecond

// defaultCallTimeout is the wall clock of one loop call, in seconds.
const defaultCallTimeout = 20

// A LoopEnv is everything the poll loop needs, resolved once.
type LoopEnv struct {
	target  coord.Target
	watcher string
	state   string
	bin     string
	timeout int // seconds
	flags   Settings
	pid     int
	mux     string // local multiplexer; "" with muxErr
	muxErr  string
	control string // ssh ControlMaster socket
	ssh     coord.SSH
	funnel  string
	home    string            // $HOME, where the agents keep their files
	answers bool              // the operator's chat answers questions: see Answer
	words   bool              // and a reply as a free-text option's words
	env     map[string]string // the settings of the environment, checked
	// events are the agents' events logs a remote frame carries, as the
	// descriptions, built in and the operator's, read when the watcher
	// started (classify.EventsLogs).
	events []probe.EventsLog
}

// Answer says that the operator's chat answers questions (answers=on, and
// someone allowed to answer): a relayed question the watcher can read as a
// menu carries its options as buttons; and, with freeText (free_text=on),
// that a reply is typed as the words of its free-text option.
func (e *LoopEnv) Answer(on, freeText bool) { e.answers, e.words = on, on && freeText }

func NewLoopEnv(target coord.Target, f Settings, pid int, getenv func(string) string) (*LoopEnv, error) {
	e := &LoopEnv{target: target, flags: f, pid: pid, timeout: defaultCallTimeout}
	env, err := EnvSettings(getenv)
	if err != nil {
		return nil, err
	}
	e.env = env
	if t, ok := env["OMEGA_MONITOR_TIMEOUT"]; ok {
		e.timeout, _ = strconv.Atoi(t) // checked by envSettings
	}
	e.watcher = getenv("OMEGA_MONITOR_WATCHER")
	if e.watcher == "" {
		e.watcher = coord.WatcherName(target)
	} else if err := coord.CheckSession(e.watcher); err != nil {
		return nil, fmt.Errorf("OMEGA_MONITOR_WATCHER: %v", err)
	}
	e.state = getenv("OMEGA_MONITOR_STATE")
	if e.state == "" {
		home, err := statedir.Home(getenv)
		if err != nil {
			return nil, err
		}
		e.state = filepath.Join(home, e.watcher)
	}
	state, err := filepath.Abs(e.state)
	if err != nil {
		return nil, fmt.Errorf("state directory: %v", err)
	}
	e.state = state
	e.bin = getenv("OMEGA_MONITOR_BIN")
	if e.bin == "" {
		if self, err := os.Executable(); err == nil {
			e.bin = self
		}
	}
	e.home = getenv("HOME")
	// A bad rules file is said by the tick; the built-in logs go on.
	local, _ := poll.WatcherRules(getenv)
	e.events = classify.EventsLogs(local)
	e.funnel = alert.FunnelPath(getenv, e.home)
	if target.Local() {
		// A missing multiplexer is said on every poll, not refused: the
		// watcher keeps watching and the line says why it sees nothing.
		mux, err := coord.MuxBinary(f.Mux, getenv)
		if err != nil {
			e.muxErr = err.Error()
		}
		e.mux = mux
	} else {
		e.ssh = coord.SSH{Config: f.SSHConfig, Timeout: time.Duration(e.timeout) * time.Second}
		e.control = coord.ControlPath(e.state, os.Getuid())
	}
	return e, nil
}

// Prepare makes the state directory and writes loop.json, unless another
// loop holds the directory: the loop takes its lock (hold) right after.
func (e *LoopEnv) Prepare() error {
	// watch looks at the lock for a moment while it waits for this loop to
	// start: a lock held that briefly is not another loop.
	if free, h, err := statedir.Dir(e.state).WaitFree(2 * time.Second); err == nil && !free {
		return fmt.Errorf("%s is held by %s: one loop per state directory", e.state, h)
	}
	// Checked before anything is changed or written: a directory another
	// user owns or can write, or a link, is refused, never followed.
	for _, dir := range []string{e.state, filepath.Join(e.state, statedir.Actions), filepath.Join(e.state, statedir.PollDir)} {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("state directory: %v", err)
		}
		if err := statedir.CheckPrivate(dir); err != nil {
			return fmt.Errorf("state directory: %v", err)
		}
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("state directory: %v", err)
		}
	}
	if err := statedir.CheckPrivate(filepath.Dir(e.state)); err != nil {
		return fmt.Errorf("state home: %v", err)
	}
	if dir := filepath.Dir(e.control); e.control != "" && dir != e.state {
		if err := privateDir(dir); err != nil {
			return fmt.Errorf("ssh control directory: %v", err)
		}
	}
	// The history's sweep belongs to a watcher's start; one that fails
	// leaves the history as it was, for the next start to try again.
	statedir.Dir(e.state).SweepHistory(statedir.HistoryKeep)
	token, err := startToken(e.pid)
	if err != nil {
		return fmt.Errorf("loop-env: process %d: %v", e.pid, err)
	}
	rec := statedir.LoopRecord{
		Pid: e.pid, StartToken: token, StartedAt: time.Now().UTC().Truncate(time.Second),
		IntervalS: e.flags.Interval, Target: e.target.String(), Watcher: e.watcher,
		Version: cmdline.Version(), Settings: e.settings(), Socket: e.socket(),
		Poll: e.pollSettings(),
	}
	if err := pollset.Check(*rec.Poll); err != nil {
		return fmt.Errorf("loop-env: %w", err)
	}
	// What the mux wakes of a killed loop left is undone before this
	// one's listener arms them again, whether it will or not.
	if e.target.Local() && e.mux != "" {
		DisarmMuxWake(context.Background(), coord.Mux{Bin: e.mux, SSH: coord.SSH{Timeout: muxCallTimeout}}, "", e.state)
	} else if !e.target.Local() {
		DisarmMuxWake(context.Background(), remoteMux(e.state, e.flags.SSHConfig), e.target.Host, e.state)
	}
	// Where the last loop's wake relay stood is not where this one's will.
	os.Remove(statedir.Dir(e.state).Path(statedir.RemoteWake))
	os.Remove(statedir.Dir(e.state).Path(statedir.MuxWoke)) // a wake the last loop never polled for
	return statedir.Dir(e.state).WriteRecord(statedir.Loop, rec)
}

// pollSettings are the settings each poll reads, as the loop runs with
// them.
func (e *LoopEnv) pollSettings() *statedir.PollSettings {
	s := pollset.Default(e.target.String())
	s.IntervalS = e.flags.Interval
	s.HumanIdleS = e.flags.HumanIdle
	s.NudgeBudget = e.flags.NudgeBudget
	s.NudgeText = e.nudgeText()
	s.OnChange = e.onChange()
	s.OnChangeTimeoutS = e.timeout
	s.Answers, s.FreeText = e.answers, e.words
	if e.target.Local() {
		s.AgentStatusDir = e.statusDir()
	}
	return &s
}

// statusDir is where Claude Code keeps ~/.claude/sessions/<pid>.json
// naming its pane.
func (e *LoopEnv) statusDir() string { return filepath.Join(e.home, ".claude", "sessions") }

// socket is the local multiplexer server's socket path, which an agent's
// hook compares with its $TMUX to find its watcher; "" for a remote target
// or a server that does not answer now (its hooks then wake nothing, and
// the poll catches everything as before).
func (e *LoopEnv) socket() string {
	if !e.target.Local() || e.mux == "" || e.muxErr != "" {
		return ""
	}
	m := coord.Mux{Bin: e.mux, SSH: coord.SSH{Timeout: 3 * time.Second}}
	out, err := m.Run(context.Background(), "", "display-message", "-p", "-t", e.paneTarget(), "#{socket_path}")
	s := strings.TrimSpace(string(out))
	if err != nil || !filepath.IsAbs(s) || strings.ContainsAny(s, "\n\r") {
		return ""
	}
	return s
}

// privateDir makes dir, this user's alone: owned by this user, not a link,
// and neither readable nor writable by anyone else. Another user's
// directory there could hold a socket that poses as this user's ssh master.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := statedir.CheckPrivate(dir); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s is not a private directory", dir)
	}
	return nil
}

// settings are the flags as the loop runs with them.
func (e *LoopEnv) settings() map[string]string {
	s := map[string]string{
		"interval":     strconv.Itoa(e.flags.Interval),
		"nudge_budget": strconv.Itoa(e.flags.NudgeBudget),
		"nudge_text":   e.nudgeText(),
		"call_timeout": strconv.Itoa(e.timeout),
		"human_idle":   strconv.Itoa(e.flags.HumanIdle),
	}
	if e.flags.MuxWake != 0 {
		s["mux_wake"] = muxWakeString(e.flags.MuxWake)
	}
	for k, v := range map[string]string{"work_probe": e.flags.WorkProbe, "progress_probe": e.flags.ProgressProbe,
		"mux": e.mux, "ssh_config": e.flags.SSHConfig, "probe_dir": e.flags.ProbeDir, "funnel": e.funnel, "pane": e.flags.Pane} {
		if v != "" {
			s[k] = v
		}
	}
	for k, v := range e.env {
		s[k] = v
	}
	return s
}

// describe is the effective settings in one line, for the loop's log at
// start. The Telegram config is named, never read.
func (e *LoopEnv) describe() string {
	s := e.settings()
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+strconv.Quote(s[k]))
	}
	return strings.Join(parts, " ")
}

func (e *LoopEnv) nudgeText() string {
	if e.flags.NudgeText != "" {
		return e.flags.NudgeText
	}
	return tick.DefaultNudgeText
}

// call is the command line that runs the multiplexer with args, here or on
// the host. stdin says the call reads standard input (load-buffer -).
func (e *LoopEnv) call(stdin bool, args ...string) []string {
	if e.target.Local() {
		return append([]string{e.mux}, args...)
	}
	words := []string{"ssh"}
	if !stdin {
		words = append(words, "-n")
	}
	words = append(words, e.ssh.LoopOptions(e.control, e.flags.Interval+60)...)
	// The remote side gives up a little before this side does.
	return append(words, "--", e.target.Host, coord.RemoteMux(e.remoteSecs(), args...))
}

func (e *LoopEnv) remoteSecs() int { return max(1, e.timeout-1) }

func (e *LoopEnv) capture() []string {
	if e.target.Local() {
		return append([]string{e.mux}, capture.Args(e.paneTarget())...)
	}
	words := append([]string{"ssh", "-n"}, e.ssh.LoopOptions(e.control, e.flags.Interval+60)...)
	return append(words, "--", e.target.Host, capture.Remote(e.remoteSecs(), e.paneTarget(), e.events))
}

// paneTarget is the multiplexer's target of every capture and every key:
// the pinned pane, or the session's active pane when none is pinned.
func (e *LoopEnv) paneTarget() string {
	if e.flags.Pane != "" {
		return e.flags.Pane
	}
	return coord.Exact(e.target.Session)
}

// shell renders the loop's settings as bash assignments, every value quoted.
func (e *LoopEnv) Shell() string {
	var b strings.Builder
	scalar := func(name, value string) { fmt.Fprintf(&b, "%s=%s\n", name, coord.ShellQuote(value)) }
	array := func(name string, words []string) { fmt.Fprintf(&b, "%s=(%s)\n", name, coord.ShellJoin(words...)) }
	exact := e.paneTarget()
	buffer := "omega-monitor-" + strconv.Itoa(e.pid)

	scalar("target", e.target.String())
	scalar("host", e.target.Host)
	scalar("watcher", e.watcher)
	scalar("state", e.state)
	scalar("interval", strconv.Itoa(e.flags.Interval))
	scalar("call_timeout", strconv.Itoa(e.timeout))
	// The loop keeps a byte past a remote frame's cap, for the tick to
	// refuse; a local frame is the local multiplexer's, and costs no pipe.
	captureCap := ""
	if !e.target.Local() {
		captureCap = strconv.Itoa(capture.MaxFrame + 1)
	}
	scalar("capture_cap", captureCap)
	scalar("work_probe", e.flags.WorkProbe)
	scalar("progress_probe", e.flags.ProgressProbe)
	scalar("funnel", e.funnel)
	scalar("mux_error", e.muxErr)
	scalar("probe_dir", e.flags.ProbeDir)
	scalar("settings_said", e.describe())
	// What the pane of the watcher's own session says of itself, and of a
	// Ctrl-C typed there.
	// Short lines: an 80-column terminal breaks none of them.
	scalar("banner", "This is the watcher of "+e.target.String()+"; its lines follow.\n"+
		"Detach with Ctrl-b d (it goes on). Ctrl-C here does not stop it.\n"+
		"Stop it with: omega-monitor stop "+e.target.String())
	scalar("interrupt_said", "Ctrl-C does not stop this watcher of "+e.target.String()+".\n"+
		"Detach with Ctrl-b d; stop it with: omega-monitor stop "+e.target.String())
	// The wakes that come within this of the first make one poll.
	scalar("wake_gather_us", strconv.Itoa(int(wakeGather/time.Microsecond)))

	common := []string{"--state", e.state, "--target", e.target.String()}
	// Each poll reads the settings from loop.json (pollSettings): the
	// loop passes the state directory and the readings only.
	tickArgs := []string{e.bin, "tick", "--state", e.state, "--frame"}
	array("tick", tickArgs)
	// The judge runs the calls of the binary the loop makes (tick, confirm,
	// ack) in one process it keeps, each call's contract unchanged.
	array("judge_run", []string{e.bin, "judge", "--binary", e.bin})
	confirm := append([]string{e.bin, "confirm"}, common...)
	if e.target.Local() {
		confirm = append(confirm, "--agent-status-dir", e.statusDir())
	}
	array("confirm", confirm)
	array("ack", append([]string{e.bin, "ack"}, common...))
	array("deliver", append(append([]string{e.bin, "deliver"}, common...), "--funnel", e.funnel))
	array("hold", append(append([]string{e.bin, "hold", "--fd", "8"}, common[:2]...),
		"--pid", strconv.Itoa(e.pid), "--watcher", e.watcher, "--target", e.target.String()))
	array("capture", e.capture())
	scalar("pastes", filepath.Join(e.state, statedir.Pastes))
	// Every key and paste of ours is sent only while the pane is as the
	// last look saw it (the condition the look wrote, on standard input):
	// the multiplexer tests it and sends the key in one command. Text goes
	// through a paste buffer of the loop's own, which no argument parser
	// sees; loading it types nothing.
	array("load_buffer", e.call(true, "load-buffer", "-b", buffer, "-"))
	array("paste_if", e.conditional("paste-buffer -d -r -b "+coord.ShellQuote(buffer)+" -t "+coord.ShellQuote(exact)))
	for _, k := range statedir.Keys {
		array("key_"+k, e.conditional("send-keys -t "+coord.ShellQuote(exact)+" "+k))
	}
	// The diff of the pane's worktree, when the tick asks for it (a NNN.diff
	// action): diff_run runs its command here or on the host, over the
	// loop's ssh connection.
	if e.target.Local() {
		array("diff_run", []string{"/bin/sh", "-c"})
	} else {
		array("diff_run", append(append([]string{"ssh", "-n"}, e.ssh.LoopOptions(e.control, e.flags.Interval+60)...), "--", e.target.Host))
	}
	if e.target.Local() {
		array("close_master", nil)
	} else {
		words := append([]string{"ssh", "-n"}, e.ssh.LoopOptions(e.control, e.flags.Interval+60)...)
		array("close_master", append(words, "-O", "exit", "--", e.target.Host))
	}
	array("wake_relay", e.wakeRelay())
	return b.String()
}

// conditional is the command line that has the multiplexer run cmd (one
// of its commands, as its own command parser reads it) on the pane only
// while the condition on the call's standard input holds (coord.IfScript):
// here, or on the host over the loop's connection.
func (e *LoopEnv) conditional(cmd string) []string {
	if e.target.Local() {
		return []string{"sh", "-c", coord.IfScript, e.mux, e.paneTarget(), cmd}
	}
	words := append([]string{"ssh"}, e.ssh.LoopOptions(e.control, e.flags.Interval+60)...)
	return append(words, "--", e.target.Host, coord.RemoteIf(e.remoteSecs(), e.paneTarget(), cmd))
}

// wakeRelay is the command line of a remote target's wake relay, which the
// loop starts beside itself (remotewake): it keeps the host's listener
// running over the loop's ControlMaster, so that the agent's hooks on the
// host wake this watcher. Its ssh has a session but no terminal (-T), and
// no forwarding of any kind (LoopOptions); the listener's command is fixed
// but for the pane target. None for a local target, whose hooks signal
// the loop themselves. Unless --mux-wake is 0, the multiplexer wakes it
// too (wake --mux, with --auto for --mux-wake auto): the local one, or the
// host's over the loop's connection, beside the relay of the host's
// listener.
func (e *LoopEnv) wakeRelay() []string {
	mux := []string{"--target", e.paneTarget(), "--silence", strconv.Itoa(muxWakeSilence(e.flags.MuxWake)), "--interval", strconv.Itoa(e.flags.Interval)}
	if e.flags.MuxWake == MuxWakeAuto {
		mux = append(mux, "--auto")
	}
	if e.target.Local() {
		if e.flags.MuxWake == 0 || e.mux == "" {
			return nil
		}
		return append([]string{e.bin, "wake", "--mux", "--state", e.state, "--mux-bin", e.mux}, mux...)
	}
	listen := append([]string{"ssh", "-T"}, e.ssh.ClientOptions(e.control)...)
	listen = append(listen, "--", e.target.Host, remotewake.ListenCommand(e.paneTarget()))
	if e.flags.MuxWake != 0 {
		return append(append([]string{e.bin, "wake", "--mux", "--state", e.state, "--host", e.target.Host, "--ssh-config", e.flags.SSHConfig},
			mux...), append([]string{"--timeout", strconv.Itoa(e.timeout), "--"}, listen...)...)
	}
	return append([]string{e.bin, "wake", "--relay", "--state", e.state, "--timeout", strconv.Itoa(e.timeout), "--"}, listen...)
}

// startToken tells process pid apart from a later process with the same id,
// as everything reads it back (package proc).
func startToken(pid int) (string, error) {
	token, running := proc.StartToken(pid)
	if !running {
		return "", fmt.Errorf("no process %d runs", pid)
	}
	return token, nil
}

// onChange is the watcher's on-change command: its own, else every
// watcher's ($OMEGA_MONITOR_ON_CHANGE, checked with the settings).
func (e *LoopEnv) onChange() string {
	if e.flags.OnChange != "" {
		return e.flags.OnChange
	}
	return e.env["OMEGA_MONITOR_ON_CHANGE"]
}
