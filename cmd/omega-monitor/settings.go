package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The bounds of a watcher's numeric flags. Beyond them a value is a typo,
// and shell arithmetic or sleep would read it as something else.
const (
	maxInterval    = 86400 // a day between polls
	maxNudgeBudget = 1000
	maxNudgeText   = 1000 // bytes
	maxCallTimeout = 3600 // OMEGA_MONITOR_TIMEOUT, seconds
)

// check validates every flag of a watcher, and the settings its environment
// gives it, before anything starts. It is the one place where a watcher's
// settings are checked: watch calls it before it says "watching", and the
// loop's start call (loop-env) calls it again, so that a loop started by hand
// is held to the same rules. It makes the paths absolute, since the loop runs
// elsewhere, and returns the first problem found, worded for the operator.
func (f *watchFlags) check(getenv func(string) string) error {
	if f.interval < 1 || f.interval > maxInterval {
		return fmt.Errorf("--interval must be a whole number of seconds from 1 to %d; got %d", maxInterval, f.interval)
	}
	if f.nudgeBudget < 0 || f.nudgeBudget > maxNudgeBudget {
		return fmt.Errorf("--nudge-budget must be a whole number from 0 to %d; got %d", maxNudgeBudget, f.nudgeBudget)
	}
	if f.nudgeTextSet {
		if err := checkNudgeText(f.nudgeText); err != nil {
			return fmt.Errorf("--nudge-text: %w", err)
		}
	}
	for _, p := range []struct {
		name  string
		value *string
	}{{"--ssh-config", &f.sshConfig}, {"--probe-dir", &f.probeDir}} {
		if *p.value == "" {
			continue
		}
		abs, err := filepath.Abs(*p.value)
		if err != nil {
			return fmt.Errorf("%s: %v", p.name, err)
		}
		*p.value = abs
	}
	if f.probeDir != "" {
		fi, err := os.Stat(f.probeDir)
		if err != nil || !fi.IsDir() {
			return fmt.Errorf("--probe-dir %s is not a directory", f.probeDir)
		}
	}
	_, err := envSettings(getenv)
	return err
}

// checkNudgeText is the rule for what a nudge may type: one line of printable
// text. A control character typed into a terminal is a key, not text: \x03
// is Ctrl-C (it killed the watched program), ESC starts a sequence (a
// bracketed-paste end among them), DEL erases, a newline submits half a
// nudge.
func checkNudgeText(s string) error {
	switch {
	case strings.TrimSpace(s) == "":
		return errors.New("the text of a nudge must not be empty")
	case len(s) > maxNudgeText:
		return fmt.Errorf("the text of a nudge must be at most %d bytes; got %d", maxNudgeText, len(s))
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

// envSetting is one setting a watcher takes from its environment.
type envSetting struct {
	name  string
	check func(string) (string, error) // the value to hand over, or why not
}

// envSettings lists every setting of the environment that the README names
// for a watcher and its alert funnel. watch hands each one to the detached
// watcher explicitly (set, or unset when the caller has none), because the
// multiplexer would otherwise give the loop its server's environment.
var envSettingList = []envSetting{
	{"OMEGA_MONITOR_TIMEOUT", checkCount("OMEGA_MONITOR_TIMEOUT", 1, maxCallTimeout)},
	{"OMEGA_MONITOR_ALERT_SEND", absPath},
	{"OMEGA_TELEGRAM_CONF", absPath},
	{"OMEGA_TELEGRAM_API", checkAPI},
	{"OMEGA_ALERT_TRIES", checkCount("OMEGA_ALERT_TRIES", 1, 100)},
	{"OMEGA_ALERT_DEADLINE", checkCount("OMEGA_ALERT_DEADLINE", 1, 3600)},
	{"OMEGA_ALERT_BACKOFF", checkCount("OMEGA_ALERT_BACKOFF", 0, 600)},
	{"OMEGA_ALERT_TIMEOUT", checkCount("OMEGA_ALERT_TIMEOUT", 1, 600)},
}

// envSettings reads and checks the environment settings: name to value, for
// those that are set.
func envSettings(getenv func(string) string) (map[string]string, error) {
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
	return v, nil
}
