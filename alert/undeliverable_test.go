package alert

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/omega-monitor/omega-monitor/scripts"
)

// TestUndeliverable: the start of a watcher says why alerts cannot leave,
// an installed funnel from before --stdin among the reasons; a funnel of
// the operator's own is not read for it.
func TestUndeliverable(t *testing.T) {
	old := []byte("#!/usr/bin/env bash\n# omega-alert-send.sh \"<html>\" ...\nfor m in \"$@\"; do :; done\n")
	tests := []struct {
		name   string
		funnel []byte // the default funnel, nil for none
		custom []byte // $OMEGA_MONITOR_ALERT_SEND's, nil for unset
		conf   bool
		want   string // a substring of the reason, "" for none
	}{
		{name: "the embedded funnel and a config", funnel: scripts.AlertSend, conf: true},
		{name: "no funnel", conf: true, want: "no alert funnel at "},
		{name: "no default funnel: install writes it", conf: true, want: "/.omega/bin/omega-alert-send.sh (omega-monitor install puts it there)"},
		// install never writes where OMEGA_MONITOR_ALERT_SEND points: the
		// fix named is one that applies.
		{name: "no custom funnel", custom: []byte{}, conf: true,
			want: "custom.sh (OMEGA_MONITOR_ALERT_SEND names it, and install never writes there: put an executable funnel at that path, or unset OMEGA_MONITOR_ALERT_SEND and run omega-monitor install"},
		{name: "no config", funnel: scripts.AlertSend, want: "no Telegram config at "},
		{name: "the default funnel from before --stdin", funnel: old, conf: true,
			want: "is older than this omega-monitor: it takes no --stdin and would send that word for each alert (omega-monitor install updates it)"},
		{name: "a custom funnel is not read", funnel: old, custom: []byte("#!/bin/sh\ncat >/dev/null\n"), conf: true},
		// A funnel of the operator's own needs no Telegram config: the
		// warning follows the funnel actually used (issue 41).
		{name: "a custom funnel without a Telegram config", custom: []byte("#!/bin/sh\ncat >/dev/null\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			env := map[string]string{}
			bin := filepath.Join(home, ".omega", "bin")
			if err := os.MkdirAll(bin, 0o700); err != nil {
				t.Fatal(err)
			}
			if tt.funnel != nil {
				if err := os.WriteFile(filepath.Join(bin, "omega-alert-send.sh"), tt.funnel, 0o700); err != nil {
					t.Fatal(err)
				}
			}
			if tt.custom != nil {
				env["OMEGA_MONITOR_ALERT_SEND"] = filepath.Join(home, "custom.sh")
				if len(tt.custom) > 0 {
					if err := os.WriteFile(env["OMEGA_MONITOR_ALERT_SEND"], tt.custom, 0o700); err != nil {
						t.Fatal(err)
					}
				}
			}
			if tt.conf {
				if err := os.WriteFile(filepath.Join(home, ".omega", "telegram.conf"), []byte("bot_token=1:x\nchat_id=1\n"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			got := Undeliverable(func(k string) string { return env[k] }, home)
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("Undeliverable = %q, want %q", got, tt.want)
			}
		})
	}
}
