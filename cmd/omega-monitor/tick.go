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
	"sort"
	"strings"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/ledger"
	"github.com/omega-monitor/omega-monitor/probe"
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
  NNN.alert   one Telegram HTML message for the alert funnel

Leftover action files from an earlier poll are deleted first: a stale nudge
is unsafe. DIR also holds state.json (written atomically) and history.jsonl
(append-only, one JSON object a line).

  --state DIR            the watcher's state directory (created 0700)
  --target T             session or host:session, as the MONITOR line names it
  --work RAW             the work probe's output (it exited 0 in time)
  --work-error TEXT      the work probe failed: the reading is unknown (fails open)
  --progress RAW         the progress probe's output
  --progress-error TEXT  the progress probe failed
  --nudge-budget N       nudges allowed without progress (default 5)
  --nudge-text TEXT      what a nudge types
  --capture-error TEXT   the capture failed; standard input is not read
  --agent-status FILE    the agent's own status file (Claude Code's
                         ~/.claude/sessions/<pid>.json): a second witness that
                         can only stop a nudge; missing, stale or for another
                         pane, it changes nothing
  --pane ID              the watched pane as session:@window.%pane, which the
                         status file must name
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
}

func addTickFlags(fs *flag.FlagSet) *tickFlags {
	f := &tickFlags{
		target:      fs.String("target", "", "the watched target"),
		budget:      fs.Int("nudge-budget", 5, "nudges without progress"),
		nudgeText:   fs.String("nudge-text", tick.DefaultNudgeText, "what a nudge types"),
		workErr:     fs.String("work-error", "", "the work probe failed"),
		progressErr: fs.String("progress-error", "", "the progress probe failed"),
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
	return tick.Input{
		Now:             now,
		Screen:          screen,
		Work:            probe.Read(f.work.value, f.work.set && *f.workErr == ""),
		WorkPresent:     f.work.set || *f.workErr != "",
		WorkError:       *f.workErr,
		Progress:        probe.Read(f.progress.value, f.progress.set && *f.progressErr == ""),
		ProgressPresent: f.progress.set || *f.progressErr != "",
		ProgressError:   *f.progressErr,
	}
}

func (f *tickFlags) check() error {
	if *f.target == "" {
		return errors.New("--target is required")
	}
	if _, err := coord.ParseTarget(*f.target); err != nil {
		return err
	}
	if *f.budget < 0 {
		return errors.New("--nudge-budget must be 0 or more")
	}
	if strings.TrimSpace(*f.nudgeText) == "" || strings.ContainsAny(*f.nudgeText, "\n\r") {
		return errors.New("--nudge-text must be one non-empty line")
	}
	return nil
}

func runTick(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("tick", tickUsage, stderr)
	stateDir := fs.String("state", "", "state directory")
	f := addTickFlags(fs)
	captureErr := fs.String("capture-error", "", "the capture failed")
	nowFlag := fs.String("now", "", "the poll's time, RFC 3339")
	statusFile := fs.String("agent-status", "", "the agent's own status file")
	pane := fs.String("pane", "", "the watched pane")
	explain := fs.Bool("explain", false, "explain on standard error")
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
	now := time.Now()
	if *nowFlag != "" {
		t, err := time.Parse(time.RFC3339, *nowFlag)
		if err != nil {
			fmt.Fprintf(stderr, "omega-monitor tick: --now %q is not an RFC 3339 time\n", *nowFlag)
			return 2
		}
		now = t
	}
	d := stateDirectory(*stateDir)
	var problems []string // rendered at the end of the line
	if err := d.prepare(); err != nil {
		problems = append(problems, err.Error())
	}
	prev, err := d.loadState(now)
	if err != nil {
		problems = append(problems, err.Error())
	}
	var screen classify.Result
	var screenLedger classify.Masker
	if *captureErr == "" {
		m, err := loadLedger(d.ledger())
		if err != nil {
			problems = append(problems, err.Error())
		}
		screenLedger = m
		s, err := classify.ReadScreen(stdin)
		if err != nil {
			*captureErr = "reading the pane: " + err.Error()
		} else {
			screen = classify.Classify(s, classifyOptions(f.work.value, f.work.set && *f.workErr == "", m))
		}
	}
	in := f.input(now, screen)
	in.CaptureError = *captureErr
	in.Ledger = screenLedger
	witness := "none"
	if *statusFile != "" && in.CaptureError == "" {
		if data, err := os.ReadFile(*statusFile); err != nil {
			witness = "unreadable (" + err.Error() + "): the screen decides alone"
		} else if w, err := tick.ParseWitness(data, *pane, now); err != nil {
			witness = err.Error() + ": the screen decides alone"
		} else {
			in.Witness = &w
			witness = fmt.Sprintf("%s says %s (written %s)", *statusFile, w.Status, w.Updated.UTC().Format(time.RFC3339))
		}
	}
	if *explain {
		if in.CaptureError != "" {
			fmt.Fprintf(stderr, "no screen: %s\n", in.CaptureError)
		} else {
			io.WriteString(stderr, screen.Explain())
		}
		fmt.Fprintf(stderr, "  witness:  %s\n", witness)
	}
	next, out := tick.Step(prev, f.config(), in)
	next, out = d.act(prev, next, out, &problems)
	if err := d.saveState(next); err != nil {
		problems = append(problems, err.Error())
	}
	if err := d.appendHistory(now, *f.target, out.Events); err != nil {
		problems = append(problems, err.Error())
	}
	line := out.Line
	for _, p := range problems {
		line += " · error: " + p
	}
	fmt.Fprintln(stdout, line)
	return 0
}

// A stateDirectory is one watcher's directory: its state, echo ledger,
// history and the actions handed to the shell.
type stateDirectory string

func (d stateDirectory) path(name string) string { return filepath.Join(string(d), name) }
func (d stateDirectory) ledger() string          { return d.path("ledger") }
func (d stateDirectory) actions() string         { return d.path("actions") }

// prepare creates the directory and its actions directory, and deletes
// actions left by an earlier poll that the shell never carried out.
func (d stateDirectory) prepare() error {
	if err := os.MkdirAll(d.actions(), 0o700); err != nil {
		return fmt.Errorf("state directory: %v", err)
	}
	os.Chmod(string(d), 0o700)
	left, err := os.ReadDir(d.actions())
	if err != nil {
		return fmt.Errorf("actions: %v", err)
	}
	var dropped []string
	for _, e := range left {
		if err := os.Remove(filepath.Join(d.actions(), e.Name())); err == nil {
			dropped = append(dropped, e.Name())
		}
	}
	if len(dropped) > 0 {
		return fmt.Errorf("dropped %d stale action(s) the shell never carried out: %s", len(dropped), strings.Join(dropped, ", "))
	}
	return nil
}

// loadState reads the state. A missing file is a fresh start; a corrupt one
// is kept aside, never overwritten, and the watcher starts fresh.
func (d stateDirectory) loadState(now time.Time) (tick.State, error) {
	var s tick.State
	data, err := os.ReadFile(d.path("state.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, fmt.Errorf("state file unreadable, started fresh: %v", err)
	}
	if err := json.Unmarshal(data, &s); err != nil || s.Version > tick.StateVersion {
		aside := d.path("state.json.corrupt-" + now.UTC().Format("20060102T150405Z"))
		why := "corrupt"
		if err == nil {
			why = fmt.Sprintf("from a newer version (%d)", s.Version)
		}
		if rerr := os.Rename(d.path("state.json"), aside); rerr != nil {
			return tick.State{}, fmt.Errorf("state file %s, started fresh (could not keep it aside: %v)", why, rerr)
		}
		return tick.State{}, fmt.Errorf("state file %s, kept as %s, started fresh", why, filepath.Base(aside))
	}
	return s, nil
}

// saveState writes the state atomically: a temporary file, fsync, rename.
func (d stateDirectory) saveState(s tick.State) error {
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return fmt.Errorf("state not saved: %v", err)
	}
	if err := writeAtomic(d.path("state.json"), append(data, '\n')); err != nil {
		return fmt.Errorf("state not saved: %v", err)
	}
	return nil
}

func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // after a successful rename this finds nothing
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	if dir, err := os.Open(filepath.Dir(path)); err == nil {
		dir.Sync()
		dir.Close()
	}
	return nil
}

// appendHistory appends the poll's events to history.jsonl in one write, so
// that a failure loses at most this poll's lines and never an earlier one.
func (d stateDirectory) appendHistory(now time.Time, target string, events []tick.Event) error {
	if len(events) == 0 {
		return nil
	}
	var b strings.Builder
	for _, e := range events {
		obj := map[string]any{"ts": now.UTC().Format(time.RFC3339), "target": target, "event": e.Name, "state": e.State}
		keys := make([]string, 0, len(e.Fields))
		for k := range e.Fields {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if _, taken := obj[k]; !taken {
				obj[k] = e.Fields[k]
			}
		}
		line, err := json.Marshal(obj)
		if err != nil {
			return fmt.Errorf("history not written: %v", err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	h, err := os.OpenFile(d.path("history.jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("history not written: %v", err)
	}
	if _, err := h.WriteString(b.String()); err != nil {
		h.Close()
		return fmt.Errorf("history not written: %v", err)
	}
	if err := h.Close(); err != nil {
		return fmt.Errorf("history not written: %v", err)
	}
	return nil
}

// act records each nudge in the echo ledger, then hands every action to the
// shell as a file. A nudge that cannot be recorded first is not sent: its
// echo would be read back as the agent's own words.
func (d stateDirectory) act(prev, next tick.State, out tick.Outcome, problems *[]string) (tick.State, tick.Outcome) {
	seq := 0
	for _, a := range out.Actions {
		switch a.Kind {
		case tick.Nudge:
			if err := ledger.Record(d.ledger(), a.Text); err != nil {
				spent := next.Budget.String()
				next.Budget.Used = max(next.Budget.Used-1, 0)
				out.Line = strings.Replace(out.Line, "nudged ("+spent+")", "not nudged (the echo ledger could not record it)", 1)
				*problems = append(*problems, "nudge withheld, the echo ledger could not record it: "+err.Error())
				continue
			}
			seq++
			if err := writeAtomic(filepath.Join(d.actions(), fmt.Sprintf("%03d.nudge", seq)), []byte(a.Text)); err != nil {
				*problems = append(*problems, "nudge not handed over: "+err.Error())
			}
		case tick.Alert:
			for _, msg := range a.Alert.HTML() {
				seq++
				if err := writeAtomic(filepath.Join(d.actions(), fmt.Sprintf("%03d.alert", seq)), []byte(msg)); err != nil {
					*problems = append(*problems, "alert not handed over: "+err.Error())
				}
			}
		}
	}
	return next, out
}
