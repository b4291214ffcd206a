package poll

import (
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/cmdline"
	"github.com/omega-monitor/omega-monitor/probe"
	"github.com/omega-monitor/omega-monitor/tick"
)

// Flags are a poll's settings as the loop passes them, bound to a flag
// set: tick and replay share them.
type Flags struct {
	target      *string
	budget      *int
	nudgeText   *string
	work        cmdline.Optional
	progress    cmdline.Optional
	workErr     *string
	progressErr *string
	// workSaid and progressSaid are what a probe printed on standard
	// error: the reason, when its output is no count.
	workSaid, progressSaid *string
	// interval is the watcher's interval in seconds (0: not said); woken
	// says a wake brought this poll.
	interval *int
	woken    *bool
	// humanIdle is how long, in seconds, a human's input counts them at
	// the agent (0: the rule is off).
	humanIdle *int
	// Local is the operator's rules file, read with the built-in rules.
	Local *classify.Local
	// HostWake is where a remote target's wake relay stands (wake.json).
	HostWake tick.HostWake
	// onChange is the operator's command for each change of state, run
	// under a clock of onChangeTimeout seconds (onchange.go).
	onChange        *string
	onChangeTimeout *int
}

func AddFlags(fs *flag.FlagSet) *Flags {
	f := &Flags{
		target:          fs.String("target", "", "the watched target"),
		budget:          fs.Int("nudge-budget", 5, "nudges without progress"),
		nudgeText:       fs.String("nudge-text", tick.DefaultNudgeText, "what a nudge types"),
		workErr:         fs.String("work-error", "", "the work probe failed"),
		progressErr:     fs.String("progress-error", "", "the progress probe failed"),
		workSaid:        fs.String("work-stderr", "", "what the work probe said on standard error"),
		progressSaid:    fs.String("progress-stderr", "", "what the progress probe said on standard error"),
		interval:        fs.Int("interval", 0, "the watcher's interval in `seconds`, which no wait the tick asks for exceeds when it is shorter (0: not said)"),
		woken:           fs.Bool("woken", false, "a wake (an agent's hook, an answer) brought this poll: the screen is looked at again at a short, growing pace until it settles"),
		onChange:        fs.String("on-change", "", "shell `command` run once per change of state, not waited for, with the watcher, target, old and new state, rule, work and progress in its environment (OMEGA_MONITOR_*)"),
		onChangeTimeout: fs.Int("on-change-timeout", 20, "the on-change command's wall clock, in `seconds`: past it its process group is killed"),
		humanIdle:       fs.Int("human-idle", int(tick.DefaultHumanIdle/time.Second), "`seconds` after a human's last input at the agent (a client showing its window) during which nothing is paged or nudged; 0: off"),
	}
	fs.Var(&f.work, "work", "the work probe's output")
	fs.Var(&f.progress, "progress", "the progress probe's output")
	return f
}

func (f *Flags) Config() tick.Config {
	return tick.Config{
		Target:      *f.target,
		NudgeBudget: *f.budget,
		NudgeText:   *f.nudgeText,
		HasProgress: f.progress.Given || *f.progressErr != "",
		Interval:    time.Duration(*f.interval) * time.Second,
		HumanIdle:   time.Duration(*f.humanIdle) * time.Second,
	}
}

// input builds a poll's input from the flags and a classified screen.
func (f *Flags) input(now time.Time, screen classify.Result) tick.Input {
	in := tick.Input{
		Now:             now,
		Screen:          screen,
		Work:            probe.Read(f.work.Value, f.work.Given && *f.workErr == ""),
		WorkPresent:     f.work.Given || *f.workErr != "",
		WorkError:       *f.workErr,
		Progress:        probe.Read(f.progress.Value, f.progress.Given && *f.progressErr == ""),
		ProgressPresent: f.progress.Given || *f.progressErr != "",
		ProgressError:   *f.progressErr,
		Woken:           *f.woken,
		HostWake:        f.HostWake,
	}
	if f.work.Given && in.WorkError == "" && !in.Work.Known {
		in.WorkError = probe.Unusable(f.work.Value, *f.workSaid)
	}
	if f.progress.Given && in.ProgressError == "" && !in.Progress.Known {
		in.ProgressError = probe.Unusable(f.progress.Value, *f.progressSaid)
	}
	return in
}

func (f *Flags) Check() error {
	if *f.target == "" {
		return errors.New("--target is required")
	}
	if _, err := coord.ParseTarget(*f.target); err != nil {
		return err
	}
	if *f.interval < 0 {
		return fmt.Errorf("--interval must be a whole number of seconds, 1 and up; got %d", *f.interval)
	}
	if *f.humanIdle < 0 || *f.humanIdle > MaxHumanIdle {
		return fmt.Errorf("--human-idle must be a whole number of seconds from 0 (off) to %d; got %d", MaxHumanIdle, *f.humanIdle)
	}
	if *f.budget < 0 || *f.budget > MaxNudgeBudget {
		return fmt.Errorf("--nudge-budget must be a whole number from 0 to %d; got %d", MaxNudgeBudget, *f.budget)
	}
	if err := CheckNudgeText(*f.nudgeText); err != nil {
		return fmt.Errorf("--nudge-text: %w", err)
	}
	return nil
}

// Limits of a watcher's settings.
const (
	MaxNudgeBudget = 1000
	MaxNudgeText   = 1000 // bytes
	MaxHumanIdle   = 3600 // seconds
)

// CheckNudgeText is the rule for what a nudge may type: one line of printable
// text. A control character typed into a terminal is a key, not text: \x03
// is Ctrl-C (it killed the watched program), ESC starts a sequence (a
// bracketed-paste end among them), DEL erases, a newline submits half a
// nudge.
func CheckNudgeText(s string) error {
	switch {
	case strings.TrimSpace(s) == "":
		return errors.New("the text of a nudge must not be empty")
	case len(s) > MaxNudgeText:
		return fmt.Errorf("the text of a nudge must be at most %d bytes; got %d", MaxNudgeText, len(s))
	case !utf8.ValidString(s):
		return errors.New("the text of a nudge must be valid UTF-8")
	}
	for i, r := range s {
		switch {
		case r == '\n' || r == '\r':
			return fmt.Errorf("the text of a nudge must be one line; byte %d is a line break", i)
		case r < ' ' || r == 0x7f || (r >= 0x80 && r <= 0x9f):
			return fmt.Errorf("the text of a nudge must not hold control characters (a terminal reads them as keys); byte %d is %q", i, r)
		case r == '\u2028' || r == '\u2029':
			return fmt.Errorf("the text of a nudge must be one line; byte %d is a line separator", i)
		}
	}
	return nil
}
