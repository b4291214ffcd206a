package poll

import (
	"errors"
	"flag"
	"fmt"
	"time"

	"github.com/omega-monitor/omega-monitor/classify"
	"github.com/omega-monitor/omega-monitor/internal/pollset"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/probe"
	"github.com/omega-monitor/omega-monitor/tick"
)

// Settings are a watcher's settings as one poll reads them (pollset.Settings).
type Settings = pollset.Settings

// Readings are what the loop read for one poll besides the screen: the
// probes' outputs, and whether a wake brought the poll.
type Readings struct {
	Work, Progress ProbeReading
	// Woken says a wake (an agent's hook, an answer) brought this poll:
	// the screen is looked at again at a short, growing pace until it
	// settles.
	Woken bool
	// MuxWoken says the multiplexer's own wake brought it instead (the
	// pane fell silent: wake --mux); the poll finds it out itself, from
	// the mark the wake left (statedir.MuxWoke).
	MuxWoken bool
}

// A ProbeReading is what one probe gave: its output when Given, else why
// it failed (Error); Stderr is what it printed on standard error, the
// reason when its output is no count.
type ProbeReading struct {
	Given  bool
	Output string
	Error  string
	Stderr string
}

// present says the probe is configured: it gave an output or failed.
func (p ProbeReading) present() bool { return p.Given || p.Error != "" }

// usable says the probe's output may be read as a count.
func (p ProbeReading) usable() bool { return p.Given && p.Error == "" }

// SettingsFlags binds s's fields to fs, under the names watch gives them,
// for a poll run by hand or a recorded session's flags line.
func SettingsFlags(fs *flag.FlagSet, s *Settings) {
	fs.StringVar(&s.Target, "target", s.Target, "the watched target")
	fs.IntVar(&s.NudgeBudget, "nudge-budget", s.NudgeBudget, "nudges without progress")
	fs.StringVar(&s.NudgeText, "nudge-text", s.NudgeText, "what a nudge types")
	fs.IntVar(&s.IntervalS, "interval", s.IntervalS, "the watcher's interval in `seconds`, which no wait the tick asks for exceeds when it is shorter (0: not said)")
	fs.IntVar(&s.HumanIdleS, "human-idle", s.HumanIdleS, "`seconds` after a human's last input at the agent (a client showing its window) during which nothing is paged or nudged; 0: off")
	fs.StringVar(&s.OnChange, "on-change", s.OnChange, "shell `command` run once per change of state, not waited for, with the watcher, target, old and new state, rule, work and progress in its environment (OMEGA_MONITOR_*)")
	fs.IntVar(&s.OnChangeTimeoutS, "on-change-timeout", s.OnChangeTimeoutS, "the on-change command's wall clock, in `seconds`: past it its process group is killed")
	fs.BoolVar(&s.Answers, "answers", s.Answers, "offer a relayed question's options as buttons")
	fs.BoolVar(&s.FreeText, "free-text", s.FreeText, "take a reply as the words of a free-text option")
	fs.StringVar(&s.AgentStatusDir, "agent-status-dir", s.AgentStatusDir, "the agent's status files, on this machine")
}

// ReadingFlags binds r's fields to fs, under the names the loop passes
// them.
func ReadingFlags(fs *flag.FlagSet, r *Readings) {
	probeFlags(fs, "work", &r.Work)
	probeFlags(fs, "progress", &r.Progress)
	fs.BoolVar(&r.Woken, "woken", false, "a wake (an agent's hook, an answer) brought this poll: the screen is looked at again at a short, growing pace until it settles")
}

func probeFlags(fs *flag.FlagSet, name string, p *ProbeReading) {
	fs.Func(name, "the "+name+" probe's output", func(v string) error {
		p.Output, p.Given = v, true
		return nil
	})
	fs.StringVar(&p.Error, name+"-error", "", "the "+name+" probe failed")
	fs.StringVar(&p.Stderr, name+"-stderr", "", "what the "+name+" probe said on standard error")
}

// config is the tick's configuration of a poll.
func config(s Settings, r Readings) tick.Config {
	return tick.Config{
		Target:      s.Target,
		NudgeBudget: s.NudgeBudget,
		NudgeText:   s.NudgeText,
		HasProgress: r.Progress.present(),
		Interval:    time.Duration(s.IntervalS) * time.Second,
		HumanIdle:   time.Duration(s.HumanIdleS) * time.Second,
	}
}

// input builds a poll's input from the readings and a classified screen.
func input(r Readings, now time.Time, screen classify.Result, hostWake tick.HostWake) tick.Input {
	in := tick.Input{
		Now:             now,
		Screen:          screen,
		Work:            probe.Read(r.Work.Output, r.Work.usable()),
		WorkPresent:     r.Work.present(),
		WorkError:       r.Work.Error,
		Progress:        probe.Read(r.Progress.Output, r.Progress.usable()),
		ProgressPresent: r.Progress.present(),
		ProgressError:   r.Progress.Error,
		Woken:           r.Woken,
		MuxWoken:        r.MuxWoken,
		HostWake:        hostWake,
	}
	if r.Work.Given && in.WorkError == "" && !in.Work.Known {
		in.WorkError = probe.Unusable(r.Work.Output, r.Work.Stderr)
	}
	if r.Progress.Given && in.ProgressError == "" && !in.Progress.Known {
		in.ProgressError = probe.Unusable(r.Progress.Output, r.Progress.Stderr)
	}
	return in
}

// ErrNoSettings says a state directory's loop record holds no poll
// settings: no loop started there, or one from before polls read them.
var ErrNoSettings = errors.New("poll: the loop's record holds no settings")

// LoadSettings reads the settings the loop of the state directory dir
// stored at its start, and checks them as any file read is checked.
func LoadSettings(dir string) (Settings, error) {
	var rec statedir.LoopRecord
	if err := statedir.Dir(dir).ReadRecord(statedir.Loop, &rec); err != nil {
		return Settings{}, fmt.Errorf("poll: %w", err)
	}
	if rec.Poll == nil {
		return Settings{}, ErrNoSettings
	}
	if err := pollset.Check(*rec.Poll); err != nil {
		return Settings{}, fmt.Errorf("poll: the loop's settings: %w", err)
	}
	return *rec.Poll, nil
}

// ResolveSettings are the settings of a poll of the state directory dir:
// the loop's record's (LoadSettings), with the settings flags given on
// flags (SettingsFlags) over them; the flags alone, bound to given, where
// no loop record is read, and then --target is needed.
func ResolveSettings(flags *flag.FlagSet, dir string, given Settings) (Settings, error) {
	set, err := LoadSettings(dir)
	if err != nil {
		// A poll by hand, in a directory no loop started.
		if given.Target == "" {
			return set, fmt.Errorf("%w; a poll by hand needs --target", err)
		}
		return given, pollset.Check(given)
	}
	over := flag.NewFlagSet("", flag.ContinueOnError)
	SettingsFlags(over, &set)
	var bad error
	flags.Visit(func(f *flag.Flag) {
		if over.Lookup(f.Name) != nil && bad == nil {
			bad = over.Set(f.Name, f.Value.String())
		}
	})
	if bad != nil {
		return set, bad
	}
	return set, pollset.Check(set)
}
