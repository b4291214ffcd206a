package main

import (
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
)

// TestRemoteFrameCodexLogIsAWitness: a Codex session log that the remote
// capture frame carries (coord's remoteCodexLogs) is the agent's own word
// for a remote pane, as the local log is for a local one: a turn started
// and not finished reads busy.
func TestRemoteFrameCodexLogIsAWitness(t *testing.T) {
	now := time.Now().UTC()
	at := func(d time.Duration) string { return now.Add(d).Format(time.RFC3339Nano) }
	log := `cut mid-line, as tail -c leaves it"}}` + "\n" +
		`{"timestamp":"` + at(-time.Minute) + `","type":"event_msg","payload":{"type":"task_complete"}}` + "\n" +
		`{"timestamp":"` + at(-10*time.Second) + `","type":"event_msg","payload":{"type":"task_started"}}` + "\n"
	frame := "box:@1.%2\t/w d\n" + log + "\n" + coord.StatusEnd + "\n" + coord.PaneMark + "\nthe pane\n"
	c, err := readCapture(strings.NewReader(frame), true, "", "", "")
	if err != nil {
		t.Fatal(err)
	}
	w, said := c.witness(now)
	if w == nil || w.Status != "busy" {
		t.Fatalf("witness = %+v (%s), want busy", w, said)
	}
}
