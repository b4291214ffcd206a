// Package pollset is a watcher's poll settings: their values (the loop
// record's statedir.PollSettings), their defaults, their limits and their
// rule, and the deliverer's settings from the environment. watch, the
// loop's start and each poll check by this one rule. It reads no file and
// runs nothing.
package pollset

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/statedir"
	"github.com/omega-monitor/omega-monitor/tick"
)

// Settings are a watcher's settings as one poll reads them: plain values,
// checked once (Check) when the loop starts and stored in its record
// (loop.json), where each poll reads them. They are the record's own type,
// so that the file has one.
type Settings = statedir.PollSettings

// Default are the settings of a poll nobody set: a nudge budget of
// 5, the default nudge text and human-idle rule, on-change under 20 s.
func Default(target string) Settings {
	return Settings{
		Target:           target,
		NudgeBudget:      5,
		NudgeText:        tick.DefaultNudgeText,
		HumanIdleS:       int(tick.DefaultHumanIdle / time.Second),
		OnChangeTimeoutS: 20,
	}
}

// Check is the rule for a poll's settings, as watch says them.
func Check(s Settings) error {
	if s.Target == "" {
		return errors.New("--target is required")
	}
	if _, err := coord.ParseTarget(s.Target); err != nil {
		return err
	}
	if s.IntervalS < 0 {
		return fmt.Errorf("--interval must be a whole number of seconds, 1 and up; got %d", s.IntervalS)
	}
	if err := CheckHumanIdle(s.HumanIdleS); err != nil {
		return err
	}
	if err := CheckNudgeBudget(s.NudgeBudget); err != nil {
		return err
	}
	if err := CheckNudgeText(s.NudgeText); err != nil {
		return fmt.Errorf("--nudge-text: %w", err)
	}
	if s.OnChange != "" && s.OnChangeTimeoutS < 1 {
		return fmt.Errorf("--on-change-timeout must be a whole number of seconds, 1 and up; got %d", s.OnChangeTimeoutS)
	}
	return nil
}

// Limits of a watcher's settings.
const (
	MaxNudgeBudget = 1000
	MaxNudgeText   = 1000 // bytes
	MaxHumanIdle   = 3600 // seconds
)

// CheckHumanIdle is the rule for --human-idle, in seconds.
func CheckHumanIdle(seconds int) error {
	if seconds < 0 || seconds > MaxHumanIdle {
		return fmt.Errorf("--human-idle must be a whole number of seconds from 0 (off) to %d; got %d", MaxHumanIdle, seconds)
	}
	return nil
}

// CheckNudgeBudget is the rule for --nudge-budget.
func CheckNudgeBudget(n int) error {
	if n < 0 || n > MaxNudgeBudget {
		return fmt.Errorf("--nudge-budget must be a whole number from 0 to %d; got %d", MaxNudgeBudget, n)
	}
	return nil
}

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
