package auditrun

import (
	"testing"
	"time"
)

func TestSettingsCheck(t *testing.T) {
	t.Parallel()
	ok := Settings{Agent: "claude", Parallel: 2, Max: 6, Timeout: time.Minute, Isolation: IsolateAuto}
	for _, c := range []struct {
		name string
		edit func(*Settings)
		want string
	}{
		{"ok", func(*Settings) {}, ""},
		{"agent", func(s *Settings) { s.Agent = "cursor" }, `--agent must be claude, codex or gemini; got "cursor"`},
		{"parallel", func(s *Settings) { s.Parallel = 0 }, "--parallel and --max must be 1 or more, --timeout positive"},
		{"timeout", func(s *Settings) { s.Timeout = 0 }, "--parallel and --max must be 1 or more, --timeout positive"},
		{"isolation", func(s *Settings) { s.Isolation = "docker" }, `--isolation must be auto, bwrap, none; got "docker"`},
		{"keep-env", func(s *Settings) { s.KeepEnv = []string{"OK_NAME", "A=B"} }, `--keep-env takes variable names (letters, digits, _); got "OK_NAME,A=B"`},
	} {
		s := ok
		c.edit(&s)
		got := ""
		if err := s.Check(); err != nil {
			got = err.Error()
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestCheckSchedule(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		every, repeat time.Duration
		bad           bool
	}{
		{0, 0, false}, {MinEvery, 0, false}, {0, time.Hour, false},
		{time.Minute, 0, true}, {MinEvery, time.Hour, true}, {0, -time.Second, true},
	} {
		if err := CheckSchedule(c.every, c.repeat); (err != nil) != c.bad {
			t.Errorf("CheckSchedule(%v, %v) = %v, want bad %v", c.every, c.repeat, err, c.bad)
		}
	}
}
