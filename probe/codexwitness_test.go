package probe

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseWitnessCodexRollout(t *testing.T) {
	now := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)
	line := func(ts, typ, payload string) string {
		return `{"timestamp":"` + ts + `","type":"` + typ + `","payload":` + payload + "}\n"
	}
	meta := line("2026-11-30T13:58:00.000Z", "session_meta", `{"id":"s1","cwd":"/w","cli_version":"0.169.0"}`)
	started := line("2026-11-30T13:58:10.000Z", "event_msg", `{"type":"task_started","turn_id":"t1"}`)
	item := line("2026-11-30T13:58:11.000Z", "response_item", `{"type":"message","role":"user"}`)
	done := line("2026-11-30T13:59:00.000Z", "event_msg", `{"type":"task_complete","turn_id":"t1"}`)
	aborted := line("2026-11-30T13:59:00.000Z", "event_msg", `{"type":"turn_aborted","reason":"interrupted"}`)
	for _, tc := range []struct {
		name, data, want string
	}{
		{"a turn open", meta + started + item, "busy 0.169.0"},
		{"a turn complete", meta + started + item + done, "idle 0.169.0"},
		{"a turn aborted", meta + started + aborted, "idle 0.169.0"},
		{"a tail cut mid-line", `on":"0.169.0"}}` + "\n" + started + item, "busy "},
		{"no turn yet", meta, "error: probe: agent status: the Codex log shows no turn yet"},
		{"long idle", strings.ReplaceAll(meta+started+done, "2026-11-30T13:5", "2026-11-30T12:5"), "error: probe: agent status: stale (Codex log last written 2026-11-30T12:59:00Z)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := ParseWitness([]byte(tc.data), "main:@1.%3", now)
			got := w.Status + " " + w.Version
			if err != nil {
				got = "error: " + err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
