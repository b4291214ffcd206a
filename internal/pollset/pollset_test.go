package pollset

import (
	"strings"
	"testing"
)

// TestCheck: the default settings pass the rule, and each setting out of
// its bounds is refused with the flag's name, as watch says it.
func TestCheck(t *testing.T) {
	if err := Check(Default("agent")); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
	for _, tc := range []struct {
		flag string
		set  func(*Settings)
	}{
		{"--target", func(s *Settings) { s.Target = "" }},
		{"--interval", func(s *Settings) { s.IntervalS = -1 }},
		{"--human-idle", func(s *Settings) { s.HumanIdleS = MaxHumanIdle + 1 }},
		{"--nudge-budget", func(s *Settings) { s.NudgeBudget = -1 }},
		{"--nudge-budget", func(s *Settings) { s.NudgeBudget = MaxNudgeBudget + 1 }},
		{"--nudge-text", func(s *Settings) { s.NudgeText = "go on\x03" }},
		{"--on-change-timeout", func(s *Settings) { s.OnChange, s.OnChangeTimeoutS = "true", 0 }},
	} {
		s := Default("agent")
		tc.set(&s)
		err := Check(s)
		if err == nil || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%+v: got %v, want an error naming %s", s, err, tc.flag)
		}
	}
}

// TestDeliverOptionsFrom: the environment's durations over the defaults,
// and each out of its bounds refused by its name.
func TestDeliverOptionsFrom(t *testing.T) {
	env := map[string]string{}
	get := func(k string) string { return env[k] }
	o, err := DeliverOptionsFrom(get)
	if err != nil || o.Expiry != DefaultExpiry || o.Retry != DefaultRetry {
		t.Fatalf("no environment: %+v, %v", o, err)
	}
	env["OMEGA_ALERT_RETRY"] = "2h"
	if _, err := DeliverOptionsFrom(get); err == nil || !strings.Contains(err.Error(), "OMEGA_ALERT_RETRY") {
		t.Errorf("a retry of 2h: %v", err)
	}
	env["OMEGA_ALERT_RETRY"], env["OMEGA_ALERT_EXPIRY"] = "5s", "90m"
	if o, err := DeliverOptionsFrom(get); err != nil || o.Retry.String() != "5s" || o.Expiry.String() != "1h30m0s" {
		t.Errorf("5s and 90m: %+v, %v", o, err)
	}
}
