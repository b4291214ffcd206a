package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/board"
	"github.com/omega-monitor/omega-monitor/capture"
	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/atomicfile"
	"github.com/omega-monitor/omega-monitor/internal/fsutil"
	"github.com/omega-monitor/omega-monitor/ledger"
	"github.com/omega-monitor/omega-monitor/probe"
	"github.com/omega-monitor/omega-monitor/statedir"
	"github.com/omega-monitor/omega-monitor/tick"
)

const tickUsage = `usage: omega-monitor tick --state DIR --target T [--work RAW | --work-error TEXT]
                         [--progress RAW | --progress-error TEXT] [--nudge-budget N]
                         [--nudge-text TEXT] [--capture-error TEXT] < pane

One poll's judgement over a captured pane (capture-pane -p -J, with -e for
the faint attribute). Prints one MONITOR line. What the shell must do is
written to DIR/actions/ as files, in the order to act on them:

  NNN.nudge   the exact text to type, then Enter as a separate call; it is
              already recorded in the echo ledger DIR/ledger
  NNN.enter   our text is in the input box already: Enter only
  NNN.wait    the seconds to wait before the next poll (the watched
              session is gone: a slower pace)
  NNN.diff    a command (for sh -c, or for ssh to the target's host) that
              measures the diff of the pane's working directory, at most
              every 5 minutes; the next tick records its output

Leftover action files from an earlier poll are deleted first: a stale nudge
is unsafe. An escalation goes to DIR/outbox/ instead, one Telegram HTML
message a file, which no poll clears: omega-monitor deliver sends it. DIR
also holds state.json (written atomically, under DIR/state.lock),
history.jsonl (append-only, one JSON object a line) and monitor.log (every
line tick prints).

  --state DIR            the watcher's state directory (created 0700)
  --target T             session or host:session, as the MONITOR line names it
  --work RAW             the work probe's output (it exited 0 in time)
  --work-error TEXT      the work probe failed: the reading is unknown (fails open)
  --progress RAW         the progress probe's output
  --progress-error TEXT  the progress probe failed
  --work-stderr TEXT     what the work probe said on standard error: the
                         reason given in the line when its output is no count
  --progress-stderr TEXT the same for the progress probe
  --nudge-budget N       nudges allowed without progress (default 5)
  --nudge-text TEXT      what a nudge types
  --capture-error TEXT   the capture failed; standard input is not read
  --agent-status FILE    the agent's own status file (Claude Code's
                         ~/.claude/sessions/<pid>.json): a second witness that
                         can only stop a nudge; missing, stale or for another
                         pane, it changes nothing
  --pane ID              the watched pane as session:@window.%pane, which the
                         status file must name
  --diff-output FILE     what the last poll's NNN.diff command printed: the
                         figure, into DIR/diff.json for the board
  --diff-error TEXT      that command failed: why (recorded as not measured)
  --explain              say on standard error what the classifier read, and
                         what the agent's own status said
  --now TIME             the poll's time, RFC 3339 (for tests; default: now)

It exits 0 after any judged poll, errors included (they are in the line),
and 2 for a usage error.
`

// tickFlags are the flags tick and replay share.
type tickFlags struct {
	target      *string
	budget      *int
	nudgeText   *string
	work        optionalString
	progress    optionalString
	workErr     *string
	progressErr *string
	// workSaid and progressSaid are what a probe printed on standard
	// error: the reason, when its output is no count.
	workSaid, progressSaid *string
	// local is the operator's rules file, read with the built-in rules.
	local *classify.Local
}

func addTickFlags(fs *flag.FlagSet) *tickFlags {
	f := &tickFlags{
		target:       fs.String("target", "", "the watched target"),
		budget:       fs.Int("nudge-budget", 5, "nudges without progress"),
		nudgeText:    fs.String("nudge-text", tick.DefaultNudgeText, "what a nudge types"),
		workErr:      fs.String("work-error", "", "the work probe failed"),
		progressErr:  fs.String("progress-error", "", "the progress probe failed"),
		workSaid:     fs.String("work-stderr", "", "what the work probe said on standard error"),
		progressSaid: fs.String("progress-stderr", "", "what the progress probe said on standard error"),
	}
	fs.Var(&f.work, "work", "the work probe's output")
	fs.Var(&f.progress, "progress", "the progress probe's output")
	return f
}

func (f *tickFlags) config() tick.Config {
	return tick.Config{
		Target:      *f.target,
		NudgeBudget: *f.budget,
		NudgeText:   *f.nudgeText,
		HasProgress: f.progress.set || *f.progressErr != "",
	}
}

// input builds a poll's input from the flags and a classified screen.
func (f *tickFlags) input(now time.Time, screen classify.Result) tick.Input {
	in := tick.Input{
		Now:             now,
		Screen:          screen,
		Work:            probe.Read(f.work.value, f.work.set && *f.workErr == ""),
		WorkPresent:     f.work.set || *f.workErr != "",
		WorkError:       *f.workErr,
		Progress:        probe.Read(f.progress.value, f.progress.set && *f.progressErr == ""),
		ProgressPresent: f.progress.set || *f.progressErr != "",
		ProgressError:   *f.progressErr,
	}
	if f.work.set && in.WorkError == "" && !in.Work.Known {
		in.WorkError = unusable(f.work.value, *f.workSaid)
	}
	if f.progress.set && in.ProgressError == "" && !in.Progress.Known {
		in.ProgressError = unusable(f.progress.value, *f.progressSaid)
	}
	return in
}

// unusable says why a probe that exited 0 gave no reading: what it printed,
// and what it said on standard error (a missing file, a bad pattern), which
// is most often the reason.
func unusable(out, said string) string {
	why := "printed nothing"
	if t := strings.TrimSpace(out); t != "" {
		if r := []rune(t); len(r) > 60 {
			t = string(r[:60]) + "…"
		}
		why = fmt.Sprintf("printed %q, not one whole number", t)
	}
	if said = strings.TrimSpace(said); said != "" {
		why += "; it said: " + said
	}
	return why
}

func (f *tickFlags) check() error {
	if *f.target == "" {
		return errors.New("--target is required")
	}
	if _, err := coord.ParseTarget(*f.target); err != nil {
		return err
	}
	if *f.budget < 0 || *f.budget > maxNudgeBudget {
		return fmt.Errorf("--nudge-budget must be a whole number from 0 to %d; got %d", maxNudgeBudget, *f.budget)
	}
	if err := checkNudgeText(*f.nudgeText); err != nil {
		return fmt.Errorf("--nudge-text: %w", err)
	}
	return nil
}

func runTick(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("tick", tickUsage, stderr)
	stateDir := fs.String("state", "", "state directory")
	f := addTickFlags(fs)
	captureErr := fs.String("capture-error", "", "the capture failed")
	nowFlag := fs.String("now", "", "the poll's time, RFC 3339")
	framed := fs.Bool("frame", false, "standard input is a capture frame")
	statusDir := fs.String("agent-status-dir", "", "the agent's status files, on this machine")
	statusFile := fs.String("agent-status", "", "the agent's own status file")
	pane := fs.String("pane", "", "the watched pane")
	explain := fs.Bool("explain", false, "explain on standard error")
	diffOutput := fs.String("diff-output", "", "what the last poll's diff command printed")
	diffFailed := fs.String("diff-error", "", "the last poll's diff command failed")
	if code, stop := parseFlags(fs, args, stdout, tickUsage); stop {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "omega-monitor tick: unexpected argument %q (the pane comes on standard input)\n", fs.Arg(0))
		return 2
	}
	if *stateDir == "" {
		fmt.Fprintln(stderr, "omega-monitor tick: --state is required")
		return 2
	}
	if err := f.check(); err != nil {
		fmt.Fprintf(stderr, "omega-monitor tick: %v\n", err)
		return 2
	}
	now, ok := parseNow(*nowFlag, stderr)
	if !ok {
		return 2
	}
	defer selfDeadline(callDeadline, stderr)()
	d := stateDirectory(*stateDir)
	var problems []string // rendered at the end of the line
	// unusable says why no nudge may go out on this poll: without a state
	// that is read and saved, the budget cannot count it.
	var unusable string
	if err := d.sd().Prepare(); err != nil {
		problems = append(problems, err.Error())
	}
	// The state lock covers the read-modify-write of the state and the
	// hand-over: two ticks at once would each spend the same budget.
	if lock, err := fsutil.Lock(d.path(statedir.StateLock)); err != nil {
		unusable = "the state could not be locked"
		problems = append(problems, "state lock: "+err.Error())
	} else {
		defer lock.Close()
	}
	if err := d.sd().DropStaleActions(); err != nil {
		problems = append(problems, err.Error())
	}
	prev, usable, err := d.loadState(now)
	if err != nil {
		problems = append(problems, err.Error())
	}
	if !usable {
		unusable = "the state file is unusable"
	}
	local, err := watcherRules()
	if msg := reportRulesOnce(*stateDir, err); msg != "" {
		problems = append(problems, msg)
	}
	f.local = local
	var c capture.Capture
	var echo classify.Masker
	if *captureErr == "" {
		m, err := loadLedger(d.path(statedir.Ledger))
		if err != nil {
			problems = append(problems, err.Error())
		}
		echo = m
		c, err = capture.Read(stdin, capture.Options{Framed: *framed, Pane: *pane, StatusFile: *statusFile, StatusDir: *statusDir, Now: time.Now()})
		if err != nil {
			*captureErr = err.Error()
		}
	}
	witness, said := c.Witness(now)
	if *captureErr != "" {
		witness, said = nil, "none"
	}
	next, out, in := judge(prev, f.config(), f, now, c.Screen, *captureErr, echo, witness)
	screen := in.Screen
	if *explain {
		if *captureErr != "" {
			fmt.Fprintf(stderr, "no screen: %s\n", *captureErr)
		} else {
			io.WriteString(stderr, screen.Explain())
		}
		fmt.Fprintf(stderr, "  witness:  %s\n", said)
	}
	if c.Pane != "" {
		next.Pane, next.PaneDir = c.Pane, c.Dir
	}
	if unusable != "" {
		next, out = tick.Withhold(next, out, unusable)
	}
	next, out = d.record(next, out, &problems)
	next.Board = tick.MarkBoard(prev.Board, in, out, pollState(in), pollExplain(in))
	next.Board.Tally = board.NextTally(string(d), now, prev.Board.Tally)
	if err := d.saveState(next); err != nil {
		problems = append(problems, err.Error())
		next, out = tick.Withhold(next, out, "the state could not be saved")
	}
	// A poll that records a measure asks for none: diff.json is not read
	// back right after it is written.
	diffCmd := ""
	if *diffOutput == "" && *diffFailed == "" {
		diffCmd = d.diffWanted(now, next.PaneDir)
	} else if err := d.recordDiff(now, *diffOutput, *diffFailed, next.PaneDir); err != nil {
		problems = append(problems, err.Error())
	}
	d.handOver(out, screen, now, diffCmd, &problems)
	if err := d.sd().AppendHistory(now, *f.target, out.Events); err != nil {
		problems = append(problems, err.Error())
	}
	line := out.Line
	for _, p := range problems {
		line += " · error: " + p
	}
	fmt.Fprintln(stdout, line)
	if err := d.sd().AppendLog(line); err != nil {
		fmt.Fprintf(stderr, "omega-monitor tick: %v\n", err)
	}
	return 0
}

// parseNow reads --now, or takes the time now.
func parseNow(flagValue string, stderr io.Writer) (time.Time, bool) {
	if flagValue == "" {
		return time.Now(), true
	}
	t, err := time.Parse(time.RFC3339, flagValue)
	if err != nil {
		fmt.Fprintf(stderr, "omega-monitor: --now %q is not an RFC 3339 time\n", flagValue)
		return time.Time{}, false
	}
	return t, true
}

// judge is one poll's step from a captured screen to the tick's outcome,
// for tick and replay alike: classify with the echo ledger, look at the
// input box as drawn, then tick.Step. screen is nil when the capture failed.
func judge(prev tick.State, cfg tick.Config, f *tickFlags, now time.Time, s *classify.Screen, captureErr string, echo classify.Masker, w *tick.Witness) (tick.State, tick.Outcome, tick.Input) {
	var screen classify.Result
	own := false
	if captureErr == "" && s != nil {
		opt := classifyOptions(f.work.value, f.work.set && *f.workErr == "", echo)
		opt.Local = f.local
		screen = classify.Classify(s, opt)
		screen, own = boxAsDrawn(s, screen, opt, cfg.NudgeText)
	}
	in := f.input(now, screen)
	in.CaptureError = captureErr
	in.Ledger = echo
	in.Witness = w
	in.OwnTextInBox = own
	next, out := tick.Step(prev, cfg, in)
	return next, out, in
}

// boxAsDrawn reads the input box of a STALLED screen without the echo
// ledger, which masks our own words in the transcript and must not mask
// them in the box: a box holding exactly our nudge text gets only the Enter
// (own is true); a box holding anything else is a human's draft and holds.
func boxAsDrawn(s *classify.Screen, screen classify.Result, opt classify.Options, text string) (classify.Result, bool) {
	if screen.State != classify.Stalled || (screen.Hold != classify.HoldNone && screen.Hold != classify.HoldDraft) {
		return screen, false
	}
	raw := screen
	if screen.Hold == classify.HoldNone && opt.Ledger != nil {
		opt.Ledger = nil
		raw = classify.Classify(s, opt)
	}
	if raw.Hold != classify.HoldDraft {
		return screen, false
	}
	if tick.OwnText(raw.Draft, text) {
		screen.Hold, screen.Draft, screen.HoldLine = classify.HoldNone, "", classify.Line{}
		return screen, true
	}
	screen.Hold, screen.Draft, screen.HoldLine = classify.HoldDraft, raw.Draft, raw.HoldLine
	return screen, false
}

// A stateDirectory is one watcher's directory: its state, echo ledger,
// history and the actions handed to the shell.
type stateDirectory string

func (d stateDirectory) path(name string) string { return filepath.Join(string(d), name) }
func (d stateDirectory) sd() statedir.Dir        { return statedir.Dir(d) }

// loadState reads the state. A missing file is a fresh start; a corrupt one,
// or one with values out of range, is kept aside, never overwritten, and the
// watcher starts fresh. A state that cannot be read or kept aside (a
// directory, a file without permission) is unusable: usable is false, and
// the caller sends no nudge, since the budget could not count it.
func (d stateDirectory) loadState(now time.Time) (s tick.State, usable bool, err error) {
	path := d.path(statedir.State)
	data, err := fsutil.ReadCapped(path, statedir.MaxState)
	if errors.Is(err, fs.ErrNotExist) {
		return s, true, nil
	}
	if err != nil && !errors.Is(err, fsutil.ErrTooLarge) {
		return s, false, fmt.Errorf("state file unusable, no nudge until it is fixed: %v", err)
	}
	why := ""
	switch {
	case err != nil:
		why = fmt.Sprintf("larger than %d bytes", statedir.MaxState)
	case json.Unmarshal(data, &s) != nil:
		why = "corrupt"
	case s.Version > tick.StateVersion:
		why = fmt.Sprintf("from a newer version (%d)", s.Version)
	default:
		if err := checkStateJSON(data, s); err != nil {
			why = err.Error()
		}
	}
	if why == "" {
		return s, true, nil
	}
	aside := d.path("state.json.corrupt-" + now.UTC().Format("20060102T150405Z"))
	if rerr := os.Rename(path, aside); rerr != nil {
		return tick.State{}, false, fmt.Errorf("state file %s, unusable, no nudge until it is fixed (could not keep it aside: %v)", why, rerr)
	}
	return tick.State{}, true, fmt.Errorf("state file %s, kept as %s, started fresh", why, filepath.Base(aside))
}

// checkStateJSON refuses a state whose counters are null (JSON reads them
// as zero, a fresh budget) or out of range.
func checkStateJSON(data []byte, s tick.State) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	var budget map[string]json.RawMessage
	if b, ok := raw["budget"]; ok && string(b) != "null" {
		json.Unmarshal(b, &budget)
	}
	for _, k := range []string{"version", "polls", "budget"} {
		if v, ok := raw[k]; !ok || string(v) == "null" {
			return fmt.Errorf("without %s", k)
		}
	}
	for _, k := range []string{"limit", "used"} {
		if v, ok := budget[k]; !ok || string(v) == "null" {
			return fmt.Errorf("without budget.%s", k)
		}
	}
	if err := s.Check(); err != nil {
		return fmt.Errorf("out of range (%v)", strings.TrimPrefix(err.Error(), "tick: "))
	}
	return nil
}

// saveState writes the state atomically: a temporary file, fsync, rename.
func (d stateDirectory) saveState(s tick.State) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("state not saved: %v", err)
	}
	if err := d.sd().Write(statedir.State, append(data, '\n')); err != nil {
		return fmt.Errorf("state not saved: %v", err)
	}
	return nil
}

func writeAtomic(path string, data []byte) error { return atomicfile.Write(path, data, 0o600) }

// record records each nudge in the echo ledger before it is handed over. A
// nudge that cannot be recorded first is not sent: its echo would be read
// back as the agent's own words; its budget is given back, and the history
// says so instead of "nudge".
func (d stateDirectory) record(next tick.State, out tick.Outcome, problems *[]string) (tick.State, tick.Outcome) {
	for _, a := range out.Actions {
		if a.Kind != tick.Nudge {
			continue
		}
		if err := ledger.Record(d.path(statedir.Ledger), a.Text); err != nil {
			*problems = append(*problems, "nudge withheld, the echo ledger could not record it: "+err.Error())
			return tick.Withhold(next, out, "the echo ledger could not record it")
		}
	}
	return next, out
}

// handOver writes every action for the shell, as files in the order to act
// on them, and a nudge's judged screen as pending.json for the checks
// before typing and before Enter (confirm). A diff command, when one is
// due, comes last: it only measures.
func (d stateDirectory) handOver(out tick.Outcome, judged classify.Result, now time.Time, diffCmd string, problems *[]string) {
	seq := 0
	os.Remove(d.path(statedir.Pending))
	var alerts []string
	for _, a := range out.Actions {
		switch a.Kind {
		case tick.Nudge, tick.Enter:
			seq++
			name := fmt.Sprintf("%03d.nudge", seq)
			if a.Kind == tick.Enter {
				name = fmt.Sprintf("%03d.enter", seq)
			}
			if err := d.writePending(tick.NewPending(name, a, judged, now)); err != nil {
				*problems = append(*problems, "nudge not handed over: "+err.Error())
				continue
			}
			if err := writeAtomic(filepath.Join(d.path(statedir.Actions), name), []byte(a.Text)); err != nil {
				*problems = append(*problems, "nudge not handed over: "+err.Error())
			}
		case tick.Alert:
			alerts = append(alerts, a.Alert.HTML()...)
		case tick.Wait:
			seq++
			secs := strconv.Itoa(int(a.Wait / time.Second))
			if err := writeAtomic(filepath.Join(d.path(statedir.Actions), fmt.Sprintf("%03d.wait", seq)), []byte(secs)); err != nil {
				*problems = append(*problems, "wait not handed over: "+err.Error())
			}
		}
	}
	if diffCmd != "" {
		seq++
		if err := writeAtomic(filepath.Join(d.path(statedir.Actions), fmt.Sprintf("%03d.diff", seq)), []byte(diffCmd)); err != nil {
			*problems = append(*problems, "diff not handed over: "+err.Error())
		}
	}
	// Into the outbox, which no later poll clears: an alert waits there
	// until it is delivered or kept as failed. One call for the poll's
	// alerts, so that two escalations of one poll get names of their own.
	if err := d.sd().QueueAlerts(now, alerts); err != nil {
		*problems = append(*problems, "alert not queued: "+err.Error())
	}
}

// pollState is the poll's state name for the board, "?" without a screen.
func pollState(in tick.Input) string {
	if in.CaptureError != "" {
		return "?"
	}
	return in.Screen.State.String()
}

// pollExplain is the explanation of the poll's verdict for the board.
func pollExplain(in tick.Input) string {
	if in.CaptureError != "" {
		return "no screen: " + in.CaptureError
	}
	return in.Screen.Explain()
}
