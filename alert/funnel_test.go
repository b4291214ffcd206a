package alert

import "testing"

func TestFunnelAndConfPath(t *testing.T) {
	for _, tc := range []struct {
		name         string
		env          map[string]string
		home         string
		funnel, conf string
	}{
		{
			name:   "defaults under home",
			home:   "/home/op",
			funnel: "/home/op/.omega/bin/omega-alert-send.sh",
			conf:   "/home/op/.omega/telegram.conf",
		},
		{
			name: "the environment wins",
			env: map[string]string{
				"OMEGA_MONITOR_ALERT_SEND": "/opt/send.sh",
				"OMEGA_TELEGRAM_CONF":      "/etc/omega/tg.conf",
			},
			home:   "/home/op",
			funnel: "/opt/send.sh",
			conf:   "/etc/omega/tg.conf",
		},
		{
			name:   "empty is unset",
			env:    map[string]string{"OMEGA_MONITOR_ALERT_SEND": "", "OMEGA_TELEGRAM_CONF": ""},
			home:   "/root",
			funnel: "/root/.omega/bin/omega-alert-send.sh",
			conf:   "/root/.omega/telegram.conf",
		},
		{
			name:   "one set, the other defaulted",
			env:    map[string]string{"OMEGA_TELEGRAM_CONF": "tg.conf"},
			home:   "/home/op",
			funnel: "/home/op/.omega/bin/omega-alert-send.sh",
			conf:   "tg.conf",
		},
		{
			name:   "no home: relative, as before",
			funnel: ".omega/bin/omega-alert-send.sh",
			conf:   ".omega/telegram.conf",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(name string) string { return tc.env[name] }
			if got := FunnelPath(getenv, tc.home); got != tc.funnel {
				t.Errorf("FunnelPath = %q, want %q", got, tc.funnel)
			}
			if got := ConfPath(getenv, tc.home); got != tc.conf {
				t.Errorf("ConfPath = %q, want %q", got, tc.conf)
			}
		})
	}
}
