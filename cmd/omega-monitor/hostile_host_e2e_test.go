package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/omega-monitor/omega-monitor/coord"
	"github.com/omega-monitor/omega-monitor/internal/capture"
	"github.com/omega-monitor/omega-monitor/internal/testenv"
)

// TestHostileHostReplies: a host that answers the loop's capture with a
// reply that never ends (fast or slowly), with 50 MB, or with thousands of
// Codex log blocks, costs the watcher a defined and bounded result: the
// poll says the capture failed (more than a frame may be, or the wall
// clock), or judges the real pane, and the next poll after an honest
// answer judges it again. The loop keeps no more of a frame on disk than
// a byte past its cap (unbounded before: a reply that never ends wrote 2
// GB in the 5 s of the wall clock), nothing the host sent reaches a
// command the host is given, and the loop goes on.
func TestHostileHostReplies(t *testing.T) {
	t.Parallel()
	screen, err := os.ReadFile(filepath.Join("..", "..", "golden", "real-codex", "codex-0.169-120-approval.pane"))
	if err != nil {
		t.Fatal(err)
	}
	shown := filepath.Join(t.TempDir(), "screen")
	if err := os.WriteFile(shown, bytes.TrimSuffix(screen, []byte("\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	s := testenv.Tmux(t)
	s.Run(t, "new-session", "-d", "-s", "agent", "-x", "120", "-y", "40", "cat "+coord.ShellQuote(shown)+"; exec sleep 3600")
	cfg := testenv.NewSSHConfig(t)
	host := testenv.HostileSSHD(t, cfg, "box", "HOME="+t.TempDir(), "OMEGA_MONITOR_MUX="+s.Mux, "LANG=C.UTF-8")
	r := startLoop(t, loopOptions{target: "box:agent", flags: []string{"--ssh-config", cfg.Path, "--interval", "1"}, timeout: 5})
	frame := filepath.Join(r.state, "poll", "pane")

	// next waits for a poll that began after now, and returns its line.
	next := func(t *testing.T) string {
		t.Helper()
		lines := r.waitLines(0, time.Second)
		polls := 0
		for _, l := range lines {
			if strings.Contains(l, "MONITOR · box:agent · ") {
				polls++
			}
		}
		// The poll under way may have begun before the answer changed:
		// the one after it.
		deadline := time.Now().Add(90 * time.Second)
		for {
			var mine []string
			for _, l := range r.waitLines(0, time.Second) {
				if strings.Contains(l, "MONITOR · box:agent · ") {
					mine = append(mine, l)
				}
			}
			if len(mine) >= polls+2 {
				return mine[len(mine)-1]
			}
			if time.Now().After(deadline) {
				t.Fatalf("no new poll in 90s:\n%s", strings.Join(mine, "\n"))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	honest := next(t)
	if !strings.Contains(honest, " · QUESTION · ") {
		t.Fatalf("the honest host's poll: %q, want the question on the real pane", honest)
	}
	// An answer sends the frame's first part as the host prints it, then
	// what attack prints.
	head := `sh -c "$SSH_ORIGINAL_COMMAND" | sed '/^\[omega-monitor:fg-end\]$/q'` + "\n"
	line76 := strings.Repeat("QUFB", 19)
	// Then the pane mark and the real pane.
	pane := "printf '%s\\n' '" + capture.PaneMark + "'; cat " + coord.ShellQuote(shown) + "\n"
	block := capture.CodexLogMark + "\n" + line76 + "\n" + capture.CodexLogEnd + "\n"
	tests := []struct {
		name   string
		answer string
		want   string // in the poll's line
	}{
		{"a reply that never ends", head + "yes '" + line76 + "'\n", "capture failed: capture frame: more than 16 MiB"},
		{"a reply that never ends, slowly", head + "while :; do printf '%s\\n' '" + line76 + "'; sleep 1; done\n", "capture failed: no answer within 5s"},
		{"a reply of 50 MB", head + "printf '%s\\n' '" + capture.CodexLogMark + "'; yes '" + line76 + "' | head -c 52428800\n" +
			"printf '\\n%s\\n' '" + capture.CodexLogEnd + "'\n" + pane, "capture failed: capture frame: more than 16 MiB"},
		{"5,000 Codex log blocks", head + "i=0; while [ $i -lt 5000 ]; do printf '%s' '" + block + "'; i=$((i + 1)); done\n" + pane, " · QUESTION · "},
		{"an honest one again", "", " · QUESTION · "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host.Answer(t, capture.PaneMark, tt.answer)
			start := time.Now()
			line := next(t)
			fi, err := os.Stat(frame)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: %q after %v; the frame on disk: %d bytes", tt.name, line, time.Since(start).Round(time.Second), fi.Size())
			if !strings.Contains(line, tt.want) {
				t.Errorf("the poll's line %q, want %q", line, tt.want)
			}
			if fi.Size() > capture.MaxFrame+1 {
				t.Errorf("the loop kept %d bytes of the frame, more than a byte past its cap", fi.Size())
			}
		})
	}
	for _, c := range host.Commands(t) {
		if strings.Contains(c, line76) {
			t.Errorf("the host was given what it sent: %.300q", c)
		}
	}
}
